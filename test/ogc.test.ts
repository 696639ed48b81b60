/**
 * OGC API – Features Part 1, Core and GeoJSON: one test per requirement (its
 * id in the test's name; docs/ogc.md maps each to this file), run against the
 * Worker with real D1.
 */
import { describe, expect, it } from "vitest";
import { BASE, call, caller, createList, createPinpoint, json, type Caller } from "./helpers";
import { geojsonProblems } from "./geojson-check";

type Link = { href: string; rel: string; type: string };
type Collection = { id: string; title: string; description: string; links: Link[]; extent: unknown; itemType: string };
type Feature = {
  type: string;
  id: number;
  geometry: { coordinates: number[] } | null;
  properties: Record<string, unknown>;
  links: Link[];
};
type Items = { type: string; features: Feature[]; links: Link[]; numberReturned: number; timeStamp: string };

const linkOf = (links: Link[], rel: string) => links.find((l) => l.rel === rel);
const path = (href: string) => href.replace(BASE, "");

async function ok<T>(who: Caller, url: string, type = "application/json"): Promise<T> {
  const response = await who.get(url);
  const body = await json<T>(response);
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(response.headers.get("Content-Type")).toMatch(new RegExp(`^${type.replace("+", "\\+")}`));
  return body;
}

async function withPlaces() {
  const a = await caller();
  const places = [];
  for (let i = 1; i <= 5; i++) places.push(await createPinpoint(a, { name: `P${i}`, latitude: -i, longitude: i * 10 }));
  const list = await createList(a, { name: "Favourites" });
  await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: places[1]!.id }, { id: places[3]!.id }]);
  const event = await a.send("POST", "/v3.0/events", {
    name: "Fair",
    pinpoint: places[0]!.id,
    dates: [{ start: "2026-06-01T10:00:00Z", end: "2026-06-01T18:00:00Z" }],
  });
  expect(event.status).toBe(201);
  return { a, places, list, event: await json<{ id: number }>(event) };
}

