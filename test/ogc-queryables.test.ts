/**
 * OGC API – Features Part 3, Queryables and Queryables as Query Parameters
 * (docs/ogc.md "Queryables"): each collection's `/queryables` schema, and its
 * items filtered by them, checked against a brute-force answer over seeded
 * pinpoints and events of two accounts, page by page.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { BASE, call, caller, createCategories, createList, json, type Caller } from "./helpers";

type Link = { href: string; rel: string; type: string };
type Feature = { id: number; properties: { category: number | null; tags: string[]; pinpoint?: number } };
type Items = { features: Feature[]; links: Link[] };
type Queryables = {
  $schema: string;
  $id: string;
  type: string;
  title: string;
  properties: Record<string, { title: string; description: string; type: string }>;
  additionalProperties: boolean;
};

const QUERYABLES_REL = "http://www.opengis.net/def/rel/ogc/1.0/queryables";
const TAGS = ["museum", "free", "park", "late"];
const path = (href: string) => href.replace(BASE, "");

let a: Caller;
let b: Caller;
let listId = 0;
let categories: number[] = [];
/** Account a's pinpoints and events as the brute force sees them, by id. */
let pinpoints: { id: number; category: number | null; tags: string[]; listed: boolean }[] = [];
let events: { id: number; pinpoint: number; tags: string[] }[] = [];

/** Every feature id from `url` on, following `next` links; each link must carry `carried`. */
async function walk(who: Caller, url: string, carried: Record<string, string> = {}): Promise<number[]> {
  const ids: number[] = [];
  let next: string | undefined = url;
  while (next) {
    const response = await who.get(next);
    const page = await json<Items>(response);
    expect(response.status, `${next}: ${JSON.stringify(page)}`).toBe(200);
    ids.push(...page.features.map((f) => f.id));
    const link = page.links.find((l) => l.rel === "next");
    if (link) {
      const params = new URL(link.href).searchParams;
      for (const [name, value] of Object.entries(carried)) expect(params.get(name), name).toBe(value);
    }
    next = link && path(link.href);
  }
  return ids;
}

/** Pinpoints with tags and categories, and events at some of them, for `who`; returns what was made. */
async function seed(who: Caller, count: number, categoryIds: (number | null)[]) {
  const features = Array.from({ length: count }, (_, i) => ({
    type: "Feature",
    geometry: { type: "Point", coordinates: [(i * 7) % 40, (i * 3) % 30] },
    properties: {
      name: `Q${i}`,
      tags: TAGS.filter((_, t) => (i >> t) % 2 === 1),
      category: categoryIds[i % categoryIds.length],
    },
  }));
  const imported = await who.send(
    "POST",
    "/v3.0/pinpoints",
    { type: "FeatureCollection", features },
    { "Content-Type": "application/geo+json" },
  );
  expect(imported.status, await imported.clone().text()).toBe(201);
  const { ids } = await json<{ ids: number[] }>(imported);
  const made = [];
  for (let i = 0; i < 12; i++) {
    const pinpoint = ids[i % 3]!;
    const tags = TAGS.filter((_, t) => (i >> t) % 2 === 0);
    const response = await who.send("POST", "/v3.0/events", {
      name: `E${i}`,
      pinpoint,
      tags,
      dates: [{ start: "2026-06-01T10:00:00Z", end: "2026-06-01T12:00:00Z" }],
    });
    expect(response.status, await response.clone().text()).toBe(201);
    made.push({ id: (await json<{ id: number }>(response)).id, pinpoint, tags });
  }
  return { ids, features, events: made };
}

beforeAll(async () => {
  a = await caller();
  b = await caller();
  categories = await createCategories(a.accountId, ["Sights", "Food"]);
  // Account b shares the global category 1 and every tag: a leak across accounts would show.
  const mine = await seed(a, 60, [null, 1, ...categories]);
  await seed(b, 30, [1, null]);
  const list = await createList(a, { name: "Every third" });
  listId = list.id;
  const listed = mine.ids.filter((_, i) => i % 3 === 0);
  await a.send(
    "POST",
    `/v3.0/lists/${listId}/pinpoints`,
    listed.map((id) => ({ id })),
  );
  pinpoints = mine.ids.map((id, i) => ({
    id,
    category: mine.features[i]!.properties.category ?? null,
    tags: mine.features[i]!.properties.tags,
    listed: i % 3 === 0,
  }));
  events = mine.events;
}, 120_000);

