/**
 * Nearest first at and near both poles, on places spread as the world's are: many
 * between 60° and 71°N (Scandinavia, Siberia, Canada), a handful beyond, none near the
 * North Pole, Antarctic stations and one at the South Pole. Every answer equals a
 * brute-force one computed here, across pages both ways, with and without a radius and
 * a bbox; and a page near a pole reads about as many rows as one on the equator
 * (D1's `rows_read`, what the service is billed for, counting the R*Tree's entries).
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { contains, distance, type BBox, type Point } from "../src/db/search/geo";
import { searchPinpoints } from "../src/pinpoints/search";
import { caller, contentDb, walkBothWays, type Caller } from "./helpers";

type Found = { id: number; distance: number; latitude: number; longitude: number };
type Place = Point & { id: number };

vi.setConfig({ testTimeout: 60_000 });

// A fixed seed, so a failure can be replayed.
let seed = 20261125;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

/** [minLat, maxLat, minLon, maxLon, places]: a world with a dense ring south of the Arctic and an empty North Pole. */
const REGIONS: [number, number, number, number, number][] = [
  [-50, 60, -180, 180, 1500],
  [60, 71, -180, 180, 700],
  [71.6, 80, -180, 180, 8],
  [-55, -46, -180, 180, 30],
  [-70, -62, -70, 170, 15],
  [-80, -75, 100, 125, 3],
];

let a: Caller;
let places: Place[];

beforeAll(async () => {
  a = await caller();
  const points: Point[] = [{ latitude: -90, longitude: 0 }];
  for (const [minLat, maxLat, minLon, maxLon, n] of REGIONS) {
    for (let i = 0; i < n; i++) {
      points.push({
        latitude: minLat + random() * (maxLat - minLat),
        longitude: minLon + random() * (maxLon - minLon),
      });
    }
  }
  const db = await contentDb(a.accountId);
  const statements = points.map((p, i) =>
    db
      .prepare("INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, ?, ?, ?)")
      .bind(a.accountId, `Place ${i}`, p.latitude, p.longitude),
  );
  for (let i = 0; i < statements.length; i += 500) await db.batch(statements.slice(i, i + 500));
  const { results } = await db
    .prepare("SELECT id, latitude, longitude FROM pinpoints WHERE account_id = ?")
    .bind(a.accountId)
    .all<Place>();
  places = results;
}, 120_000);

/** The brute-force answer: every place within `radius` (and the box), nearest first, ties by id. */
function expected(center: Point, radius = Infinity, box?: BBox) {
  return places
    .filter((p) => !box || contains(box, p))
    .map((p) => ({ id: p.id, d: distance(center, p) }))
    .filter((p) => p.d <= radius)
    .sort((x, y) => x.d - y.d || x.id - y.id);
}

function expectNearest(found: Found[], center: Point, radius?: number, box?: BBox) {
  const want = expected(center, radius, box);
  expect(found.length).toBe(want.length);
  for (let i = 0; i < found.length; i++) {
    expect(found[i]!.distance).toBeCloseTo(want[i]!.d, 3);
    // Equal distances (every place is as far from a pole as its latitude says) may come in id order only.
    if (Math.abs(found[i]!.distance - want[i]!.d) > 1e-3) expect(found[i]!.id).toBe(want[i]!.id);
  }
  expect(new Set(found.map((r) => r.id))).toEqual(new Set(want.map((r) => r.id)));
}

const CENTERS: [string, Point][] = [
  ["the North Pole", { latitude: 90, longitude: 0 }],
  ["89.5°N", { latitude: 89.5, longitude: 100 }],
  ["89°N by the antimeridian", { latitude: 89, longitude: -179.5 }],
  ["85°N", { latitude: 85, longitude: 20 }],
  ["the South Pole", { latitude: -90, longitude: 45 }],
  ["89.3°S", { latitude: -89.3, longitude: -60 }],
];

