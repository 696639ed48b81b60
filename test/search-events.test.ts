/**
 * GET /v3.0/events with from/to, bbox, latitude/longitude/radius, q, tags and
 * updated_since, checked against a brute-force answer computed here: the same
 * events in the same order across every page in both directions. Occurrences
 * include long ones that start before the window, instants (start = end),
 * several per event and equal starts.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { contains, distance, type BBox, type Point } from "../src/db/search/geo";
import { type Caller, caller, contentDb, createPinpoint, json, walkBothWays } from "./helpers";

vi.setConfig({ testTimeout: 60_000 });

type Occurrence = { start: number; end: number };
type Row = { id: number; name: string; tags: string[]; dates: Occurrence[]; place: Point; updated_at: number };
type Found = { id: number; distance?: number; dates: { start: string; end: string }[] };
type Page = { results: Found[]; next: string | null; previous: string | null };

let seed = 977;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;

const YEAR_START = Date.parse("2027-01-01T00:00:00Z");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NAMES = ["Concert", "Marché", "Fête", "Exposition", "Festival", "Théâtre"];
const TAGS = ["music", "free", "kids", "outdoor"];

let a: Caller;
let b: Caller;
let rows: Row[];

function randomDates(i: number): Occurrence[] {
  const count = 1 + Math.floor(random() * 4);
  const dates: Occurrence[] = [];
  for (let k = 0; k < count; k++) {
    const start = YEAR_START + Math.floor(random() * 365) * DAY + Math.floor(random() * 24) * HOUR;
    const length = i % 11 === 0 ? 0 : i % 13 === 0 ? Math.floor(random() * 40) * DAY : Math.floor(random() * 6) * HOUR;
    dates.push({ start, end: start + length });
  }
  if (i % 17 === 0) dates.push({ ...dates[0]! });
  return dates;
}

async function seedAccount(who: Caller, places: number, count: number) {
  const db = await contentDb(who.accountId);
  const pins: { id: number; place: Point }[] = [];
  for (let i = 0; i < places; i++) {
    const place =
      i % 10 === 0
        ? { latitude: -17 + random(), longitude: i % 20 === 0 ? 179.5 + random() * 0.5 : -180 + random() * 0.5 }
        : { latitude: 48.8 + random() * 0.1, longitude: 2.25 + random() * 0.2 };
    const row = await db
      .prepare("INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, 'p', ?, ?) RETURNING id")
      .bind(who.accountId, place.latitude, place.longitude)
      .first<{ id: number }>();
    pins.push({ id: row!.id, place });
  }
  const statements = [];
  for (let i = 0; i < count; i++) {
    const pin = pick(pins);
    const word = pick(NAMES);
    statements.push(
      db
        .prepare(
          "INSERT INTO events (account_id, pinpoint_id, name, description, description_text, dates, tags, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(
          who.accountId,
          pin.id,
          `${word} ${pick(["du soir", "d'hiver", "jazz", "rock"])}`,
          `<p>${pick(NAMES)}</p>`,
          pick(NAMES),
          JSON.stringify(randomDates(i)),
          JSON.stringify(TAGS.filter(() => random() < 0.3)),
          1_700_000_000_000 + i,
        ),
    );
  }
  for (let i = 0; i < statements.length; i += 500) await db.batch(statements.slice(i, i + 500));
}

beforeAll(async () => {
  a = await caller();
  b = await caller();
  await seedAccount(a, 120, 1500);
  await seedAccount(b, 20, 200);
  const { results } = await (
    await contentDb(a.accountId)
  )
    .prepare(
      "SELECT e.id, e.name, e.tags, e.dates, e.updated_at, p.latitude, p.longitude FROM events e JOIN pinpoints p ON p.id = e.pinpoint_id WHERE e.account_id = ? ORDER BY e.id",
    )
    .bind(a.accountId)
    .all<{
      id: number;
      name: string;
      tags: string;
      dates: string;
      updated_at: number;
      latitude: number;
      longitude: number;
    }>();
  rows = results.map((r) => ({
    id: r.id,
    name: r.name,
    tags: JSON.parse(r.tags) as string[],
    dates: JSON.parse(r.dates) as Occurrence[],
    place: { latitude: r.latitude, longitude: r.longitude },
    updated_at: r.updated_at,
  }));
}, 120_000);

const walk = (who: Caller, path: string) => walkBothWays<Found>(who, path);

const ids = (found: { id: number }[]) => found.map((r) => r.id);

/** The start of the first occurrence overlapping [from, to), or undefined. */
function firstOverlap(r: Row, from = -Infinity, to = Infinity): number | undefined {
  const starts = r.dates.filter((d) => d.start < to && (d.end > from || d.start >= from)).map((d) => d.start);
  return starts.length ? Math.min(...starts) : undefined;
}

