/**
 * Vector tiles (src/tiles/, src/db/search/tile-cells.ts, migrations/0011_tile_cells.sql):
 * every tile decoded with @mapbox/vector-tile and checked against a brute-force
 * answer over the same places, computed here from their coordinates with the
 * textbook web mercator formulas: exact counts per tile at every zoom from 0
 * to 18 over dense cities and sparse country, the antimeridian and the poles,
 * the filters, publishable keys, another account never counted, and each kind
 * of write visible in the next tile.
 */
import { VectorTile } from "@mapbox/vector-tile";
import { PbfReader } from "pbf";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { FRESH_MS } from "../src/auth/publishable-keys";
import { clock } from "../src/core/clock";
import { BASE, call, caller, contentDb, databaseHolding, json, type Caller } from "./helpers";

type Place = {
  id: number;
  latitude: number;
  longitude: number;
  category: number | null;
  tags: string[];
  name: string;
  updated_at: number;
};
type Tile = { z: number; x: number; y: number };
type Decoded = {
  places: { id: number; x: number; y: number; properties: Record<string, unknown> }[];
  clusters: { id: number; x: number; y: number; count: number; properties: Record<string, unknown> }[];
};

/** The tile at zoom z holding a place, by the textbook formulas (independent of src/). */
function tileOf(p: { latitude: number; longitude: number }, z: number): Tile {
  const n = 2 ** z;
  const lat = Math.max(-85.0511287798066, Math.min(85.0511287798066, p.latitude));
  const φ = (lat * Math.PI) / 180;
  const x = Math.min(n - 1, Math.floor(((p.longitude + 180) / 360) * n));
  const y = Math.floor(((1 - Math.log(Math.tan(φ) + 1 / Math.cos(φ)) / Math.PI) / 2) * n);
  return { z, x, y: Math.min(n - 1, Math.max(0, y)) };
}
const key = (t: Tile) => `${t.z}/${t.x}/${t.y}`;
const inTile = (t: Tile) => (p: Place) => key(tileOf(p, t.z)) === key(t);

/** A repeatable pseudo-random sequence (Park–Miller). */
function random(seed: number) {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

/** Inserts places for `accountId` straight into D1, the way a bulk import does (the triggers run). */
async function insertPlaces(
  accountId: number,
  places: { latitude: number; longitude: number; category?: number | null; tags?: string[]; name?: string }[],
): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < places.length; i += 500) {
    const chunk = places
      .slice(i, i + 500)
      .map((p, k) => [
        p.name ?? `place ${i + k}`,
        p.latitude,
        p.longitude,
        p.category ?? null,
        JSON.stringify(p.tags ?? []),
      ]);
    const { meta } = await (
      await contentDb(accountId)
    )
      .prepare(
        `INSERT INTO pinpoints (account_id, name, latitude, longitude, category_id, tags)
       SELECT ?1, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?2) ORDER BY key`,
      )
      .bind(accountId, JSON.stringify(chunk))
      .run();
    for (let k = chunk.length - 1; k >= 0; k--) ids.push(meta.last_row_id - k);
  }
  return ids;
}

async function placesOf(accountId: number): Promise<Place[]> {
  const { results } = await (
    await contentDb(accountId)
  )
    .prepare("SELECT id, latitude, longitude, category_id, tags, name, updated_at FROM pinpoints WHERE account_id = ?")
    .bind(accountId)
    .all<{
      id: number;
      latitude: number;
      longitude: number;
      category_id: number | null;
      tags: string;
      name: string;
      updated_at: number;
    }>();
  return results.map((r) => ({ ...r, category: r.category_id, tags: JSON.parse(r.tags) as string[] }));
}

async function listMembers(listId: number): Promise<Set<number>> {
  const { results } = await (
    await databaseHolding("lists", listId)
  )
    .prepare("SELECT pinpoint_id FROM list_pinpoints WHERE list_id = ?")
    .bind(listId)
    .all<{ pinpoint_id: number }>();
  return new Set(results.map((r) => r.pinpoint_id));
}

