/**
 * Builds the Hono app: the middleware every request goes through, the
 * reference, the token endpoint and the public media route; then one
 * authenticated sub-app per resource (auth/resource-app.ts), the OGC API and
 * the map page, and the error handlers. Wiring only; behaviour lives in the
 * modules it mounts.
 *
 * The middleware in the order a request meets it (one file each in
 * http/middleware/ unless named otherwise):
 *   on every request, here:
 *     request-id.ts          `X-Request-Id`, sent or made
 *     security-headers.ts    OWASP secure headers
 *     request-log.ts         one JSON log line per request
 *     config.ts              the deploy's configuration in `c.var.config`
 *   then the operator routes (operator/routes.ts), which need none of what follows, and
 *     cors.ts                CORS on the configured origins
 *     signing-key-check.ts   one 503 while TOKEN_SIGNING_KEY is unusable
 *     allowed-methods.ts     405 with `Allow` for a method the path does not take
 *     d1-session.ts          `d1Session`: the request's D1 session and its sealed bookmark
 *     query-parameters.ts    400 for an unknown query parameter under /v3.0/
 *     webhooks/routes.ts     `nudgeWebhooks`: after a write, the account's webhooks are told
 *   in each resource's sub-app (auth/resource-app.ts):
 *     rate-limit.ts          `clientRatePolicy`: the RateLimit-Policy header
 *     auth/bearer.ts         `requireToken`: the access token or publishable key
 *     d1-session.ts          `checkBookmark`: 400 for an `X-D1-Bookmark` this service did not issue
 *     rate-limit.ts          `clientRateLimit`: the caller's limit, 429 over it
 *     public-cache.ts        answers to publishable keys from the Cache API
 *     http/body.ts           `jsonBody`: JSON only, within the route's byte limit
 *     idempotency.ts         `Idempotency-Key` on POST
 */
import { Hono } from "hono";
import type { RouterRoute } from "hono/types";
import { tokenRoutes } from "./auth/token-route";
import { categoryToJson } from "./categories/json";
import { categoryRoutes } from "./categories/routes";
import { changeRoutes, type ObjectJson } from "./changes/routes";
import type { AppEnv } from "./core/env";
import { eventToJson } from "./events/json";
import { eventRoutes } from "./events/routes";
import { checkMethod } from "./http/middleware/allowed-methods";
import { withConfig } from "./http/middleware/config";
import { corsPolicy } from "./http/middleware/cors";
import { d1Session } from "./http/middleware/d1-session";
import { notFound, onError } from "./http/errors";
import { requestLog } from "./http/middleware/request-log";
import { requestId } from "./http/middleware/request-id";
import { securityHeaders } from "./http/middleware/security-headers";
import { requireSigningKey } from "./http/middleware/signing-key-check";
import { keyRoutes } from "./keys/routes";
import { listToJson } from "./lists/json";
import { listRoutes } from "./lists/routes";
import { mapRoutes } from "./maps/routes";
import { mediaRoutes } from "./media/routes";
import { mediaUrls } from "./media/url";
import { prefixedDocumentHandler, referenceRoutes } from "./openapi/routes";
import { ogcDefinitionRoutes, ogcRoutes, OGC_PREFIX } from "./ogc/routes";
import { operatorRoutes } from "./operator/routes";
import { rejectUnknownQueryParameters } from "./http/middleware/query-parameters";
import { authRoutes, personRoutes } from "./people/routes";
import { clientRoutes } from "./people/clients/routes";
import { collaboratorRoutes } from "./people/collaborators/routes";
import { acceptRoutes, invitationRoutes } from "./people/invitations/routes";
import { memberRoutes } from "./people/members/routes";
import { pinpointToJson } from "./pinpoints/json";
import { pinpointRoutes } from "./pinpoints/routes";
import { tileJsonRoutes, tileRoutes } from "./tiles/routes";
import type { ObjectsJson } from "./webhooks/deliver";
import { nudgeWebhooks, webhookRoutes } from "./webhooks/routes";