function expectedByTime(from?: number, to?: number, keep: (r: Row) => boolean = () => true): number[] {
  return rows
    .filter(keep)
    .map((r) => ({ id: r.id, s: firstOverlap(r, from, to) }))
    .filter((r) => r.s !== undefined)
    .sort((x, y) => x.s! - y.s! || x.id - y.id)
    .map((r) => r.id);
}

const iso = (ms: number) => new Date(ms).toISOString();
const WEEKEND = [Date.parse("2027-06-12T00:00:00+02:00"), Date.parse("2027-06-14T00:00:00+02:00")] as const;

describe("from/to", () => {
  it("a weekend: events overlapping it, by the start of their first overlapping occurrence", async () => {
    const [from, to] = WEEKEND;
    const found = await walk(
      a,
      `/v3.0/events?from=${encodeURIComponent("2027-06-12T00:00:00+02:00")}&to=${iso(to)}&limit=7`,
    );
    const expected = expectedByTime(from, to);
    expect(expected.length).toBeGreaterThan(10);
    expect(ids(found)).toEqual(expected);
    // Unchanged in shape: every occurrence is still there.
    const one = found[0]!;
    expect(one.dates.length).toBe(rows.find((r) => r.id === one.id)!.dates.length);
  });

  it.each([
    ["a month", Date.parse("2027-03-01T00:00:00Z"), Date.parse("2027-04-01T00:00:00Z")],
    ["from only", Date.parse("2027-11-20T00:00:00Z"), undefined],
    ["to only", undefined, Date.parse("2027-01-20T00:00:00Z")],
    ["an instant's millisecond", YEAR_START + 100 * DAY + 5 * HOUR, YEAR_START + 100 * DAY + 5 * HOUR + 1],
  ])("%s", async (_, from, to) => {
    const query = [from === undefined ? "" : `from=${iso(from)}`, to === undefined ? "" : `to=${iso(to)}`]
      .filter(Boolean)
      .join("&");
    const found = await walk(a, `/v3.0/events?${query}&limit=97`);
    expect(ids(found)).toEqual(expectedByTime(from, to));
  });

  it("long occurrences that started before the window count", async () => {
    const [from, to] = WEEKEND;
    const early = rows.filter((r) => r.dates.some((d) => d.start < from && d.end > from));
    expect(early.length).toBeGreaterThan(0);
    const found = ids(await walk(a, `/v3.0/events?from=${iso(from)}&to=${iso(to)}&limit=50`));
    for (const r of early) expect(found).toContain(r.id);
  });

  it("composes with bbox, a point and radius, q, tags and updated_since", async () => {
    const [from, to] = [Date.parse("2027-05-01T00:00:00Z"), Date.parse("2027-08-01T00:00:00Z")];
    const box: BBox = { minLon: 179, minLat: -18, maxLon: -179, maxLat: -15 };
    expect(ids(await walk(a, `/v3.0/events?from=${iso(from)}&to=${iso(to)}&bbox=179,-18,-179,-15&limit=9`))).toEqual(
      expectedByTime(from, to, (r) => contains(box, r.place)),
    );
    const center = { latitude: 48.85, longitude: 2.35 };
    expect(
      ids(
        await walk(a, `/v3.0/events?from=${iso(from)}&to=${iso(to)}&latitude=48.85&longitude=2.35&radius=3000&limit=9`),
      ),
    ).toEqual(expectedByTime(from, to, (r) => distance(center, r.place) <= 3000));
    expect(ids(await walk(a, `/v3.0/events?from=${iso(from)}&to=${iso(to)}&tags=music&q=jazz&limit=9`))).toEqual(
      expectedByTime(from, to, (r) => r.tags.includes("music") && r.name.includes("jazz")),
    );
    const since = rows[700]!.updated_at;
    expect(ids(await walk(a, `/v3.0/events?from=${iso(from)}&updated_since=${iso(since)}&limit=50`))).toEqual(
      expectedByTime(from, undefined, (r) => r.updated_at >= since),
    );
  });

  it("an event whose dates change between pages moves with them", async () => {
    const c = await caller();
    const pin = await createPinpoint(c);
    const made = [];
    for (let i = 0; i < 8; i++) {
      const start = iso(YEAR_START + i * DAY);
      const r = await c.send("POST", "/v3.0/events", {
        name: `E${i}`,
        pinpoint: pin.id,
        dates: [{ start, end: start }],
      });
      made.push((await json<{ id: number }>(r)).id);
    }
    const url = `/v3.0/events?from=${iso(YEAR_START)}&limit=3`;
    const first: Page = await (await c.get(url)).json();
    expect(ids(first.results)).toEqual(made.slice(0, 3));
    // A seen event moved to the end, an unseen one moved before the cursor.
    await c.send("PUT", `/v3.0/events/${made[0]}`, {
      dates: [{ start: iso(YEAR_START + 30 * DAY), end: iso(YEAR_START + 30 * DAY) }],
    });
    await c.send("PUT", `/v3.0/events/${made[5]}`, {
      dates: [{ start: iso(YEAR_START - DAY), end: iso(YEAR_START + 1) }],
    });
    const rest: Found[] = [];
    let next = first.next;
    while (next) {
      const page: Page = await (await c.get(next)).json();
      rest.push(...page.results);
      next = page.next;
    }
    expect(ids(rest)).toEqual([made[3], made[4], made[6], made[7], made[0]]);
  });
});