function decode(bytes: ArrayBuffer): Decoded {
  const out: Decoded = { places: [], clusters: [] };
  if (bytes.byteLength === 0) return out;
  const tile = new VectorTile(new PbfReader(new Uint8Array(bytes)));
  expect(Object.keys(tile.layers)).toEqual(["pinpoints"]);
  const layer = tile.layers.pinpoints!;
  expect(layer.extent).toBe(4096);
  expect(layer.version).toBe(2);
  for (let i = 0; i < layer.length; i++) {
    const feature = layer.feature(i);
    const geometry = feature.loadGeometry();
    expect(feature.type).toBe(1);
    expect(geometry).toHaveLength(1);
    expect(geometry[0]).toHaveLength(1);
    const { x, y } = geometry[0]![0]!;
    const properties = feature.properties as Record<string, unknown>;
    if (properties.cluster === true) {
      out.clusters.push({ id: Number(feature.id), x, y, count: Number(properties.point_count), properties });
    } else out.places.push({ id: Number(feature.id), x, y, properties });
  }
  return out;
}

const inExtent = (f: { x: number; y: number }) => f.x >= 0 && f.x < 4096 && f.y >= 0 && f.y < 4096;

/** How many places the tile counts inside its extent: singles plus clusters' point_count. */
const counted = (d: Decoded) =>
  d.places.filter(inExtent).length + d.clusters.filter(inExtent).reduce((sum, c) => sum + c.count, 0);

type Get = (path: string, headers?: Record<string, string>) => Promise<Response>;

async function getTile(get: Get, t: Tile, query = ""): Promise<Decoded> {
  const response = await get(`/v3.0/tiles/${t.z}/${t.x}/${t.y}.mvt${query}`);
  if (response.status !== 200) expect(response.status, await response.text()).toBe(200);
  expect(response.headers.get("Content-Type")).toBe("application/vnd.mapbox-vector-tile");
  return decode(await response.arrayBuffer());
}

