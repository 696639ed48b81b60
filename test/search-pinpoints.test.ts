/**
 * GET /v3.0/pinpoints with bbox, latitude/longitude/radius, q, tags,
 * category and updated_since, checked against a brute-force answer computed
 * here from the same rows: the same set, in the same order, across every page
 * in both directions. The points include the antimeridian, the poles, the
 * edges of the boxes asked for and points exactly at the radius.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { contains, distance, EARTH_RADIUS, HALF_CIRCUMFERENCE, type BBox, type Point } from "../src/db/search/geo";
import { caller, contentDb, createCategories, createPinpoint, json, walkBothWays, type Caller } from "./helpers";

type Row = {
  id: number;
  name: string;
  address: string | null;
  tags: string[];
  category: number | null;
  description_text: string | null;
  latitude: number;
  longitude: number;
  updated_at: number;
};
type Found = { id: number; distance?: number; latitude: number; longitude: number };
type Page = { results: Found[]; next: string | null; previous: string | null };

// A fixed seed, so a failure can be replayed.
let seed = 20261123;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;

const WORDS = [
  "Musée",
  "musee",
  "Église",
  "café",
  "Tour",
  "Eiffel",
  "tower",
  "park",
  "Bäckerei",
  "river",
  "old",
  "north",
];
const TAGS = ["museum", "free", "food", "view", "kids"];
const BOX: BBox = { minLon: 2.2, minLat: 48.8, maxLon: 2.5, maxLat: 48.9 };
const CROSSING: BBox = { minLon: 170, minLat: -20, maxLon: -170, maxLat: 20 };

/** A point uniformly distributed on the sphere, or one of the awkward places. */
function randomPoint(i: number): Point {
  const special: Point[] = [
    { latitude: 90, longitude: 0 },
    { latitude: -90, longitude: 45 },
    { latitude: 0, longitude: 180 },
    { latitude: 10, longitude: -180 },
    { latitude: BOX.minLat, longitude: BOX.minLon },
    { latitude: BOX.maxLat, longitude: BOX.maxLon },
    { latitude: 48.85, longitude: BOX.maxLon },
    { latitude: BOX.minLat, longitude: 2.3 },
    { latitude: CROSSING.maxLat, longitude: CROSSING.minLon },
    { latitude: CROSSING.minLat, longitude: CROSSING.maxLon },
    { latitude: 48.8566, longitude: 2.3522 },
  ];
  if (i % 7 === 0) return special[(i / 7) % special.length]!;
  if (i % 3 === 0) return { latitude: 48.8 + random() * 0.12, longitude: 2.2 + random() * 0.32 };
  return {
    latitude: (Math.asin(2 * random() - 1) * 180) / Math.PI,
    longitude: Math.round((random() * 360 - 180) * 1e6) / 1e6,
  };
}

// Each test walks thousands of rows page by page, both ways, on a shared machine.
vi.setConfig({ testTimeout: 60_000 });

const N = 2500;
let a: Caller;
let b: Caller;
let rows: Row[];
let categories: number[];