describe("nearest first near the poles", () => {
  it.each(CENTERS)("from %s without a radius: every place, every page both ways", async (_, c) => {
    const found = await walkBothWays<Found>(
      a,
      `/v3.0/pinpoints?latitude=${c.latitude}&longitude=${c.longitude}&limit=60`,
    );
    expectNearest(found, c);
  });

  it("a crowd within metres of the North Pole at every longitude, with a radius of 100 m", async () => {
    // A page's circle is an eighth of the radius asked for here: scaled down that far, its box must still
    // span every longitude.
    const b = await caller();
    const crowd: Point[] = Array.from({ length: 40 }, (_, i) => ({
      latitude: 90 - (5 + (i % 10)) / 111_195,
      longitude: -180 + i * 9,
    }));
    const db = await contentDb(b.accountId);
    const insert = db.prepare("INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, ?, ?, ?)");
    await db.batch(crowd.map((p, i) => insert.bind(b.accountId, `Crowd ${i}`, p.latitude, p.longitude)));
    const pole = { latitude: 90, longitude: 0 };
    const found = await walkBothWays<Found>(b, "/v3.0/pinpoints?latitude=90&longitude=0&radius=100&limit=5");
    const want = crowd.map((p) => distance(pole, p)).sort((x, y) => x - y);
    expect(found.map((r) => r.distance)).toEqual(want.map((d) => expect.closeTo(d, 3)));
  });

  it.each(CENTERS)("from %s with a radius of 2,500 km and with a bbox", async (_, c) => {
    const radius = 2_500_000;
    expectNearest(
      await walkBothWays<Found>(
        a,
        `/v3.0/pinpoints?latitude=${c.latitude}&longitude=${c.longitude}&radius=${radius}&limit=17`,
      ),
      c,
      radius,
    );
    const box: BBox =
      c.latitude > 0
        ? { minLon: 150, minLat: 55, maxLon: -120, maxLat: 90 }
        : { minLon: -180, minLat: -90, maxLon: 180, maxLat: -60 };
    const bbox = `${box.minLon},${box.minLat},${box.maxLon},${box.maxLat}`;
    expectNearest(
      await walkBothWays<Found>(
        a,
        `/v3.0/pinpoints?latitude=${c.latitude}&longitude=${c.longitude}&bbox=${bbox}&limit=23`,
      ),
      c,
      Infinity,
      box,
    );
  });
});

describe("what a page reads", () => {
  /** The account's D1 as the service has it, adding up what each statement reports it read. */
  async function counting() {
    const db = await contentDb(a.accountId);
    let rowsRead = 0;
    const d1 = {
      prepare: (query: string) => ({
        bind: (...params: unknown[]) => ({
          all: async () => {
            const result = await db
              .prepare(query)
              .bind(...params)
              .all();
            rowsRead += result.meta.rows_read;
            return result;
          },
        }),
      }),
    } as unknown as D1Database;
    return { d1, read: () => rowsRead };
  }

  /** Rows read by the first page of 20 from `at` and by the page after it. */
  async function pagesRead(at: Point): Promise<[number, number]> {
    const first = await counting();
    const page = await searchPinpoints(first.d1, a.accountId, { near: at }, null, 20);
    expect(page.length).toBe(20);
    const last = page[page.length - 1]!;
    const second = await counting();
    const next = await searchPinpoints(
      second.d1,
      a.accountId,
      { near: at },
      { direction: "after", key: [last.distance!, last.id] },
      20,
    );
    expect(next.length).toBe(20);
    return [first.read(), second.read()];
  }

  it("a page at or near a pole reads about as many rows as one on the equator", async () => {
    const [equatorFirst, equatorSecond] = await pagesRead({ latitude: 0, longitude: 10 });
    expect(equatorFirst).toBeGreaterThan(20);
    for (const at of [
      { latitude: 90, longitude: 0 },
      { latitude: 89, longitude: 30 },
      { latitude: -90, longitude: 0 },
      { latitude: -89.5, longitude: 170 },
    ]) {
      const [first, second] = await pagesRead(at);
      expect(first, `first page at ${at.latitude}`).toBeLessThan(4 * equatorFirst);
      expect(second, `second page at ${at.latitude}`).toBeLessThan(4 * equatorSecond);
    }
  });
});
