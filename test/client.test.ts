/**
 * The typed client (client/) inside workerd, as a Worker would use it: its
 * requests go to this Worker's own fetch. scripts/test-client.ts tests it in
 * depth on Node; this proves it needs nothing Node has and workerd lacks.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ApiError, createPoiClient, ifMatch } from "../client/src/index.ts";
import { BASE, createClient, nextAddress } from "./helpers";

async function workerClient() {
  const { clientId, clientSecret } = await createClient();
  return createPoiClient({
    baseUrl: BASE,
    credentials: { clientId, clientSecret },
    fetch: (request) => {
      // Each test client is its own host to the token endpoint's per-address limit (test/helpers.ts).
      const headers = new Headers(request.headers);
      headers.set("CF-Connecting-IP", nextAddress());
      return exports.default.fetch(new Request(request, { headers }));
    },
  });
}

describe("the typed client in a Worker", () => {
  it("fetches a token, creates, pages, imports and writes conditionally", async () => {
    const poi = await workerClient();
    const { data: created, response } = await poi.POST("/v3.0/pinpoints", {
      body: { name: "In a Worker", latitude: 10, longitude: 20 },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("Idempotent-Replayed")).toBeNull();
    const ids = await poi.importGeoJSON(
      new Blob([
        JSON.stringify({
          type: "FeatureCollection",
          features: Array.from({ length: 5 }, (_, i) => ({
            type: "Feature",
            geometry: { type: "Point", coordinates: [i, i] },
            properties: { name: `Streamed ${i}` },
          })),
        }),
      ]),
      { batchSize: 2 },
    );
    expect(ids).toHaveLength(5);
    const paged = [];
    for await (const pinpoint of poi.paginate("/v3.0/pinpoints", { params: { query: { limit: 2 } } })) {
      paged.push(pinpoint.id);
    }
    expect(paged).toEqual([created && "id" in created ? created.id : -1, ...ids]);

    const params = { path: { id: ids[0]! } };
    const read = await poi.GET("/v3.0/pinpoints/{id}", { params });
    await poi.PUT("/v3.0/pinpoints/{id}", { params: { ...params, header: ifMatch(read) }, body: { name: "First" } });
    const stale = await poi.PUT("/v3.0/pinpoints/{id}", {
      params: { ...params, header: ifMatch(read) },
      body: { name: "Second" },
    });
    expect(stale.response.status).toBe(412);
  });

  it("throws the service's problem when an import batch is refused", async () => {
    const poi = await workerClient();
    const refused = poi.importGeoJSON([
      { type: "Feature", geometry: { type: "Point", coordinates: [0, 95] }, properties: {} },
    ]);
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ status: 400, firstFeature: 0 });
  });
});
