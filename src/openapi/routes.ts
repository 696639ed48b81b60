/**
 * The API reference, public: GET /v3.0/openapi.json and the interactive page
 * at /docs (Swagger UI, where a developer authorizes with a client id and
 * secret and tries every operation). The page's script and styles are not in
 * the Worker: they are static assets copied from swagger-ui-dist by
 * scripts/static-assets.ts, served by Workers static assets under /docs/, so the
 * page needs nothing from the internet, and its Content-Security-Policy
 * allows scripts from this origin and the one inline script that starts
 * Swagger UI, by its hash.
 */
import { swaggerUI } from "@hono/swagger-ui";
import { Hono, type Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { RouterRoute } from "hono/types";
import { utf8 } from "../core/crypto";
import type { AppEnv } from "../core/env";
import { hidden, OPENAPI_MEDIA_TYPE, operation } from "../http/route-metadata";
import * as z from "zod";
import { openApiDocument, prefixedApiDocument, type OpenApiDocument } from "./document";

/** The document's schema, for the reference: an OpenAPI 3.1 object (its own schema is the specification's). */
const openApiObject = z.looseObject({ openapi: z.string().startsWith("3.1.") });

/** Where scripts/static-assets.ts puts swagger-ui-dist's files (`<dir>/swagger-ui-dist/…`), as a URL path. */
export const DOCS_ASSETS_PATH = "/docs";

/** The page's one inline script: it starts Swagger UI with our settings. */
const START_SWAGGER_UI = `window.onload = () => {
  window.ui = SwaggerUIBundle(${JSON.stringify({
    dom_id: "#swagger-ui",
    url: "/v3.0/openapi.json",
    // No validator badge: it would send the document's URL to swagger.io.
    validatorUrl: "none",
    persistAuthorization: true,
    tryItOutEnabled: true,
    displayRequestDuration: true,
    requestSnippetsEnabled: true,
    filter: true,
  })});
};`;

/**
 * Whether Accept asks for the OpenAPI media type (with any parameters, a q above 0): links that name it
 * (`service-desc`) get what they say; everyone else, `application/json` as before.
 */
function acceptsOpenApiType(accept: string | undefined): boolean {
  const [wanted, servedVersion] = OPENAPI_MEDIA_TYPE.split(";") as [string, string];
  return (accept ?? "").split(",").some((range) => {
    const [type = "", ...parameters] = range.split(";").map((part) => part.trim().toLowerCase());
    const q = parameters.find((p) => p.startsWith("q="));
    // A client asking for another version (GDAL 3.6 asks for `version=3.0`, else JSON) gets JSON, which it reads.
    const version = parameters.find((p) => p.startsWith("version="));
    return (
      type === wanted &&
      (q === undefined || Number(q.slice(2)) > 0) &&
      (version === undefined || version === servedVersion)
    );
  });
}

/** Serves a document for the public origin (or the request's): in the type Accept names, cached as its origin allows. */
function serveDocument(c: Context<AppEnv>, build: (origin: string) => OpenApiDocument) {
  const configured = c.var.config.publicOrigin;
  // Built from the request's Host, the document must not be shared: a cache that keys on something
  // else (Vary is ignored by many) would serve one requester's origin to everyone.
  c.header("Cache-Control", configured ? "public, max-age=300" : "private, max-age=300");
  c.header("Vary", "Accept", { append: true });
  const document = build(configured ?? new URL(c.req.url).origin);
  if (!acceptsOpenApiType(c.req.header("Accept"))) return c.json(document);
  return c.body(JSON.stringify(document), 200, { "Content-Type": OPENAPI_MEDIA_TYPE });
}

let policy: Promise<string> | undefined;

/**
 * The page's policy: scripts and styles from this origin and the inline script
 * above (by hash), inline style attributes (Swagger UI sets them), images
 * from here and `data:` (its icons), requests to this origin only (the
 * document, the token endpoint, tried operations); nothing else, no framing.
 */
async function docsPolicy(): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(START_SWAGGER_UI)));
  return [
    "default-src 'none'",
    `script-src 'self' 'sha256-${digest.toBase64()}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const docsSecurityPolicy = createMiddleware<AppEnv>(async function docsSecurityPolicy(c, next) {
  await next();
  c.res.headers.set("Content-Security-Policy", await (policy ??= docsPolicy()));
});

/** The reference routes; `routes` gives the app's route table, read when the document is first asked for. */
export const referenceRoutes = (routes: () => readonly RouterRoute[]) =>
  new Hono<AppEnv>()
    .get(
      "/v3.0/openapi.json",
      ...operation({
        summary: "This API's OpenAPI 3.1 document",
        description:
          "Public: no token needed. `servers` and the token URL name the configured public origin, or, " +
          "without one, the origin the document is fetched from.",
        operationId: "getOpenApiDocument",
        tags: ["reference"],
        responses: {
          200: {
            description: `The OpenAPI document: \`${OPENAPI_MEDIA_TYPE}\` when Accept names that type, else JSON`,
            content: { "application/json": openApiObject, "application/vnd.oai.openapi+json": openApiObject },
            headers: {
              Vary: { description: "`Accept`" },
              "Cache-Control": {
                description: "`public, max-age=300` with a configured public origin, else `private, max-age=300`",
              },
            },
          },
        },
      })((c) => serveDocument(c, (origin) => openApiDocument(routes(), origin))),
    )
    .get(
      "/docs",
      hidden(docsSecurityPolicy),
      hidden(
        swaggerUI({
          title: "POI content API reference",
          url: "/v3.0/openapi.json",
          manuallySwaggerUIHtml: ({ css, js }) => `
            <div id="swagger-ui"></div>
            ${css.map((href) => `<link rel="stylesheet" href="${href}" />`).join("")}
            ${js.map((src) => `<script src="${src}"></script>`).join("")}
            <script>${START_SWAGGER_UI}</script>`,
          baseUrl: DOCS_ASSETS_PATH,
        }),
      ),
    );

/**
 * The handler of the definition of the API under `prefix` alone (the OGC API's, at /ogc/api, the
 * `service-desc` of its landing page): src/ogc/routes.ts declares the route, app.ts gives it this.
 */
export const prefixedDocumentHandler = (routes: () => readonly RouterRoute[], prefix: string) => (c: Context<AppEnv>) =>
  serveDocument(c, (origin) => prefixedApiDocument(routes(), origin, prefix));
