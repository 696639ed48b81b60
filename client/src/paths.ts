/**
 * The paths the typed calls take: the service's own document (schema.ts) with
 * one operation told apart. `POST /v3.0/pinpoints` takes a JSON pinpoint and
 * answers that pinpoint, or takes a GeoJSON FeatureCollection
 * (`Content-Type: application/geo+json`) and answers the new ids; OpenAPI ties
 * an answer to its status and media type, not to the request's media type, so
 * the document can only say "either". The typed calls send JSON, so here that
 * POST is the single create, answering a `Pinpoint`; the import has calls of
 * its own (`importPinpoints`, `importGeoJSON` in ./index.ts).
 */
import type { components, operations, paths as documented } from "./schema.ts";

type Create = operations["createPinpoint"];

/** `POST /v3.0/pinpoints` with a JSON body: one pinpoint created, and answered. */
export type CreatePinpoint = Omit<Create, "requestBody" | "responses"> & {
  requestBody: { content: { "application/json": components["schemas"]["PinpointCreate"] } };
  responses: Omit<Create["responses"], 201> & {
    201: Omit<Create["responses"][201], "content"> & {
      content: { "application/json": components["schemas"]["Pinpoint"] };
    };
  };
};

/** Every path of the service, as the typed calls (`GET`, `POST`, … and `paginate`) take them. */
export type paths = Omit<documented, "/v3.0/pinpoints"> & {
  "/v3.0/pinpoints": Omit<documented["/v3.0/pinpoints"], "post"> & { post: CreatePinpoint };
};