describe("without a time", () => {
  it("nearest first by the event's pinpoint, ties by id", async () => {
    const center = { latitude: -16.5, longitude: 179.9 };
    const found = await walk(a, "/v3.0/events?latitude=-16.5&longitude=179.9&radius=200000&limit=31");
    const want = rows
      .map((r) => ({ id: r.id, d: distance(center, r.place) }))
      .filter((r) => r.d <= 200_000)
      .sort((x, y) => x.d - y.d || x.id - y.id);
    expect(want.length).toBeGreaterThan(20);
    expect(new Set(ids(found))).toEqual(new Set(want.map((r) => r.id)));
    for (let i = 1; i < found.length; i++) {
      const [p, q] = [found[i - 1]!, found[i]!];
      expect(q.distance! > p.distance! || (q.distance === p.distance && q.id > p.id)).toBe(true);
    }
  });

  it("every event, nearest first, without a radius", async () => {
    const found = await walk(a, "/v3.0/events?latitude=0&longitude=0&limit=400");
    expect(found.length).toBe(rows.length);
  });

  it("every event, in the same order, with a radius past half the circumference (20,037,508, or any finite one)", async () => {
    const everywhere = ids(await walk(a, "/v3.0/events?latitude=0&longitude=0&limit=400"));
    for (const radius of ["20037508", "1e300"])
      expect(ids(await walk(a, `/v3.0/events?latitude=0&longitude=0&radius=${radius}&limit=400`)), radius).toEqual(
        everywhere,
      );
  });

  it("q by tier: name, then name or tags, then anywhere", async () => {
    const fold = (t: string) => t.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase();
    const found = await walk(a, "/v3.0/events?q=fete&limit=60");
    const tierOf = (r: Row) => (fold(r.name).includes("fete") ? 1 : 3);
    const descriptions = await (
      await contentDb(a.accountId)
    )
      .prepare("SELECT id, description_text AS t FROM events WHERE account_id = ?")
      .bind(a.accountId)
      .all<{ id: number; t: string }>();
    const text = new Map(descriptions.results.map((d) => [d.id, fold(d.t)]));
    const want = rows
      .filter((r) => fold(r.name).includes("fete") || text.get(r.id)!.includes("fete"))
      .sort((x, y) => tierOf(x) - tierOf(y) || x.id - y.id);
    expect(ids(found)).toEqual(want.map((r) => r.id));
  });

  it("tags and bbox in id order", async () => {
    const found = await walk(a, "/v3.0/events?tags=free,kids&bbox=2.2,48.8,2.5,48.95&limit=40");
    const box: BBox = { minLon: 2.2, minLat: 48.8, maxLon: 2.5, maxLat: 48.95 };
    expect(ids(found)).toEqual(
      rows.filter((r) => r.tags.includes("free") && r.tags.includes("kids") && contains(box, r.place)).map((r) => r.id),
    );
  });

  it("only the caller's events", async () => {
    const mine = new Set(rows.map((r) => r.id));
    for (const url of [
      "/v3.0/events?from=2027-01-01T00:00:00Z&limit=1000",
      "/v3.0/events?latitude=48.85&longitude=2.35&limit=1000",
      "/v3.0/events?q=concert&limit=1000",
    ]) {
      const theirs = await walk(b, url);
      expect(theirs.length).toBeGreaterThan(0);
      expect(
        theirs.some((r) => mine.has(r.id)),
        url,
      ).toBe(false);
    }
  });
});

describe("bad values: 400 naming the parameter", () => {
  it.each([
    ["from=2027-02-01T00:00:00Z&to=2027-01-01T00:00:00Z", "from"],
    ["from=2027-01-01T00:00:00Z&to=2027-01-01T00:00:00Z", "from"],
    ["from=tomorrow", "from"],
    ["to=2027-13-01T00:00:00Z", "to"],
    ["bbox=1,2,3", "bbox"],
    ["latitude=91&longitude=0", "latitude"],
    ["latitude=0&longitude=0&radius=-5", "radius"],
    [`q=${"é".repeat(201)}`, "q"],
    ["q=...", "q"],
    ["tags=,", "tags"],
    ["updated_since=2027", "updated_since"],
  ])("%s", async (query, parameter) => {
    const response = await a.get(`/v3.0/events?${query}`);
    expect(response.status).toBe(400);
    const body = await json<{ errors: { parameter: string }[] }>(response);
    expect(body.errors.map((e) => e.parameter)).toContain(parameter);
  });

  it("another account's pinpoint as a filter is 403", async () => {
    const pin = await createPinpoint(b);
    expect((await a.get(`/v3.0/events?pinpoint=${pin.id}&from=2027-01-01T00:00:00Z`)).status).toBe(403);
  });
});