async function insertPoints(who: Caller, count: number, categoryIds: (number | null)[]) {
  const db = await contentDb(who.accountId);
  const statements = [];
  for (let i = 0; i < count; i++) {
    const p = randomPoint(i);
    const name = `${pick(WORDS)} ${pick(WORDS)}`;
    const tags = TAGS.filter(() => random() < 0.3);
    const word = pick(WORDS);
    statements.push(
      db
        .prepare(
          `INSERT INTO pinpoints (account_id, name, address, tags, category_id, description, description_text, latitude, longitude, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .bind(
          who.accountId,
          name,
          i % 5 === 0 ? `${pick(WORDS)} street` : null,
          JSON.stringify(tags),
          pick(categoryIds),
          `<p>A <strong>${word}</strong></p>`,
          `A ${word}`,
          p.latitude,
          p.longitude,
          1_700_000_000_000 + i * 1000,
        ),
    );
  }
  for (let i = 0; i < statements.length; i += 500) await db.batch(statements.slice(i, i + 500));
}

beforeAll(async () => {
  a = await caller();
  b = await caller();
  categories = await createCategories(a.accountId, ["Sights", "Food"]);
  await insertPoints(a, N, [null, 1, ...categories]);
  await insertPoints(b, 400, [null, 1]);
  const { results } = await (
    await contentDb(a.accountId)
  )
    .prepare(
      "SELECT id, name, address, tags, category_id AS category, description_text, latitude, longitude, updated_at FROM pinpoints WHERE account_id = ? ORDER BY id",
    )
    .bind(a.accountId)
    .all<Row & { tags: string }>();
  rows = results.map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[] }));
}, 120_000);

const walk = (who: Caller, path: string) => walkBothWays<Found>(who, path);

const ids = (found: { id: number }[]) => found.map((r) => r.id);

describe("bbox", () => {
  it.each([
    ["a city", BOX],
    ["across the antimeridian", CROSSING],
    ["a pole cap", { minLon: -180, minLat: 80, maxLon: 180, maxLat: 90 }],
    ["the whole world", { minLon: -180, minLat: -90, maxLon: 180, maxLat: 90 }],
    ["a line", { minLon: 2.3, minLat: 48.8, maxLon: 2.3, maxLat: 48.9 }],
  ])("%s: the points inside, edges included, in id order", async (_, box) => {
    const expected = rows.filter((r) => contains(box, r)).map((r) => r.id);
    const found = await walk(
      a,
      `/v3.0/pinpoints?bbox=${box.minLon},${box.minLat},${box.maxLon},${box.maxLat}&limit=97`,
    );
    expect(ids(found)).toEqual(expected);
  });

  it("the edges are inclusive to the last digit", async () => {
    const onEdge = rows.filter((r) => r.latitude === BOX.minLat || r.longitude === BOX.maxLon);
    expect(onEdge.length).toBeGreaterThan(10);
    const found = ids(
      await walk(a, `/v3.0/pinpoints?bbox=${BOX.minLon},${BOX.minLat},${BOX.maxLon},${BOX.maxLat}&limit=1000`),
    );
    for (const r of onEdge) if (contains(BOX, r)) expect(found).toContain(r.id);
  });
});

/** Checks a nearest-first answer against the brute force: same ids, same order, distances agreeing. */
function expectNearest(found: Found[], center: Point, radius = Infinity, among = rows) {
  const tolerance = 1e-6;
  const expected = among
    .map((r) => ({ id: r.id, d: distance(center, r) }))
    .filter((r) => r.d <= radius + tolerance)
    .sort((x, y) => x.d - y.d || x.id - y.id);
  // Points within a micrometre of the radius may fall either way with another libm.
  const borderline = new Set(expected.filter((r) => Math.abs(r.d - radius) <= tolerance).map((r) => r.id));
  const got = found.filter((r) => !borderline.has(r.id));
  const want = expected.filter((r) => !borderline.has(r.id));
  expect(got.length).toBe(want.length);
  for (let i = 0; i < got.length; i++) {
    expect(got[i]!.distance).toBeCloseTo(distance(center, got[i]!), 4);
    if (i > 0) {
      const [p, q] = [got[i - 1]!, got[i]!];
      expect(q.distance! > p.distance! || (q.distance === p.distance && q.id > p.id)).toBe(true);
    }
  }
  // Equal up to libm rounding: where two distances differ by less than the tolerance, order by what the API said.
  expect(new Set(ids(got))).toEqual(new Set(want.map((r) => r.id)));
}

describe("nearest first", () => {
  const centers: [string, Point][] = [
    ["Paris", { latitude: 48.8566, longitude: 2.3522 }],
    ["the antimeridian", { latitude: 5, longitude: 179.9 }],
    ["the north pole", { latitude: 90, longitude: 0 }],
    ["the south Pacific", { latitude: -60, longitude: -140 }],
  ];

  it.each(centers)("near %s with radii of 2 km, 500 km and 5,000 km", async (_, center) => {
    for (const radius of [2000, 500_000, 5_000_000]) {
      const found = await walk(
        a,
        `/v3.0/pinpoints?latitude=${center.latitude}&longitude=${center.longitude}&radius=${radius}&limit=53`,
      );
      expectNearest(found, center, radius);
    }
  });

  it.each(centers)("near %s without a radius: every point, nearest first", async (_, center) => {
    const found = await walk(a, `/v3.0/pinpoints?latitude=${center.latitude}&longitude=${center.longitude}&limit=250`);
    expect(found.length).toBe(N);
    expectNearest(found, center);
  });

  it.each(centers)(
    "near %s with a radius past half the circumference (the old maximum, 20,037,508, and any finite one): every point",
    async (_, center) => {
      for (const radius of [String(Math.ceil(HALF_CIRCUMFERENCE)), "20037508", "1.7e308"]) {
        const found = await walk(
          a,
          `/v3.0/pinpoints?latitude=${center.latitude}&longitude=${center.longitude}&radius=${radius}&limit=500`,
        );
        expect(found.length, radius).toBe(N);
        expectNearest(found, center, Number(radius));
      }
    },
  );

  it("a point exactly at the radius is included", async () => {
    const center = { latitude: 48.86, longitude: 2.34 };
    const [first] = (
      await json<Page>(
        await a.get(`/v3.0/pinpoints?latitude=${center.latitude}&longitude=${center.longitude}&limit=40`),
      )
    ).results.slice(-1);
    const found = await walk(a, `/v3.0/pinpoints?latitude=48.86&longitude=2.34&radius=${first!.distance}&limit=7`);
    expect(ids(found)).toContain(first!.id);
    expect(found.every((r) => r.distance! <= first!.distance!)).toBe(true);
  });

  it("a filter few rows pass: the first circle comes back short or empty and grows until the page is full", async () => {
    // The last 12 rows written, spread over the globe: none in the dense circle around Paris the probe picks.
    const since = rows[rows.length - 12]!.updated_at;
    const recent = rows.filter((r) => r.updated_at >= since);
    for (const limit of [1, 5, 30]) {
      const found = await walk(
        a,
        `/v3.0/pinpoints?latitude=48.8566&longitude=2.3522&updated_since=${new Date(since).toISOString()}&limit=${limit}`,
      );
      expect(found.length).toBe(12);
      expectNearest(found, { latitude: 48.8566, longitude: 2.3522 }, Infinity, recent);
    }
  });

  it("pages across the probe's circles: rows packed in rings around the circles' radii", async () => {
    // A fresh account: 60 points 100 m to 400 m away, at many bearings, some of them on the
    // circles a page reads (125 m × √2 and its multiples) and on the boxes' corners.
    const ring = await caller();
    const center = { latitude: 40.4168, longitude: -3.7038 };
    const at = (metres: number, bearing: number): Point => {
      const angle = metres / EARTH_RADIUS;
      const [lat, lon, b] = [center.latitude, center.longitude, bearing].map((d) => (d * Math.PI) / 180) as [
        number,
        number,
        number,
      ];
      const lat2 = Math.asin(Math.sin(lat) * Math.cos(angle) + Math.cos(lat) * Math.sin(angle) * Math.cos(b));
      const lon2 =
        lon +
        Math.atan2(Math.sin(b) * Math.sin(angle) * Math.cos(lat), Math.cos(angle) - Math.sin(lat) * Math.sin(lat2));
      return { latitude: (lat2 * 180) / Math.PI, longitude: (lon2 * 180) / Math.PI };
    };
    const placed: Point[] = [];
    for (let i = 0; i < 60; i++) {
      const metres = i % 4 === 0 ? 125 * Math.SQRT2 * (1 + (i % 3)) : 100 + i * 5;
      placed.push(at(metres, (i * 47) % 360));
    }
    const db = await contentDb(ring.accountId);
    const statements = placed.map((p, i) =>
      db
        .prepare("INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, ?, ?, ?)")
        .bind(ring.accountId, `Ring ${i}`, p.latitude, p.longitude),
    );
    await db.batch(statements);
    const { results } = await db
      .prepare("SELECT id, latitude, longitude FROM pinpoints WHERE account_id = ?")
      .bind(ring.accountId)
      .all<Row>();
    for (const limit of [1, 4, 7, 25]) {
      const found = await walkBothWays<Found>(
        ring,
        `/v3.0/pinpoints?latitude=${center.latitude}&longitude=${center.longitude}&limit=${limit}`,
      );
      expect(found.length).toBe(60);
      expectNearest(found, center, Infinity, results);
      const within = await walkBothWays<Found>(
        ring,
        `/v3.0/pinpoints?latitude=${center.latitude}&longitude=${center.longitude}&radius=${125 * Math.SQRT2 * 2}&limit=${limit}`,
      );
      expectNearest(within, center, 125 * Math.SQRT2 * 2, results);
    }
  });

  it("composes with bbox, tags and category", async () => {
    const center = { latitude: 48.85, longitude: 2.3 };
    const found = await walk(
      a,
      `/v3.0/pinpoints?latitude=48.85&longitude=2.3&bbox=2.2,48.8,2.5,48.9&tags=museum&category=${categories[0]},1&limit=9`,
    );
    const want = rows
      .filter(
        (r) => contains(BOX, r) && r.tags.includes("museum") && (r.category === categories[0] || r.category === 1),
      )
      .map((r) => ({ id: r.id, d: distance(center, r) }))
      .sort((x, y) => x.d - y.d || x.id - y.id);
    expect(want.length).toBeGreaterThan(5);
    expect(new Set(ids(found))).toEqual(new Set(want.map((r) => r.id)));
  });
});

/** The words of a text as the index sees them: case and accents folded. */
const fold = (text: string | null) =>
  (text ?? "")
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/** Tier 1-3 of a row for the words `q` (the last a prefix), or 0 when it does not match. */
function tier(r: Row, q: string): number {
  const words = fold(q);
  const has = (tokens: string[]) =>
    words.every((w, i) => tokens.some((t) => (i === words.length - 1 ? t.startsWith(w) : t === w)));
  const name = fold(r.name);
  const near = [...name, ...fold(r.address), ...r.tags.flatMap(fold)];
  if (has(name)) return 1;
  if (has(near)) return 2;
  return has([...near, ...fold(r.description_text)]) ? 3 : 0;
}

describe("q", () => {
  it.each(["musee", "MUSÉE", "eglise caf", "tour eif", "bäck", "museum", "strong", "old nor"])(
    "%s: by relevance tier, then id",
    async (q) => {
      const expected = rows
        .map((r) => ({ id: r.id, t: tier(r, q) }))
        .filter((r) => r.t > 0)
        .sort((x, y) => x.t - y.t || x.id - y.id);
      const found = await walk(a, `/v3.0/pinpoints?q=${encodeURIComponent(q)}&limit=71`);
      expect(ids(found)).toEqual(expected.map((r) => r.id));
    },
  );

  it("markup in a description is not text; its words are", async () => {
    expect(rows.some((r) => tier(r, "strong") > 0)).toBe(false);
    const c = await caller();
    const p = await createPinpoint(c, {
      name: "Zz",
      description: '<p>Le <a href="https://x.test/">mus&eacute;e</a> d&#39;Orsay</p>',
    });
    expect(ids(await walk(c, "/v3.0/pinpoints?q=orsay%20musee"))).toEqual([p.id]);
    expect(ids(await walk(c, "/v3.0/pinpoints?q=d%27orsay"))).toEqual([p.id]);
    for (const markup of ["href", "https", "strong", "eacute"])
      expect(ids(await walk(c, `/v3.0/pinpoints?q=${markup}`))).toEqual([]);
  });

  it("with a point, by distance", async () => {
    const center = { latitude: 48.85, longitude: 2.3 };
    const found = await walk(a, `/v3.0/pinpoints?q=musee&latitude=48.85&longitude=2.3&limit=33`);
    expectNearest(
      found,
      center,
      Infinity,
      rows.filter((r) => tier(r, "musee") > 0),
    );
  });
});

describe("filters in id order", () => {
  it("tags: every one of them", async () => {
    const found = await walk(a, "/v3.0/pinpoints?tags=museum,%20free&limit=111");
    expect(ids(found)).toEqual(
      rows.filter((r) => r.tags.includes("museum") && r.tags.includes("free")).map((r) => r.id),
    );
  });

  it("category: any of them", async () => {
    const found = await walk(a, `/v3.0/pinpoints?category=${categories.join(",")}&limit=300`);
    expect(ids(found)).toEqual(rows.filter((r) => categories.includes(r.category!)).map((r) => r.id));
  });

  it("a viewport with every filter at its largest: 20 tags and 20 categories, from a cursor", async () => {
    const tags = [...TAGS, ...Array.from({ length: 20 - TAGS.length }, (_, i) => `tag${i}`)];
    const category = [...categories, 1, ...Array.from({ length: 17 }, (_, i) => 100_000 + i)];
    const path = `/v3.0/pinpoints?bbox=${BOX.minLon},${BOX.minLat},${BOX.maxLon},${BOX.maxLat}&tags=${tags.join(",")}&category=${category.join(",")}&updated_since=2020-01-01T00:00:00Z`;
    expect(await walk(a, path)).toEqual([]);
    // Fewer tags, so rows match: the same filters page from a cursor.
    const some = path.replace(`tags=${tags.join(",")}`, "tags=museum");
    const want = rows.filter(
      (r) => contains(BOX, r) && r.tags.includes("museum") && r.category !== null && category.includes(r.category),
    );
    expect(want.length).toBeGreaterThan(3);
    expect(ids(await walk(a, `${some}&limit=3`))).toEqual(want.map((r) => r.id));
  });

  it("updated_since: at or after the instant", async () => {
    const since = rows[1200]!.updated_at;
    const found = await walk(a, `/v3.0/pinpoints?updated_since=${new Date(since).toISOString()}&limit=300`);
    expect(ids(found)).toEqual(rows.filter((r) => r.updated_at >= since).map((r) => r.id));
  });
});

describe("rows written between pages", () => {
  it("nearest first: rows created, moved and deleted behind and ahead of the cursor are neither skipped nor repeated", async () => {
    const c = await caller();
    const center = { latitude: 10, longitude: 10 };
    const made: { id: number }[] = [];
    for (let i = 1; i <= 30; i++) made.push(await createPinpoint(c, { latitude: 10, longitude: 10 + i * 0.01 }));
    const url = "/v3.0/pinpoints?latitude=10&longitude=10&limit=10";
    const first: Page = await (await c.get(url)).json();
    expect(ids(first.results)).toEqual(made.slice(0, 10).map((p) => p.id));
    // Behind the cursor: a new nearest point, and a seen one moved far away; ahead: a deletion and a move closer.
    const nearer = await createPinpoint(c, { latitude: 10, longitude: 10.001 });
    await c.send("PUT", `/v3.0/pinpoints/${made[2]!.id}`, { longitude: 11 });
    await c.send("DELETE", `/v3.0/pinpoints/${made[15]!.id}`);
    await c.send("PUT", `/v3.0/pinpoints/${made[25]!.id}`, { longitude: 10.155 });
    const rest: Found[] = [];
    let next = first.next;
    while (next) {
      const page: Page = await (await c.get(next)).json();
      rest.push(...page.results);
      next = page.next;
    }
    const seen = [...ids(first.results), ...ids(rest)];
    expect(new Set(seen).size).toBe(seen.length - 1); // only the moved-away row 3 shows twice: it moved ahead
    expect(ids(rest)).not.toContain(nearer.id);
    expect(ids(rest)).not.toContain(made[15]!.id);
    for (const p of made.slice(10)) if (p !== made[15]) expect(ids(rest)).toContain(p.id);
    expect(ids(rest)).toContain(made[2]!.id);
    for (let i = 1; i < rest.length; i++) expect(rest[i]!.distance!).toBeGreaterThanOrEqual(rest[i - 1]!.distance!);
    expect(rest.every((r) => r.distance! > first.results[9]!.distance!)).toBe(true);
    expect(distance(center, { latitude: 10, longitude: 10.155 })).toBeCloseTo(
      rest.find((r) => r.id === made[25]!.id)!.distance!,
      6,
    );
  });

  it("text: a row renamed out of a tier leaves it, one renamed into a later tier shows there", async () => {
    const c = await caller();
    const made: { id: number }[] = [];
    for (let i = 0; i < 12; i++)
      made.push(await createPinpoint(c, { name: i % 2 ? "Grand Opéra" : "Hall", address: "opera street" }));
    const first: Page = await (await c.get("/v3.0/pinpoints?q=opera&limit=4")).json();
    expect(ids(first.results)).toEqual([1, 3, 5, 7].map((i) => made[i]!.id));
    await c.send("PUT", `/v3.0/pinpoints/${made[9]!.id}`, { name: "Hall" });
    await c.send("PUT", `/v3.0/pinpoints/${made[0]!.id}`, { name: "Opera house" });
    const rest: Found[] = [];
    let next = first.next;
    while (next) {
      const page: Page = await (await c.get(next)).json();
      rest.push(...page.results);
      next = page.next;
    }
    // Tier 1 (name) continues with 11, then tier 2 (address) in id order, now including 9.
    expect(ids(rest)).toEqual([11, 2, 4, 6, 8, 9, 10].map((i) => made[i]!.id));
  });
});

describe("accounts", () => {
  it("no filter, order or distance reveals another account's pinpoints", async () => {
    const mine = new Set(rows.map((r) => r.id));
    for (const url of [
      "/v3.0/pinpoints?bbox=-180,-90,180,90&limit=1000",
      "/v3.0/pinpoints?latitude=48.8566&longitude=2.3522&radius=20000000&limit=1000",
      "/v3.0/pinpoints?q=musee&limit=1000",
      "/v3.0/pinpoints?tags=museum&limit=1000",
    ]) {
      const found = await walk(a, url);
      expect(found.length).toBeGreaterThan(0);
      expect(
        found.every((r) => mine.has(r.id)),
        url,
      ).toBe(true);
    }
    // B's own view of the same places: only B's rows, its distances computed from B's rows alone.
    const theirs = await walk(b, "/v3.0/pinpoints?latitude=48.8566&longitude=2.3522&limit=1000");
    expect(theirs.length).toBe(400);
    expect(theirs.some((r) => mine.has(r.id))).toBe(false);
  });

  it("a list of another account is 403 with any filter, and filters compose with a list of one's own", async () => {
    const list = await a.send("POST", "/v3.0/lists", { name: "Mine" });
    const { id } = await json<{ id: number }>(list);
    const members = rows
      .filter((r) => contains(BOX, r))
      .slice(0, 30)
      .map((r) => r.id);
    await a.send(
      "POST",
      `/v3.0/lists/${id}/pinpoints`,
      members.map((p) => ({ id: p })),
    );
    expect((await b.get(`/v3.0/pinpoints?list=${id}&bbox=2.2,48.8,2.5,48.9`)).status).toBe(403);
    const found = await walk(a, `/v3.0/pinpoints?list=${id}&latitude=48.85&longitude=2.35&limit=7`);
    expect(new Set(ids(found))).toEqual(new Set(members));
  });
});

describe("bad values: 400 naming the parameter", () => {
  it.each([
    ["bbox=1,2,3", "bbox"],
    ["bbox=1,2,3,4,5", "bbox"],
    ["bbox=a,b,c,d", "bbox"],
    ["bbox=0,10,1,5", "bbox"],
    ["bbox=-181,0,0,1", "bbox"],
    ["bbox=0,-91,1,1", "bbox"],
    ["bbox=", "bbox"],
    ["latitude=91&longitude=0", "latitude"],
    ["latitude=1e400&longitude=0", "latitude"],
    ["latitude=0&longitude=180.5", "longitude"],
    ["latitude=0", "longitude"],
    ["longitude=0", "latitude"],
    ["latitude=x&longitude=0", "latitude"],
    ["latitude=0&longitude=0&radius=-1", "radius"],
    ["latitude=0&longitude=0&radius=1e400", "radius"],
    ["latitude=0&longitude=0&radius=ten", "radius"],
    ["radius=10", "radius"],
    [`q=${"a".repeat(201)}`, "q"],
    ["q=%20%2B%2B%20-%22*", "q"],
    ["q=", "q"],
    ["tags=a,,b", "tags"],
    ["tags=", "tags"],
    ["category=x", "category"],
    ["category=1,0", "category"],
    ["updated_since=yesterday", "updated_since"],
    ["updated_since=2026-02-30T00:00:00Z", "updated_since"],
    ["updated_since=2026-01-01T00:00:00", "updated_since"],
  ])("%s", async (query, parameter) => {
    const response = await a.get(`/v3.0/pinpoints?${query}`);
    expect(response.status).toBe(400);
    const body = await json<{ errors: { parameter: string }[] }>(response);
    expect(body.errors.map((e) => e.parameter)).toContain(parameter);
  });

  it("an empty answer is 200 with no results", async () => {
    const response = await a.get("/v3.0/pinpoints?bbox=-10,-10,-9,-9&q=zzzzzz");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ results: [], next: null, previous: null });
  });

  it("FTS5 syntax in q is only text", async () => {
    for (const q of ["musee OR tour", "NEAR(a b)", '"unbalanced', "name:musee", "{name}: x", "a AND NOT b", "x*"]) {
      const response = await a.get(`/v3.0/pinpoints?q=${encodeURIComponent(q)}`);
      expect(response.status, q).toBe(200);
    }
  });

  it("a cursor of one search fails on another", async () => {
    const { next } = await json<Page>(await a.get("/v3.0/pinpoints?q=musee&limit=2"));
    const other = new URL(next!);
    other.searchParams.set("q", "tour");
    expect((await a.get(other.pathname + other.search)).status).toBe(400);
  });
});