/** Checks one tile against the brute-force answer over `expected` (the places the caller may see). */
async function checkTile(get: Get, t: Tile, expected: Place[], query = "", clusterMaxZoom = 16) {
  const decoded = await getTile(get, t, query);
  const here = expected.filter(inTile(t));
  const label = `${key(t)}${query}`;
  expect(counted(decoded), label).toBe(here.length);
  // Every feature lies in the extent (no buffer), and a place shown is one of the tile's.
  for (const f of [...decoded.places, ...decoded.clusters]) expect(inExtent(f), label).toBe(true);
  const ids = new Set(here.map((p) => p.id));
  for (const place of decoded.places) expect(ids.has(place.id), `${label} place ${place.id}`).toBe(true);
  if (t.z >= clusterMaxZoom) {
    expect(decoded.clusters, label).toEqual([]);
    expect(decoded.places.map((p) => p.id).sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
  }
  return decoded;
}

/** The tiles at zoom z holding any of `places`, densest first, and at most `limit` of them. */
function occupiedTiles(places: Place[], z: number, limit: number): Tile[] {
  const count = new Map<string, { tile: Tile; n: number }>();
  for (const p of places) {
    const t = tileOf(p, z);
    const entry = count.get(key(t)) ?? { tile: t, n: 0 };
    entry.n++;
    count.set(key(t), entry);
  }
  const sorted = [...count.values()].sort((a, b) => b.n - a.n);
  if (sorted.length <= limit) return sorted.map((e) => e.tile);
  // The densest half, and the rest spread over the sparse ones.
  const half = Math.floor(limit / 2);
  const rest = sorted.slice(half);
  const step = rest.length / (limit - half);
  return [...sorted.slice(0, half), ...Array.from({ length: limit - half }, (_, i) => rest[Math.floor(i * step)]!)].map(
    (e) => e.tile,
  );
}

const CITIES = [
  { latitude: 48.8566, longitude: 2.3522, n: 1200, sigma: 0.03 },
  { latitude: 45.764, longitude: 4.8357, n: 500, sigma: 0.01 },
  // One square a few metres across: clusters down to the finest cells.
  { latitude: 40.7128, longitude: -74.006, n: 300, sigma: 0.0002 },
  // Across the antimeridian (Fiji).
  { latitude: -17.7134, longitude: 179.99, n: 200, sigma: 0.05 },
];

/** Places at the map's edges: the poles beyond the square map, the antimeridian, the equator and the meridian. */
const EDGES = [
  { latitude: 90, longitude: 0 },
  { latitude: -90, longitude: 10 },
  { latitude: 89.9, longitude: -170 },
  { latitude: -85.06, longitude: 120 },
  { latitude: 85.05, longitude: -30 },
  { latitude: 85.0511287798066, longitude: 60 },
  { latitude: 10, longitude: 180 },
  { latitude: -10, longitude: -180 },
  { latitude: 0, longitude: 0 },
  { latitude: 0, longitude: -179.9999999 },
  { latitude: 0, longitude: 179.9999999 },
];

function dataset(seed: number) {
  const rnd = random(seed);
  const places: { latitude: number; longitude: number; category: number | null; tags: string[]; name: string }[] = [];
  const tagSets = [["museum"], ["museum", "free"], ["food"], [], ["free"]];
  const push = (latitude: number, longitude: number) => {
    const i = places.length;
    places.push({
      latitude: Math.max(-90, Math.min(90, latitude)),
      longitude: longitude > 180 ? longitude - 360 : longitude < -180 ? longitude + 360 : longitude,
      category: i % 3 === 0 ? null : 1,
      tags: tagSets[i % tagSets.length]!,
      name: i % 4 === 0 ? `Musée ${i}` : `Café ${i}`,
    });
  };
  for (const city of CITIES) {
    for (let i = 0; i < city.n; i++) {
      const r = city.sigma * Math.sqrt(-2 * Math.log(1 - rnd()));
      const a = 2 * Math.PI * rnd();
      push(
        city.latitude + r * Math.sin(a),
        city.longitude + (r * Math.cos(a)) / Math.cos((city.latitude * Math.PI) / 180),
      );
    }
  }
  // Sparse country everywhere.
  for (let i = 0; i < 800; i++) push(rnd() * 170 - 85, rnd() * 360 - 180);
  for (const edge of EDGES) push(edge.latitude, edge.longitude);
  return places;
}

let a: Caller;
let b: Caller;
let placesA: Place[];
let placesB: Place[];

beforeAll(async () => {
  [a, b] = await Promise.all([caller(), caller()]);
  await insertPlaces(a.accountId, dataset(1));
  // Another account's places in the same cities and more: never counted for a.
  await insertPlaces(b.accountId, dataset(2).slice(0, 1500));
  placesA = await placesOf(a.accountId);
  placesB = await placesOf(b.accountId);
}, 120_000);

describe("counts per tile", () => {
  it("adds up to every place at zooms 0 to 3, over all their tiles", async () => {
    for (let z = 0; z <= 3; z++) {
      let total = 0;
      for (let x = 0; x < 2 ** z; x++) {
        for (let y = 0; y < 2 ** z; y++) total += counted(await checkTile(a.get, { z, x, y }, placesA));
      }
      expect(total, `zoom ${z}`).toBe(placesA.length);
    }
  });

  it("is exact in the densest and the sparsest tiles at every zoom from 4 to 18", async () => {
    for (let z = 4; z <= 18; z++) {
      for (const t of occupiedTiles(placesA, z, 12)) await checkTile(a.get, t, placesA);
    }
  });

  it("never counts another account's places", async () => {
    for (const z of [0, 5, 10, 15]) {
      for (const t of occupiedTiles(placesB, z, 6)) {
        const decoded = await checkTile(a.get, t, placesA);
        const theirs = new Set(placesB.map((p) => p.id));
        for (const place of decoded.places) expect(theirs.has(place.id)).toBe(false);
        await checkTile(b.get, t, placesB);
      }
    }
  });
});

describe("places at the map's edges", () => {
  it("counts the antimeridian's places on their own side and the poles' in the edge rows", async () => {
    for (const edge of EDGES) {
      for (const z of [0, 1, 2, 6, 12, 16, 18]) {
        const t = tileOf(edge, z);
        const decoded = await checkTile(a.get, t, placesA);
        if (edge.longitude >= 179.9) expect(t.x, `${edge.longitude}`).toBe(2 ** z - 1);
        if (edge.longitude <= -179.9) expect(t.x, `${edge.longitude}`).toBe(0);
        if (edge.latitude >= 85.0511287798066) expect(t.y).toBe(0);
        if (edge.latitude <= -85.0511287798066) expect(t.y).toBe(2 ** z - 1);
        expect(counted(decoded)).toBeGreaterThan(0);
      }
    }
  });

  it("splits Fiji's cluster between the last and the first column", async () => {
    const fiji = placesA.filter((p) => p.latitude > -19 && p.latitude < -16.5 && Math.abs(p.longitude) > 179);
    const east = fiji.filter((p) => p.longitude > 0).length;
    const west = fiji.length - east;
    expect(east).toBeGreaterThan(10);
    expect(west).toBeGreaterThan(10);
    for (const z of [3, 8]) {
      const row = tileOf({ latitude: -17.7134, longitude: 179.99 }, z).y;
      const last = await checkTile(a.get, { z, x: 2 ** z - 1, y: row }, placesA);
      const first = await checkTile(a.get, { z, x: 0, y: row }, placesA);
      expect(counted(last)).toBeGreaterThanOrEqual(east);
      expect(counted(first)).toBeGreaterThanOrEqual(west);
    }
  });
});

/** The tiles to check a filter at: a few at each of these zooms, where its places are. */
async function checkFilter(get: Get, expected: Place[], query: string, zooms = [0, 3, 7, 11, 14, 16, 18]) {
  expect(expected.length, query).toBeGreaterThan(0);
  for (const z of zooms) for (const t of occupiedTiles(expected, z, 4)) await checkTile(get, t, expected, query);
}

describe("filters", () => {
  let l1: number;
  let l2: number;
  let recent: number;
  beforeAll(async () => {
    const lists = await Promise.all([
      json<{ id: number }>(await a.send("POST", "/v3.0/lists", { name: "every third" })),
      json<{ id: number }>(await a.send("POST", "/v3.0/lists", { name: "every fifth" })),
    ]);
    [l1, l2] = lists.map((l) => l.id) as [number, number];
    const db = await contentDb(a.accountId);
    await db
      .prepare(
        "INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT ?, id FROM pinpoints WHERE account_id = ? AND id % 3 = 0",
      )
      .bind(l1, a.accountId)
      .run();
    await db
      .prepare(
        "INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT ?, id FROM pinpoints WHERE account_id = ? AND id % 5 = 0",
      )
      .bind(l2, a.accountId)
      .run();
    recent = Date.parse("2030-01-01T00:00:00Z");
    await db
      .prepare("UPDATE pinpoints SET updated_at = ? WHERE account_id = ? AND id % 7 = 0")
      .bind(recent, a.accountId)
      .run();
    placesA = await placesOf(a.accountId);
  });

  it("list: the list's places (precomputed cells)", async () => {
    const members = await listMembers(l1);
    await checkFilter(
      a.get,
      placesA.filter((p) => members.has(p.id)),
      `?list=${l1}`,
    );
  });

  it("category, tags, q and updated_since: read from the places, exact", async () => {
    await checkFilter(
      a.get,
      placesA.filter((p) => p.category === 1),
      "?category=1",
    );
    await checkFilter(
      a.get,
      placesA.filter((p) => p.tags.includes("museum") && p.tags.includes("free")),
      "?tags=museum,free",
    );
    await checkFilter(
      a.get,
      placesA.filter((p) => p.name.startsWith("Musée")),
      "?q=musee",
    );
    await checkFilter(
      a.get,
      placesA.filter((p) => p.updated_at >= recent),
      "?updated_since=2030-01-01T00:00:00Z",
    );
  });

  it("combined, with a list", async () => {
    const members = await listMembers(l2);
    await checkFilter(
      a.get,
      placesA.filter((p) => members.has(p.id) && p.tags.includes("free")),
      `?list=${l2}&tags=free`,
    );
  });

  it("an unknown parameter is a 400 naming it, on the tiles and the TileJSON (docs/vector-tiles.md)", async () => {
    for (const path of ["/v3.0/tiles/0/0/0.mvt?lst=1", "/v3.0/tiles/3/4/2.geojson?lst=1", "/v3.0/tiles.json?lst=1"]) {
      const response = await a.get(path);
      expect(response.status, path).toBe(400);
      const problem = await json<{ type: string; errors: { parameter: string }[] }>(response);
      expect(problem.type, path).toBe("urn:poi-api:problem:validation_failed");
      expect(
        problem.errors.map((e) => e.parameter),
        path,
      ).toEqual(["lst"]);
    }
  });

  it("a list of another account is 403, a missing one 404", async () => {
    const theirs = await b.get(`/v3.0/tiles/0/0/0.mvt?list=${l1}`);
    expect(theirs.status).toBe(403);
    expect(theirs.headers.get("Content-Type")).toBe("application/problem+json");
    expect((await b.get("/v3.0/tiles/0/0/0.mvt?list=987654321")).status).toBe(404);
    expect((await b.get(`/v3.0/tiles.json?list=${l1}`)).status).toBe(403);
  });

  describe("with a publishable key", () => {
    let keys: { every: string; one: string; two: string };
    const withKey = (key: string): Get => {
      return (path, headers = {}) => {
        const url = new URL(path, "https://x.test");
        url.searchParams.set("key", key);
        return call(`${url.pathname}${url.search}`, { headers });
      };
    };
    beforeAll(async () => {
      const create = async (body: Record<string, unknown>) =>
        (await json<{ key: string }>(await a.send("POST", "/v3.0/keys", { name: "map", ...body }))).key;
      keys = { every: await create({}), one: await create({ lists: [l1] }), two: await create({ lists: [l1, l2] }) };
    });

    it("shows what the key publishes: every list, its one list, or the union of its lists", async () => {
      const [m1, m2] = [await listMembers(l1), await listMembers(l2)];
      const listed = placesA.filter((p) => m1.has(p.id) || m2.has(p.id));
      await checkFilter(withKey(keys.every), listed, "");
      await checkFilter(
        withKey(keys.one),
        placesA.filter((p) => m1.has(p.id)),
        "",
      );
      // Two lists overlap: their union is read from the places, up to the bound.
      await checkFilter(withKey(keys.two), listed, "", [5, 9, 13, 17]);
      await checkFilter(
        withKey(keys.two),
        placesA.filter((p) => m2.has(p.id)),
        `?list=${l2}`,
      );
      await checkFilter(
        withKey(keys.every),
        listed.filter((p) => p.tags.includes("food")),
        "?tags=food",
        [8, 16],
      );
      // A list the key does not publish does not exist for it.
      expect((await withKey(keys.one)(`/v3.0/tiles/0/0/0.mvt?list=${l2}`)).status).toBe(404);
    });

    it("goes through the public cache: the same bytes, an ETag, 304", async () => {
      const path = `/v3.0/tiles/3/4/2.mvt?list=${l1}`;
      const first = await withKey(keys.one)(path);
      expect(first.status).toBe(200);
      const bytes = new Uint8Array(await first.arrayBuffer());
      expect(bytes.length).toBeGreaterThan(0);
      const etag = first.headers.get("ETag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(first.headers.get("Cache-Control")).toMatch(/^public, max-age=/);
      const second = await withKey(keys.one)(path);
      expect(second.headers.get("Cache-Status")).toMatch(/hit/);
      expect(second.headers.get("Content-Type")).toBe("application/vnd.mapbox-vector-tile");
      expect(new Uint8Array(await second.arrayBuffer())).toEqual(bytes);
      const again = await withKey(keys.one)(path, { "If-None-Match": etag });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe("");
    });
  });
});

describe("the tile requests", () => {
  it("answers 400 for a bad z, x or y, naming it", async () => {
    const bad: [string, string][] = [
      ["23/0/0", "z"],
      ["a/0/0", "z"],
      ["-1/0/0", "z"],
      ["1/2/0", "x"],
      ["1/0/2", "y"],
      ["1/x/0", "x"],
      ["1/0/y", "y"],
      ["1/0/1.5", "y"],
      ["0/0/-0", "y"],
    ];
    for (const [path, parameter] of bad) {
      for (const format of ["mvt", "geojson"]) {
        const response = await a.get(`/v3.0/tiles/${path}.${format}`);
        expect(response.status, path).toBe(400);
        const problem = await json<{ errors: { parameter: string }[] }>(response);
        expect(
          problem.errors.map((e) => e.parameter),
          path,
        ).toContain(parameter);
      }
    }
    expect((await a.get("/v3.0/tiles/0/0/0.png")).status).toBe(404);
  });

  it("answers an empty tile with 200, no bytes and an ETag; 304 when it is unchanged", async () => {
    // Mid-Pacific at zoom 12 holds none of the places.
    const t = tileOf({ latitude: -30, longitude: -130 }, 12);
    expect(placesA.filter(inTile(t))).toEqual([]);
    const empty = await a.get(`/v3.0/tiles/${t.z}/${t.x}/${t.y}.mvt`);
    expect(empty.status).toBe(200);
    expect((await empty.arrayBuffer()).byteLength).toBe(0);
    expect(empty.headers.get("Cache-Control")).toBe("private");
    const full = await a.get("/v3.0/tiles/0/0/0.mvt");
    const etag = full.headers.get("ETag")!;
    await full.arrayBuffer();
    const unchanged = await a.get("/v3.0/tiles/0/0/0.mvt", { "If-None-Match": etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get("ETag")).toBe(etag);
    expect(await unchanged.text()).toBe("");
  });

  it("gives the same features as GeoJSON, places at their own coordinates", async () => {
    for (const z of [1, 9, 17]) {
      const [t] = occupiedTiles(placesA, z, 1);
      const mvt = await getTile(a.get, t!);
      const response = await a.get(`/v3.0/tiles/${t!.z}/${t!.x}/${t!.y}.geojson`);
      expect(response.headers.get("Content-Type")).toBe("application/geo+json");
      const collection = await json<{
        features: { id: number; geometry: { coordinates: [number, number] }; properties: Record<string, unknown> }[];
      }>(response);
      const ids = (list: { id: number }[]) => list.map((f) => f.id).sort((x, y) => x - y);
      expect(ids(collection.features)).toEqual(ids([...mvt.places, ...mvt.clusters]));
      const byId = new Map(placesA.map((p) => [p.id, p]));
      for (const f of collection.features) {
        const place = byId.get(f.id);
        if (place) {
          expect(f.geometry.coordinates).toEqual([place.longitude, place.latitude]);
          expect(f.properties).toMatchObject({ id: place.id, name: place.name, tags: place.tags.join(",") });
        } else expect(f.properties).toMatchObject({ cluster: true, cluster_id: f.id });
      }
    }
  });

  it("names each cluster by the tile of the bin it fills, which holds all its places", async () => {
    const [t] = occupiedTiles(placesA, 10, 1);
    const decoded = await getTile(a.get, t!);
    expect(decoded.clusters.length).toBeGreaterThan(0);
    for (const cluster of decoded.clusters) {
      const rest = cluster.id - 2 ** 52;
      const z = rest % 32;
      const cell = (rest - z) / 32;
      const bin = { z, x: cell % 2 ** z, y: Math.floor(cell / 2 ** z) };
      expect(z).toBe(t!.z + 3);
      expect(placesA.filter(inTile(bin))).toHaveLength(cluster.count);
      expect(cluster.properties.point_count_abbreviated).toBe(
        cluster.count >= 1000 ? `${Math.round(cluster.count / 100) / 10}k` : String(cluster.count),
      );
    }
  });
});

describe("TileJSON", () => {
  it("describes the tiles by one URL, with the filters and the key, and bounds holding every place", async () => {
    const response = await a.get("/v3.0/tiles.json?tags=free");
    expect(response.status).toBe(200);
    const doc = await json<{
      tilejson: string;
      tiles: string[];
      bounds: [number, number, number, number];
      vector_layers: { id: string; fields: Record<string, string> }[];
      minzoom: number;
      maxzoom: number;
    }>(response);
    expect(doc.tilejson).toBe("3.0.0");
    expect(doc.tiles).toEqual(["https://api.example.test/v3.0/tiles/{z}/{x}/{y}.mvt?tags=free"]);
    expect([doc.minzoom, doc.maxzoom]).toEqual([0, 22]);
    expect(doc.vector_layers.map((l) => l.id)).toEqual(["pinpoints"]);
    expect(doc.vector_layers[0]!.fields).toMatchObject({ point_count: "Number", name: "String" });
    const [w, s, e, n] = doc.bounds;
    for (const p of placesA) {
      const lat = Math.max(-85.0511287798066, Math.min(85.0511287798066, p.latitude));
      expect(p.longitude >= w && p.longitude <= e && lat >= s - 1e-9 && lat <= n + 1e-9, `${p.id}`).toBe(true);
    }
    const keyed = await call(`/v3.0/tiles.json?key=pk_notakeynotakeynotakey`);
    expect(keyed.status).toBe(401);
    // Like every /v3.0 read, a parameter the route does not take is refused, not ignored.
    expect((await a.get("/v3.0/tiles.json?tags=free&format=x")).status).toBe(400);
  });

  it("bounds a city's places to the city", async () => {
    const c = await caller();
    await insertPlaces(
      c.accountId,
      Array.from({ length: 50 }, (_, i) => ({ latitude: 48.85 + i / 1000, longitude: 2.35 + i / 1000 })),
    );
    const doc = await json<{ bounds: number[] }>(await c.get("/v3.0/tiles.json"));
    const [w, s, e, n] = doc.bounds as [number, number, number, number];
    expect(w).toBeLessThanOrEqual(2.35);
    expect(e).toBeGreaterThanOrEqual(2.399);
    expect(s).toBeLessThanOrEqual(48.85);
    expect(n).toBeGreaterThanOrEqual(48.899);
    expect(e - w).toBeLessThan(0.2);
    expect(n - s).toBeLessThan(0.2);
  });
});

describe("writes", () => {
  it("show in the next tile: a create, a move, memberships, a delete, a list deleted", async () => {
    const c = await caller();
    const here = { latitude: 45.5, longitude: 4.5 };
    const there = { latitude: 46.5, longitude: 4.5 };
    const zooms = [0, 5, 10, 15, 16, 18];
    const countAt = async (p: { latitude: number; longitude: number }, z: number, query = "") =>
      counted(await getTile(c.get, tileOf(p, z), query));
    const expectCounts = async (p: { latitude: number; longitude: number }, n: number, query = "") => {
      for (const z of zooms) expect(await countAt(p, z, query), `${z}${query}`).toBe(n);
    };
    await expectCounts(here, 0);
    const created = await json<{ id: number }>(await c.send("POST", "/v3.0/pinpoints", { name: "new", ...here }));
    await expectCounts(here, 1);
    expect((await getTile(c.get, tileOf(here, 18))).places.map((p) => p.id)).toEqual([created.id]);

    expect((await c.send("PUT", `/v3.0/pinpoints/${created.id}`, there)).status).toBe(200);
    await expectCounts(there, 1);
    expect(await countAt(here, 10)).toBe(0);

    const list = await json<{ id: number }>(await c.send("POST", "/v3.0/lists", { name: "mine" }));
    await expectCounts(there, 0, `?list=${list.id}`);
    await c.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: created.id }]);
    await expectCounts(there, 1, `?list=${list.id}`);
    await c.send("DELETE", `/v3.0/lists/${list.id}/pinpoints`, [{ id: created.id }]);
    await expectCounts(there, 0, `?list=${list.id}`);
    await c.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: created.id }]);

    expect((await c.send("DELETE", `/v3.0/pinpoints/${created.id}`)).status).toBe(204);
    await expectCounts(there, 0);
    await expectCounts(there, 0, `?list=${list.id}`);

    expect((await c.send("DELETE", `/v3.0/lists/${list.id}`)).status).toBe(204);
    expect((await c.get(`/v3.0/tiles/0/0/0.mvt?list=${list.id}`)).status).toBe(404);
  });

  it("show to a publishable key within its freshness (src/auth/publishable-keys.ts FRESH_MS)", async () => {
    const c = await caller();
    const list = await json<{ id: number }>(await c.send("POST", "/v3.0/lists", { name: "public" }));
    const { key } = await json<{ key: string }>(await c.send("POST", "/v3.0/keys", { name: "m", lists: [list.id] }));
    const read = async () => counted(decode(await (await call(`/v3.0/tiles/0/0/0.mvt?key=${key}`)).arrayBuffer()));
    expect(await read()).toBe(0);
    const { id } = await json<{ id: number }>(
      await c.send("POST", "/v3.0/pinpoints", { name: "p", latitude: 1, longitude: 1 }),
    );
    await c.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id }]);
    // Once the key's entry is past its freshness, as a reader who waited that long would find it.
    const realNow = clock.now;
    const later = realNow() + FRESH_MS;
    clock.now = () => later;
    try {
      expect(await read()).toBe(1);
    } finally {
      clock.now = realNow;
    }
  });
});

