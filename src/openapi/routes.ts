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
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { RouterRoute } from "hono/types";
import { utf8 } from "../core/crypto";
import type { AppEnv } from "../core/env";
import { hidden, operation } from "../http/route-metadata";
import { openApiDocument } from "./document";

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
            description: "The OpenAPI document",
            mediaType: "application/json",
            headers: {
              "Cache-Control": {
                description: "`public, max-age=300` with a configured public origin, else `private, max-age=300`",
              },
            },
          },
        },
      })((c) => {
        const configured = c.var.config.publicOrigin;
        // Built from the request's Host, the document must not be shared: a cache that keys on something
        // else (Vary is ignored by many) would serve one requester's origin to everyone.
        c.header("Cache-Control", configured ? "public, max-age=300" : "private, max-age=300");
        return c.json(openApiDocument(routes(), configured ?? new URL(c.req.url).origin));
      }),
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
