/**
 * Builds the Hono app: request id, security headers, request log,
 * configuration, CORS and a D1 session (http/d1-session.ts) on every request; the reference, the token endpoint
 * and the public media route; then one authenticated sub-app per resource
 * (see auth/resource-app.ts), the OGC API and the map page, and the error handlers. Wiring only; behaviour
 * lives in the modules it mounts.
 */
import { Hono } from "hono";
import { cors } from "hono/cors";
import type { RouterRoute } from "hono/types";
import { tokenRoutes } from "./auth/token-route";
import { categoryToJson } from "./categories/json";
import { categoryRoutes } from "./categories/routes";
import { changeRoutes, type ObjectJson } from "./changes/routes";
import type { AppEnv } from "./core/env";
import { eventToJson } from "./events/json";
import { eventRoutes } from "./events/routes";
import { withConfig } from "./http/config";
import { BOOKMARK_HEADER } from "./http/bookmark-header";
import { d1Session } from "./http/d1-session";
import { notFound, onError } from "./http/errors";
import { requestLog } from "./http/logging";
import { requestId } from "./http/request-id";
import { securityHeaders } from "./http/security-headers";
import { requireSigningKey } from "./http/signing-key-check";
import { keyRoutes } from "./keys/routes";
import { listToJson } from "./lists/json";
import { listRoutes } from "./lists/routes";
import { mapRoutes } from "./maps/routes";
import { mediaRoutes } from "./media/routes";
import { mediaUrls } from "./media/url";
import { prefixedDocumentHandler, referenceRoutes } from "./openapi/routes";
import { ogcDefinitionRoutes, ogcRoutes, OGC_PREFIX } from "./ogc/routes";
import { rejectUnknownQueryParameters } from "./http/query-parameters";
import { pinpointToJson } from "./pinpoints/json";
import { pinpointRoutes } from "./pinpoints/routes";
import { tileJsonRoutes, tileRoutes } from "./tiles/routes";
import type { ObjectsJson } from "./webhooks/deliver";
import { nudgeWebhooks, webhookRoutes } from "./webhooks/routes";

const corsPolicy = cors({
  origin: (origin, c) => {
    const allowed = (c as unknown as { var: AppEnv["Variables"] }).var.config.corsOrigins;
    return allowed.includes("*") ? "*" : allowed.includes(origin) ? origin : null;
  },
  allowMethods: ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"],
  // Conditional and range headers let a script fetch public media as efficiently as an <img>;
  // If-Match makes a browser client's writes conditional, and the D1 bookmark gives it read-your-writes
  // (docs/offline-and-concurrency.md).
  allowHeaders: [
    "Authorization",
    "Content-Type",
    "X-Request-Id",
    "Prefer",
    "If-None-Match",
    "If-Match",
    "Idempotency-Key",
    BOOKMARK_HEADER,
    "Range",
    "If-Range",
  ],
  exposeHeaders: [
    "Location",
    "X-Request-Id",
    "WWW-Authenticate",
    "Allow",
    "Preference-Applied",
    "ETag",
    "Content-Range",
    "Accept-Ranges",
    "Retry-After",
    "RateLimit",
    "RateLimit-Policy",
    "Idempotent-Replayed",
    BOOKMARK_HEADER,
  ],
  maxAge: 86_400,
});

/** Webhook payloads show upserted objects as each resource's GET does, media URLs included. */
export const objectsJson: ObjectsJson = (mediaUrl) => ({
  pinpoint: (row) => pinpointToJson(row, mediaUrl),
  list: listToJson,
  category: (row) => categoryToJson(row, mediaUrl),
  event: (row) => eventToJson(row, mediaUrl),
});

/** The change feed shows upserted objects (`include=objects`) the same way, on the request's origin. */
const objectJson: ObjectJson = (c) => objectsJson(mediaUrls(c));

/** The app's route table, for the OpenAPI document; read on the first request, once the app exists. */
const appRoutes = (): readonly RouterRoute[] => app.routes;

export const app = new Hono<AppEnv>({ strict: false })
  // The signing key check after CORS, so a browser can read the 503 of a service without its key.
  .use(requestId, securityHeaders, requestLog, withConfig, corsPolicy, requireSigningKey, d1Session)
  // Before the routes, so a misspelt parameter is refused before any auth or database work.
  .use(rejectUnknownQueryParameters("/v3.0/"))
  // After every successful write, the account's webhooks are told (src/webhooks/routes.ts).
  .use(nudgeWebhooks)
  // Public: the OpenAPI document and the reference page, built from this app's own routes.
  .route("/", referenceRoutes(appRoutes))
  .route("/v3.0/oauth2/token", tokenRoutes)
  // Public: media URLs carry no token, so an <img> can load them.
  .route("/media", mediaRoutes)
  .route("/v3.0/pinpoints", pinpointRoutes)
  .route("/v3.0/lists", listRoutes)
  .route("/v3.0/categories", categoryRoutes)
  .route("/v3.0/events", eventRoutes)
  .route("/v3.0/changes", changeRoutes(objectJson))
  .route("/v3.0/keys", keyRoutes)
  .route("/v3.0/webhooks", webhookRoutes)
  .route("/v3.0/tiles", tileRoutes)
  .route("/v3.0/tiles.json", tileJsonRoutes)
  .route(OGC_PREFIX, ogcRoutes)
  // After the OGC routes, whose token check and parameter rules it shares.
  .route(OGC_PREFIX, ogcDefinitionRoutes(prefixedDocumentHandler(appRoutes, OGC_PREFIX)))
  // Public with a publishable key: the live map of a list, a page for an <iframe>.
  .route("/maps", mapRoutes);

app.onError(onError);
app.notFound(notFound(app.routes));