describe("bounded reads", () => {
  let d: Caller;
  let placesD: Place[];
  beforeAll(async () => {
    d = await caller();
    const rnd = random(7);
    // 10,500 places in a square about 40 m wide, and three rare ones far apart.
    const dense = Array.from({ length: 10_500 }, () => ({
      latitude: 45.76 + rnd() * 0.0004,
      longitude: 4.83 + rnd() * 0.0004,
      tags: ["x"],
    }));
    await insertPlaces(d.accountId, [
      ...dense,
      { latitude: 10, longitude: 10, name: "Rare one" },
      { latitude: -10, longitude: 100, name: "Rare two" },
      { latitude: 45.76, longitude: 4.83, name: "Rare three", tags: ["x"] },
    ]);
    placesD = await placesOf(d.accountId);
  }, 120_000);

  it("counts a dense tile exactly from the cells, at any zoom to 18, and refuses only what it cannot bound", async () => {
    for (const z of [0, 6, 12, 15, 16, 17, 18])
      await checkTile(d.get, tileOf({ latitude: 45.7602, longitude: 4.8302 }, z), placesD, "", z < 16 ? 16 : 99);
    for (const z of [19, 20]) {
      const t = tileOf({ latitude: 45.7602, longitude: 4.8302 }, z);
      const n = placesD.filter(inTile(t)).length;
      const response = await d.get(`/v3.0/tiles/${t.z}/${t.x}/${t.y}.mvt`);
      if (n > 10_000) expect(response.status).toBe(422);
      else expect(counted(decode(await response.arrayBuffer()))).toBe(n);
    }
  });

  it("reads a filter through its own index when the tile has too many candidates, else refuses", async () => {
    await checkTile(
      d.get,
      { z: 0, x: 0, y: 0 },
      placesD.filter((p) => p.name.startsWith("Rare")),
      "?q=rare",
    );
    const refused = await d.get("/v3.0/tiles/0/0/0.mvt?tags=x");
    expect(refused.status).toBe(422);
    expect(await json<{ type: string }>(refused)).toMatchObject({ type: "urn:poi-api:problem:tile_too_dense" });
    // Zoomed in beside the dense square, the R*Tree proposes few: the filter is answered.
    await checkTile(
      d.get,
      tileOf({ latitude: 10, longitude: 10 }, 8),
      placesD.filter((p) => p.tags.includes("x")),
      "?tags=x",
    );
  });

  it("shows every place from TILE_CLUSTER_MAXZOOM, which the operator sets", async () => {
    const t = tileOf({ latitude: 48.8566, longitude: 2.3522 }, 11);
    const ctx = createExecutionContext();
    const response = await app.fetch(
      new Request(new URL(`/v3.0/tiles/${t.z}/${t.x}/${t.y}.mvt`, BASE), {
        headers: { Authorization: `Bearer ${a.token}` },
      }),
      { ...env, TILE_CLUSTER_MAXZOOM: "11" } as unknown as Cloudflare.Env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const decoded = decode(await response.arrayBuffer());
    const expected = placesA.filter(inTile(t));
    expect(expected.length).toBeGreaterThan(100);
    expect(decoded.clusters).toEqual([]);
    expect(decoded.places.map((p) => p.id).sort((x, y) => x - y)).toEqual(
      expected.map((p) => p.id).sort((x, y) => x - y),
    );
  });
});