describe("OGC API – Features, Core", () => {
  it("/req/core/root-op, root-success: the landing page links the API definition, conformance and data", async () => {
    const a = await caller();
    const landing = await ok<{ title: string; links: Link[] }>(a, "/ogc");
    expect(landing.title).toBeTruthy();
    for (const rel of ["self", "service-desc", "service-doc", "conformance", "data"]) {
      expect(linkOf(landing.links, rel), rel).toBeDefined();
      expect(linkOf(landing.links, rel)!.type, rel).toBeTruthy();
    }
    expect(path(linkOf(landing.links, "conformance")!.href)).toBe("/ogc/conformance");
    expect(path(linkOf(landing.links, "data")!.href)).toBe("/ogc/collections");
  });

  it("/req/core/api-definition-op, api-definition-success: the linked definitions answer GET in their type", async () => {
    const a = await caller();
    const landing = await ok<{ links: Link[] }>(a, "/ogc");
    const desc = linkOf(landing.links, "service-desc")!;
    expect(path(desc.href)).toBe("/ogc/api");
    const document = await a.get(path(desc.href), { Accept: desc.type });
    expect(document.status).toBe(200);
    expect(document.headers.get("Content-Type")).toBe(desc.type);
    type Parameter = { name: string; in: string };
    const openapi = await json<{
      openapi: string;
      servers: { url: string }[];
      paths: Record<string, { get: { parameters?: Parameter[] } }>;
    }>(document);
    expect(openapi.openapi).toMatch(/^3\.1/);
    // The OGC API alone, its paths relative to its landing page: where GDAL's OAPIF driver looks up the
    // items' query parameters (`/collections/{collectionId}/items`) to send its -where filters.
    expect(openapi.servers).toEqual([{ url: `${BASE}/ogc` }]);
    expect(Object.keys(openapi.paths).sort()).toEqual([
      "/",
      "/api",
      "/collections",
      "/collections/{collectionId}",
      "/collections/{collectionId}/items",
      "/collections/{collectionId}/items/{featureId}",
      "/collections/{collectionId}/queryables",
      "/collections/{collectionId}/schema",
      "/conformance",
    ]);
    const itemParameters = openapi.paths["/collections/{collectionId}/items"]!.get.parameters!;
    for (const name of ["category", "tags", "pinpoint"]) {
      expect(itemParameters.find((p) => p.name === name)?.in, name).toBe("query");
    }
    // GDAL 3.6 asks for version 3.0 of the OpenAPI type, else JSON: it gets JSON, not a 3.1 it refuses.
    const gdalAccept =
      "application/vnd.oai.openapi+json;version=3.0, application/openapi+json;version=3.0, application/json";
    const asGdal = await a.get("/ogc/api", { Accept: gdalAccept });
    expect(asGdal.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect((await call("/ogc/api")).status).toBe(401);
    const doc = linkOf(landing.links, "service-doc")!;
    const page = await call(path(doc.href), { headers: { Accept: doc.type } });
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toMatch(/^text\/html/);
  });

  it("/req/core/conformance-op, conformance-success: Core, GeoJSON and Part 3's queryables are declared", async () => {
    const a = await caller();
    const body = await ok<{ conformsTo: string[] }>(a, "/ogc/conformance");
    expect(body.conformsTo).toEqual([
      "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
      "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
      "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables",
      "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables-query-parameters",
    ]);
  });

  it("/req/core/http: HEAD, 405 with Allow, and 401 without a token", async () => {
    const a = await caller();
    expect((await call("/ogc/collections")).status).toBe(401);
    const head = await call("/ogc/collections", { method: "HEAD", headers: { Authorization: `Bearer ${a.token}` } });
    expect(head.status).toBe(200);
    const post = await a.send("POST", "/ogc/collections", {});
    expect(post.status).toBe(405);
    expect(post.headers.get("Allow")).toContain("GET");
  });

  it("/req/core/fc-md-op, fc-md-success, fc-md-items, fc-md-links, fc-md-items-links, fc-md-extent: every collection of the caller, none of others", async () => {
    const { a, list } = await withPlaces();
    const other = await caller();
    const theirs = await createList(other, { name: "Not yours" });
    const body = await ok<{ links: Link[]; collections: Collection[] }>(a, "/ogc/collections");
    expect(linkOf(body.links, "self")).toMatchObject({ type: "application/json" });
    expect(body.collections.map((c) => c.id)).toEqual(["pinpoints", "events", `list-${list.id}`]);
    expect(body.collections.map((c) => c.id)).not.toContain(`list-${theirs.id}`);
    for (const collection of body.collections) {
      expect(linkOf(collection.links, "items")).toMatchObject({
        href: `${BASE}/ogc/collections/${collection.id}/items`,
        type: "application/geo+json",
      });
      expect(collection.itemType).toBe("feature");
      expect(collection.extent).toEqual({
        spatial: { bbox: [[-180, -90, 180, 90]], crs: "http://www.opengis.net/def/crs/OGC/1.3/CRS84" },
      });
    }
    expect(body.collections[2]!.title).toBe("Favourites");
  });

  it("/req/core/sfc-md-op, sfc-md-success: each collection alone is what /collections says; others' are 404", async () => {
    const { a, list } = await withPlaces();
    const all = await ok<{ collections: Collection[] }>(a, "/ogc/collections");
    for (const collection of all.collections) {
      expect(await ok<Collection>(a, `/ogc/collections/${collection.id}`)).toEqual(collection);
    }
    const other = await caller();
    expect((await other.get(`/ogc/collections/list-${list.id}`)).status).toBe(404);
    expect((await a.get("/ogc/collections/nothing")).status).toBe(404);
  });

  it("/req/core/fc-op, fc-response, fc-links, fc-rel-type, fc-numberReturned, fc-timeStamp: items pages reach every feature once", async () => {
    const { a, places } = await withPlaces();
    const seen: number[] = [];
    let url: string | undefined = "/ogc/collections/pinpoints/items?limit=2";
    let pages = 0;
    while (url) {
      const before = Date.now();
      const page: Items = await ok<Items>(a, url, "application/geo+json");
      expect(geojsonProblems(page)).toEqual([]);
      expect(page.numberReturned).toBe(page.features.length);
      expect(Date.parse(page.timeStamp)).toBeGreaterThanOrEqual(before - 1000);
      expect(linkOf(page.links, "self")!.type).toBe("application/geo+json");
      for (const l of page.links) expect(l.type, l.rel).toBeTruthy();
      seen.push(...page.features.map((f) => f.id));
      url = linkOf(page.links, "next")?.href;
      if (url) url = path(url);
      if (pages > 0) expect(linkOf(page.links, "prev")).toBeDefined();
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(places.map((p) => p.id));
  });

  it("/req/core/fc-limit-definition, fc-limit-response-1: at most limit features, larger limits clipped not refused", async () => {
    const { a } = await withPlaces();
    expect(
      (await ok<Items>(a, "/ogc/collections/pinpoints/items?limit=3", "application/geo+json")).features,
    ).toHaveLength(3);
    expect(
      (await ok<Items>(a, "/ogc/collections/pinpoints/items?limit=999999", "application/geo+json")).features,
    ).toHaveLength(5);
    expect((await ok<Items>(a, "/ogc/collections/pinpoints/items", "application/geo+json")).features).toHaveLength(5);
  });

  it("/req/core/query-param-unknown: an unknown parameter is a 400 naming it", async () => {
    const { a } = await withPlaces();
    for (const url of [
      "/ogc?x=1",
      "/ogc/conformance?f=xml",
      "/ogc/collections?bbox=1",
      "/ogc/api?x=1",
      "/ogc/collections/pinpoints/items?lmit=2",
    ]) {
      const response = await a.get(url);
      expect(response.status, url).toBe(400);
      const body = await json<{ errors: { parameter: string }[] }>(response);
      expect(body.errors.map((e) => e.parameter)).toEqual([new URL(url, BASE).searchParams.keys().next().value]);
    }
    // The token in the query is not an unknown parameter (RFC 6750 §2.3).
    const viaQuery = await call(`/ogc/collections/pinpoints/items?access_token=${a.token}`);
    expect(viaQuery.status).toBe(200);
  });

  it("a list collection gives its members in the list's order, the order they were added in until reordered, and says so", async () => {
    const a = await caller();
    const places = [];
    for (let i = 1; i <= 3; i++) places.push(await createPinpoint(a, { name: `L${i}`, latitude: i, longitude: i }));
    const list = await createList(a, { name: "Tour" });
    for (const place of [...places].reverse()) {
      await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: place.id }]);
    }
    const items = await ok<Items>(a, `/ogc/collections/list-${list.id}/items`, "application/geo+json");
    expect(items.features.map((f) => f.id)).toEqual(places.map((p) => p.id).reverse());
    const [first, second, third] = places.map((p) => p.id);
    const moved = await a.send("PUT", `/v3.0/lists/${list.id}/pinpoints/order`, { move: first, before: third });
    expect(moved.status).toBe(200);
    const reordered = await ok<Items>(a, `/ogc/collections/list-${list.id}/items`, "application/geo+json");
    expect(reordered.features.map((f) => f.id)).toEqual([first, third, second]);
    const collection = await ok<Collection>(a, `/ogc/collections/list-${list.id}`);
    expect(collection.description).toContain("in the list's order");
  });

  it("each collection links (describedby) to the JSON Schema of its properties: category is an integer", async () => {
    const { a } = await withPlaces();
    const { collections } = await ok<{ collections: Collection[] }>(a, "/ogc/collections");
    for (const collection of collections) {
      const described = linkOf(collection.links, "describedby");
      expect(described?.type, collection.id).toBe("application/schema+json");
      const schema = await ok<{ type: string; properties: Record<string, { type: string; format?: string }> }>(
        a,
        path(described!.href),
        "application/schema+json",
      );
      expect(schema.type).toBe("object");
      if (collection.id === "events") expect(schema.properties.pinpoint?.type).toBe("integer");
      else expect(schema.properties.category?.type).toBe("integer");
      expect(schema.properties.name?.type).toBe("string");
      expect(schema.properties.tags?.type).toBe("array");
      expect(schema.properties.created_at).toMatchObject({ type: "string", format: "date-time" });
      // What the geometry and the feature id carry is not a property.
      expect(Object.keys(schema.properties)).not.toContain("latitude");
    }
    expect((await a.get("/ogc/collections/list-999999/schema")).status).toBe(404);
  });

  it("f=json, as browser clients send it, is accepted on every route; f=geojson where features are served", async () => {
    const { a } = await withPlaces();
    for (const url of ["/ogc", "/ogc/conformance", "/ogc/collections", "/ogc/collections/pinpoints"]) {
      await ok(a, `${url}?f=json`);
      expect((await a.get(`${url}?f=geojson`)).status, url).toBe(400);
    }
    const items = await ok<Items>(a, "/ogc/collections/pinpoints/items?f=json&limit=2", "application/geo+json");
    await ok(a, "/ogc/collections/pinpoints/items?f=geojson", "application/geo+json");
    await ok(a, `/ogc/collections/pinpoints/items/${items.features[0]!.id}?f=geojson`, "application/geo+json");
    const next = linkOf(items.links, "next");
    expect(next).toBeDefined();
    await ok(a, path(next!.href), "application/geo+json");
  });

  it("/req/core/query-param-invalid: a bad value is a 400", async () => {
    const { a } = await withPlaces();
    for (const query of ["limit=0", "limit=-1", "limit=x", "datetime=yesterday", "datetime=../..", "cursor=abc"]) {
      expect((await a.get(`/ogc/collections/pinpoints/items?${query}`)).status, query).toBe(400);
    }
  });

  it("/req/core/fc-bbox-definition, fc-bbox-response: exactly the features in the box (brute force), paged, 4 or 6 numbers", async () => {
    const a = await caller();
    const features = Array.from({ length: 60 }, (_, i) => ({
      type: "Feature",
      geometry: { type: "Point", coordinates: [((i * 37) % 360) - 180, ((i * 23) % 180) - 90] },
      properties: { name: `B${i}` },
    }));
    const imported = await a.send(
      "POST",
      "/v3.0/pinpoints",
      { type: "FeatureCollection", features },
      {
        "Content-Type": "application/geo+json",
      },
    );
    const { ids } = await json<{ ids: number[] }>(imported);
    const list = await createList(a);
    await a.send(
      "POST",
      `/v3.0/lists/${list.id}/pinpoints`,
      ids.filter((_, i) => i % 2 === 0).map((id) => ({ id })),
    );
    const boxes: [number, number, number, number][] = [
      [-100, -50, 40, 30],
      [170, -90, -150, 90],
      [-180, -90, 180, 90],
      [0, 0, 1, 1],
    ];
    for (const [minLon, minLat, maxLon, maxLat] of boxes) {
      const inside = (i: number) => {
        const [lon, lat] = features[i]!.geometry.coordinates as [number, number];
        const lonIn = minLon <= maxLon ? lon >= minLon && lon <= maxLon : lon >= minLon || lon <= maxLon;
        return lonIn && lat >= minLat && lat <= maxLat;
      };
      for (const [collection, members] of [
        ["pinpoints", ids.map((_, i) => i)],
        [`list-${list.id}`, ids.map((_, i) => i).filter((i) => i % 2 === 0)],
      ] as const) {
        const seen: number[] = [];
        let url: string | undefined =
          `/ogc/collections/${collection}/items?limit=7&bbox=${minLon},${minLat},${maxLon},${maxLat}`;
        while (url) {
          const page: Items = await ok<Items>(a, url, "application/geo+json");
          seen.push(...page.features.map((f) => f.id));
          url = linkOf(page.links, "next")?.href;
          if (url) url = path(url);
        }
        expect(seen, `${collection} ${minLon},${minLat},${maxLon},${maxLat}`).toEqual(
          members.filter(inside).map((i) => ids[i]),
        );
      }
    }
    const six = await ok<Items>(
      a,
      "/ogc/collections/pinpoints/items?bbox=-100,-50,-10,40,30,10&limit=1000",
      "application/geo+json",
    );
    const four = await ok<Items>(
      a,
      "/ogc/collections/pinpoints/items?bbox=-100,-50,40,30&limit=1000",
      "application/geo+json",
    );
    expect(six.features.map((f) => f.id)).toEqual(four.features.map((f) => f.id));
    for (const bad of ["1,2,3", "0,0,200,1", "0,50,1,10", "a,b,c,d"]) {
      expect((await a.get(`/ogc/collections/pinpoints/items?bbox=${bad}`)).status, bad).toBe(400);
    }
  });

  it("/req/core/fc-time-definition, fc-time-response: events whose occurrences meet the instant or interval (brute force)", async () => {
    const a = await caller();
    const place = await createPinpoint(a, { latitude: 10, longitude: -10 });
    const day = (d: number, h = 0) => new Date(Date.UTC(2026, 5, d, h)).toISOString();
    const dated = [
      [[day(1, 10), day(1, 12)]],
      [
        [day(2, 0), day(3, 0)],
        [day(10, 0), day(10, 1)],
      ],
      [[day(5, 8), day(5, 8)]],
      [[day(20, 0), day(25, 0)]],
    ];
    const ids: number[] = [];
    for (const dates of dated) {
      const response = await a.send("POST", "/v3.0/events", {
        name: "E",
        pinpoint: place.id,
        dates: dates.map(([start, end]) => ({ start, end })),
      });
      ids.push((await json<{ id: number }>(response)).id);
    }
    const meets = (i: number, from: number, to: number) =>
      dated[i]!.some(
        ([s, e]) => Date.parse(s!) <= to && (Date.parse(e!) > from || (Date.parse(s!) >= from && Date.parse(s!) <= to)),
      );
    const cases: [string, number, number][] = [
      [day(1, 11), Date.parse(day(1, 11)), Date.parse(day(1, 11))],
      [`${day(2, 12)}/${day(10, 0)}`, Date.parse(day(2, 12)), Date.parse(day(10, 0))],
      [`../${day(5, 8)}`, -Infinity, Date.parse(day(5, 8))],
      [`${day(6)}/..`, Date.parse(day(6)), Infinity],
      [`${day(12)}/`, Date.parse(day(12)), Infinity],
      [day(1, 12), Date.parse(day(1, 12)), Date.parse(day(1, 12))],
    ];
    for (const [datetime, from, to] of cases) {
      const page = await ok<Items>(
        a,
        `/ogc/collections/events/items?datetime=${encodeURIComponent(datetime)}`,
        "application/geo+json",
      );
      const expected = ids.filter((_, i) => meets(i, from, to));
      expect(
        page.features.map((f) => f.id).sort((x, y) => x - y),
        datetime,
      ).toEqual(expected);
      for (const f of page.features) expect(f.geometry!.coordinates).toEqual([-10, 10]);
    }
  });

  it("/req/core/fc-time-definition, fc-time-response: pinpoints have no time, so every datetime matches them all", async () => {
    const { a } = await withPlaces();
    for (const datetime of [
      "2026-01-01T00:00:00Z",
      "2026-01-01T00:00:00Z/..",
      "../2026-01-01T00:00:00+02:00",
      "/2020-01-01T00:00:00Z",
    ]) {
      const page = await ok<Items>(
        a,
        `/ogc/collections/pinpoints/items?datetime=${encodeURIComponent(datetime)}`,
        "application/geo+json",
      );
      expect(page.features, datetime).toHaveLength(5);
    }
  });

  it("/req/core/f-op, f-success, f-links, /req/geojson/content B: a feature by id, with self and collection links", async () => {
    const { a, places, list, event } = await withPlaces();
    const feature = await ok<Feature>(a, `/ogc/collections/pinpoints/items/${places[2]!.id}`, "application/geo+json");
    expect(geojsonProblems(feature)).toEqual([]);
    expect(feature.id).toBe(places[2]!.id);
    expect(feature.geometry!.coordinates).toEqual([30, -3]);
    expect(linkOf(feature.links, "self")).toMatchObject({ type: "application/geo+json" });
    expect(linkOf(feature.links, "collection")).toMatchObject({
      href: `${BASE}/ogc/collections/pinpoints`,
      type: "application/json",
    });
    const member = await ok<Feature>(
      a,
      `/ogc/collections/list-${list.id}/items/${places[1]!.id}`,
      "application/geo+json",
    );
    expect(member.id).toBe(places[1]!.id);
    expect((await a.get(`/ogc/collections/list-${list.id}/items/${places[0]!.id}`)).status).toBe(404);
    const atPlace = await ok<Feature>(a, `/ogc/collections/events/items/${event.id}`, "application/geo+json");
    expect(atPlace.geometry!.coordinates).toEqual([10, -1]);
    const other = await caller();
    expect((await other.get(`/ogc/collections/pinpoints/items/${places[0]!.id}`)).status).toBe(404);
    expect((await a.get(`/ogc/collections/pinpoints/items/abc`)).status).toBe(404);
  });

  it("/req/core/crs84: coordinates are longitude, latitude (a point whose signs differ)", async () => {
    const { a } = await withPlaces();
    const page = await ok<Items>(a, "/ogc/collections/pinpoints/items?limit=1", "application/geo+json");
    expect(page.features[0]!.geometry!.coordinates).toEqual([10, -1]);
  });
});

describe("OGC API – Features, GeoJSON", () => {
  it("/req/geojson/definition, /req/geojson/content A C: features as application/geo+json FeatureCollections with links", async () => {
    const { a, list, places } = await withPlaces();
    const page = await ok<Items>(a, `/ogc/collections/list-${list.id}/items`, "application/geo+json");
    expect(page.type).toBe("FeatureCollection");
    expect(geojsonProblems(page)).toEqual([]);
    expect(page.features.map((f) => f.id)).toEqual([places[1]!.id, places[3]!.id]);
    expect(Array.isArray(page.links)).toBe(true);
    const events = await ok<Items>(a, "/ogc/collections/events/items", "application/geo+json");
    expect(events.features.map((f) => [f.properties.name, f.geometry!.coordinates])).toEqual([["Fair", [10, -1]]]);
  });
});