/** Webhook payloads show upserted objects as each resource's GET does, media URLs and actors included. */
export const objectsJson: ObjectsJson = (mediaUrl, actors) => ({
  pinpoint: (row) => pinpointToJson(row, mediaUrl, actors),
  list: (row) => listToJson(row, actors),
  category: (row) => categoryToJson(row, mediaUrl, actors),
  event: (row) => eventToJson(row, mediaUrl, actors),
});

/** The change feed shows upserted objects (`include=objects`) the same way, on the request's origin. */
const objectJson: ObjectJson = (c, actors) => objectsJson(mediaUrls(c), actors);

/** The app's route table, for the OpenAPI document; read on the first request, once the app exists. */
const appRoutes = (): readonly RouterRoute[] => app.routes;
const isOperatorRoute = (route: RouterRoute) => route.path.startsWith("/operator");
const apiRoutes = (): readonly RouterRoute[] => appRoutes().filter((route) => !isOperatorRoute(route));
const operatorRouteTable = (): readonly RouterRoute[] => appRoutes().filter(isOperatorRoute);

export const app = new Hono<AppEnv>({ strict: false })
  .use(requestId, securityHeaders, requestLog, withConfig)
  // For operators' tools, not browsers (no CORS), on the databases' own bindings (no D1 session).
  .route("/operator", operatorRoutes)
  // After the operator secret (operator/auth.ts): only the operator learns which methods a path takes.
  .use("/operator/*", checkMethod(operatorRouteTable))
  // The signing key check after CORS, so a browser can read the 503 of a service without its key.
  .use(corsPolicy, requireSigningKey)
  // Before the credentials, the session and the query: a method the path does not take has no operation to
  // check. Not for /operator, whose paths stay unknown (404) to anyone without the operator secret.
  .use(checkMethod(apiRoutes), d1Session)
  // Before the routes, so a misspelt parameter is refused before any auth or database work.
  .use(rejectUnknownQueryParameters("/v3.0/"))
  // After every successful write, the account's webhooks are told (src/webhooks/routes.ts).
  .use(nudgeWebhooks)
  // Public: the OpenAPI document and the reference page, built from this app's own routes.
  .route("/", referenceRoutes(appRoutes))
  .route("/v3.0/oauth2/token", tokenRoutes)
  // Signing in and the signed-in person: with the session cookie, not a token (src/people/sessions.ts).
  .route("/v3.0/auth", authRoutes)
  .route("/v3.0/me", personRoutes)
  // Public: media URLs carry no token, so an <img> can load them.
  .route("/media", mediaRoutes)
  .route("/v3.0/pinpoints", pinpointRoutes)
  .route("/v3.0/lists", listRoutes)
  // Behind the lists' middleware, registered just before: a list's collaborators are a part of the list.
  .route("/v3.0/lists", collaboratorRoutes)
  .route("/v3.0/categories", categoryRoutes)
  .route("/v3.0/events", eventRoutes)
  .route("/v3.0/changes", changeRoutes(objectJson))
  .route("/v3.0/keys", keyRoutes)
  .route("/v3.0/webhooks", webhookRoutes)
  .route("/v3.0/members", memberRoutes)
  .route("/v3.0/clients", clientRoutes)
  // Before the invitations' sub-app, whose token check it must not run: the person accepting may have none.
  .route("/v3.0/invitations/accept", acceptRoutes)
  .route("/v3.0/invitations", invitationRoutes)
  .route("/v3.0/tiles", tileRoutes)
  .route("/v3.0/tiles.json", tileJsonRoutes)
  .route(OGC_PREFIX, ogcRoutes)
  // After the OGC routes, whose token check and parameter rules it shares.
  .route(OGC_PREFIX, ogcDefinitionRoutes(prefixedDocumentHandler(appRoutes, OGC_PREFIX)))
  // Public with a publishable key: the live map of a list, a page for an <iframe>.
  .route("/maps", mapRoutes);

app.onError(onError);
app.notFound(notFound);