describe("OGC API – Features Part 3, Queryables", () => {
  it("/req/queryables/queryables-link, get-queryables-op, get-queryables-response: each collection links its queryables, a JSON Schema", async () => {
    const { collections } = await json<{ collections: { id: string; links: Link[] }[] }>(
      await a.get("/ogc/collections"),
    );
    const expected: Record<string, string[]> = {
      pinpoints: ["category", "tags"],
      events: ["pinpoint", "tags"],
      [`list-${listId}`]: ["category", "tags"],
    };
    expect(collections.map((c) => c.id)).toEqual(Object.keys(expected));
    for (const collection of collections) {
      const link = collection.links.find((l) => l.rel === QUERYABLES_REL);
      expect(link?.type, collection.id).toBe("application/schema+json");
      const url = `/ogc/collections/${collection.id}/queryables`;
      expect(path(link!.href)).toBe(url);
      // With the token in the query, `$id` is still the resource's URL without query parameters (B).
      for (const [viaQuery, query] of [
        [false, ""],
        [false, "?f=json"],
        [true, `?access_token=${a.token}`],
      ] as const) {
        const response = viaQuery ? await call(`${url}${query}`) : await a.get(`${url}${query}`);
        expect(response.status, `${url}${query}`).toBe(200);
        expect(response.headers.get("Content-Type")).toBe("application/schema+json");
        const schema = await json<Queryables>(response);
        expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
        expect(schema.$id).toBe(`${BASE}${url}`);
        expect(schema.type).toBe("object");
        expect(schema.title).toBeTruthy();
        expect(schema.additionalProperties).toBe(false);
        expect(Object.keys(schema.properties)).toEqual(expected[collection.id]);
        // C, and /rec/queryables/queryables-schema A B.
        for (const [name, property] of Object.entries(schema.properties)) {
          expect(property.title, name).toBeTruthy();
          expect(property.description, name).toBeTruthy();
          expect(["integer", "array"], name).toContain(property.type);
        }
      }
    }
    expect((await a.get("/ogc/collections/list-999999/queryables")).status).toBe(404);
    expect((await b.get(`/ogc/collections/list-${listId}/queryables`)).status).toBe(404);
    expect((await a.get("/ogc/collections/pinpoints/queryables?category=1")).status).toBe(400);
  });

  it("/req/queryables-query-parameters/parameters: pinpoints filtered by category and tags (brute force), paged", async () => {
    const has = (tags: string[], wanted: string[]) => wanted.every((t) => tags.includes(t));
    const cases: [string, (p: (typeof pinpoints)[number]) => boolean][] = [
      [`category=${categories[0]}`, (p) => p.category === categories[0]],
      ["category=1", (p) => p.category === 1],
      ["tags=museum", (p) => has(p.tags, ["museum"])],
      ["tags=museum,late", (p) => has(p.tags, ["museum", "late"])],
      [`category=${categories[1]}&tags=free`, (p) => p.category === categories[1] && has(p.tags, ["free"])],
      ["category=999999", () => false],
    ];
    for (const [query, matches] of cases) {
      const carried = Object.fromEntries(new URLSearchParams(query));
      expect(await walk(a, `/ogc/collections/pinpoints/items?limit=4&${query}`, carried), query).toEqual(
        pinpoints.filter(matches).map((p) => p.id),
      );
      expect(await walk(a, `/ogc/collections/list-${listId}/items?limit=3&${query}`, carried), query).toEqual(
        pinpoints.filter((p) => p.listed && matches(p)).map((p) => p.id),
      );
    }
    // With a box too: both filters hold (the box holds the features at longitudes 0 to 10).
    const boxed = await walk(a, "/ogc/collections/pinpoints/items?limit=2&bbox=0,0,10,30&category=1", {
      bbox: "0,0,10,30",
      category: "1",
    });
    const inBox = (i: number) => (i * 7) % 40 <= 10;
    expect(boxed).toEqual(pinpoints.filter((p, i) => p.category === 1 && inBox(i)).map((p) => p.id));
  });

  it("/req/queryables-query-parameters/parameters: events filtered by pinpoint and tags (brute force), paged", async () => {
    const cases: [string, (e: (typeof events)[number]) => boolean][] = [
      [`pinpoint=${events[0]!.pinpoint}`, (e) => e.pinpoint === events[0]!.pinpoint],
      ["tags=park", (e) => e.tags.includes("park")],
      [
        `pinpoint=${events[1]!.pinpoint}&tags=museum`,
        (e) => e.pinpoint === events[1]!.pinpoint && e.tags.includes("museum"),
      ],
    ];
    for (const [query, matches] of cases) {
      const carried = Object.fromEntries(new URLSearchParams(query));
      expect(await walk(a, `/ogc/collections/events/items?limit=2&${query}`, carried), query).toEqual(
        events.filter(matches).map((e) => e.id),
      );
    }
    // Another account's pinpoint has no events of the caller's.
    const theirs = await json<Items>(await b.get("/ogc/collections/pinpoints/items?limit=1"));
    expect(await walk(a, `/ogc/collections/events/items?pinpoint=${theirs.features[0]!.id}`)).toEqual([]);
  });

  it("/req/queryables-query-parameters/parameters: another account's features never match", async () => {
    const mine = new Set([...pinpoints.map((p) => p.id), ...events.map((e) => e.id)]);
    for (const url of [
      "/ogc/collections/pinpoints/items?limit=1000&category=1",
      "/ogc/collections/pinpoints/items?limit=1000&tags=museum",
      "/ogc/collections/events/items?limit=1000&tags=museum",
    ]) {
      const page = await json<Items>(await a.get(url));
      expect(page.features.length, url).toBeGreaterThan(0);
      for (const f of page.features) expect(mine.has(f.id), url).toBe(true);
    }
    const theirs = await json<Items>(await b.get("/ogc/collections/pinpoints/items?limit=1000&category=1"));
    expect(theirs.features).toHaveLength(15);
    for (const f of theirs.features) expect(mine.has(f.id)).toBe(false);
  });

  it("/req/core/query-param-invalid: a bad queryable value, or another collection's queryable, is a 400 naming it", async () => {
    for (const [url, parameter] of [
      ["/ogc/collections/pinpoints/items?category=0", "category"],
      ["/ogc/collections/pinpoints/items?category=x", "category"],
      ["/ogc/collections/pinpoints/items?category=1,2", "category"],
      ["/ogc/collections/pinpoints/items?category=", "category"],
      ["/ogc/collections/pinpoints/items?tags=", "tags"],
      [`/ogc/collections/pinpoints/items?tags=${"t,".repeat(20)}t`, "tags"],
      ["/ogc/collections/events/items?pinpoint=-3", "pinpoint"],
      ["/ogc/collections/pinpoints/items?pinpoint=3", "pinpoint"],
      [`/ogc/collections/list-${listId}/items?pinpoint=3`, "pinpoint"],
      ["/ogc/collections/events/items?category=1", "category"],
      ["/ogc/collections/pinpoints/items?name=Q1", "name"],
    ] as const) {
      const response = await a.get(url);
      expect(response.status, url).toBe(400);
      const body = await json<{ errors: { parameter: string; detail: string }[] }>(response);
      expect(
        body.errors.map((e) => e.parameter),
        url,
      ).toEqual([parameter]);
    }
  });

  it("a next link is bound to its filters: changing one refuses the cursor", async () => {
    const page = await json<Items>(await a.get("/ogc/collections/pinpoints/items?limit=2&category=1"));
    const next = new URL(page.links.find((l) => l.rel === "next")!.href);
    expect((await a.get(`${next.pathname}${next.search}`)).status).toBe(200);
    next.searchParams.set("category", String(categories[0]));
    expect((await a.get(`${next.pathname}${next.search}`)).status).toBe(400);
  });
});
