/**
 * The API reference, public: GET /v3.0/openapi.json and the interactive page
 * at /docs (Swagger UI, where a developer authorizes with a client id and
 * secret and tries every operation). The page's script and styles are not in
 * the Worker: they are static assets copied from swagger-ui-dist by
 * scripts/docs-assets.ts, served by Workers static assets under /docs/, so the
 * page needs nothing from the internet.
 */
import { swaggerUI } from "@hono/swagger-ui";
import { Hono } from "hono";
import type { RouterRoute } from "hono/types";
import type { AppEnv } from "../core/env";
import { hidden, operation } from "../http/route-metadata";
import { openApiDocument } from "./document";

/** Where scripts/docs-assets.ts puts swagger-ui-dist's files (`<dir>/swagger-ui-dist/…`), as a URL path. */
export const DOCS_ASSETS_PATH = "/docs";

/** The reference routes; `routes` gives the app's route table, read when the document is first asked for. */
export const referenceRoutes = (routes: () => readonly RouterRoute[]) =>
  new Hono<AppEnv>()
    .get(
      "/v3.0/openapi.json",
      ...operation({
        summary: "This API's OpenAPI 3.1 document",
        description: "Public: no token needed. `servers` and the token URL name the origin it is fetched from.",
        operationId: "getOpenApiDocument",
        tags: ["reference"],
        responses: { 200: { description: "The OpenAPI document", mediaType: "application/json" } },
      })((c) => {
        c.header("Cache-Control", "public, max-age=300");
        return c.json(openApiDocument(routes(), new URL(c.req.url).origin));
      }),
    )
    .get(
      "/docs",
      hidden(
        swaggerUI({
          title: "POI content API reference",
          url: "/v3.0/openapi.json",
          baseUrl: DOCS_ASSETS_PATH,
          // No validator badge: it would send the document's URL to swagger.io.
          validatorUrl: "none",
          persistAuthorization: true,
          tryItOutEnabled: true,
          displayRequestDuration: true,
          requestSnippetsEnabled: true,
          filter: true,
        }),
      ),
    );
