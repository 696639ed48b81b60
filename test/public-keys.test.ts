/**
 * Publishable keys (src/keys/, src/auth/publishable-keys.ts) and the public
 * cache (src/http/middleware/public-cache.ts) against real D1, the real rate-limit
 * binding and the runtime's Cache API: managing keys, what a key reads and
 * never reads (checked against the fixture's own answer), writes refused,
 * origins, revocation and expiry, the limit per viewer address, freshness
 * after each kind of write, and HTTP caching (private for tokens, 304 through
 * the cache).
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { FRESH_MS } from "../src/auth/publishable-keys";
import { parseConfig } from "../src/core/config";
import { call, caller, fetchWith, json, smallLimits, windowWithRoom, type Caller } from "./helpers";
import { mediaFile } from "./media-fixtures";

type Page<T> = { results: T[]; next: string | null };
type Key = {
  id: number;
  key: string;
  name: string;
  key_prefix: string;
  lists: number[] | null;
  origins: string[] | null;
  expires_at: string | null;
  created_at: string;
};

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

async function created<T = { id: number }>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(201);
  return json<T>(response);
}

async function createKey(owner: Caller, body: Record<string, unknown>): Promise<Key> {
  return created<Key>(await owner.send("POST", "/v3.0/keys", { name: "map", ...body }));
}

/** A GET with a publishable key: `?key=` unless `header` asks for the Authorization header. */
function withKey(key: string, path: string, headers: Record<string, string> = {}, header = false): Promise<Response> {
  if (header) return call(path, { headers: { Authorization: `Bearer ${key}`, ...headers } });
  return call(withKeyUrl(key, path), { headers });
}

/** `path` with `?key=`. */
function withKeyUrl(key: string, path: string): string {
  const url = new URL(path, "https://x.test");
  url.searchParams.set("key", key);
  return `${url.pathname}${url.search}`;
}

/** Every id of every page of a collection read with a key, following `next`. */
async function allIds(key: string, path: string): Promise<number[]> {
  const ids: number[] = [];
  let response = await withKey(key, path);
  for (;;) {
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    const page = await json<Page<{ id: number }>>(response);
    ids.push(...page.results.map((item) => item.id));
    if (!page.next) return ids;
    const next = new URL(page.next);
    response = await call(`${next.pathname}${next.search}`);
  }
}

const sorted = (ids: Iterable<number>) => [...ids].sort((a, b) => a - b);

/**
 * Stops the service's clock past the freshness of every key cache entry read so far (FRESH_MS), as a
 * reader who waited that long would find it: the next request reads its key again, at the time returned.
 */
function stopPastFreshness(): number {
  const at = clock.now() + FRESH_MS;
  clock.now = () => at;
  return at;
}

/**
 * The fixture: account A with lists L1 (p1, p2) and L2 (p3), an unlisted p4,
 * events at p1, p3 and p4; account B with its own list and pinpoint. Every
 * pinpoint is in Lyon, named "museum …", tagged "free", in category 1, so any
 * search that finds one finds them all.
 */
type Fixture = {
  a: Caller;
  b: Caller;
  lists: { l1: number; l2: number; other: number };
  pins: { p1: number; p2: number; p3: number; p4: number; other: number };
  events: { e1: number; e3: number; e4: number; other: number };
};

async function fixture(): Promise<Fixture> {
  const [a, b] = await Promise.all([caller(), caller()]);
  const place = async (owner: Caller, name: string, offset: number) =>
    (
      await created(
        await owner.send("POST", "/v3.0/pinpoints", {
          name: `museum ${name}`,
          latitude: 45.76 + offset / 1000,
          longitude: 4.83 + offset / 1000,
          tags: ["free"],
          category: 1,
        }),
      )
    ).id;
  const list = async (owner: Caller, name: string, members: number[]) => {
    const { id } = await created(await owner.send("POST", "/v3.0/lists", { name }));
    const added = await owner.send(
      "POST",
      `/v3.0/lists/${id}/pinpoints`,
      members.map((member) => ({ id: member })),
    );
    expect(added.status).toBe(200);
    return id;
  };
  const event = async (owner: Caller, pinpoint: number) =>
    (
      await created(
        await owner.send("POST", "/v3.0/events", {
          name: "museum night",
          pinpoint,
          dates: [{ start: "2030-06-01T18:00:00Z", end: "2030-06-01T23:00:00Z" }],
          tags: ["free"],
        }),
      )
    ).id;
  const pins = {
    p1: await place(a, "one", 1),
    p2: await place(a, "two", 2),
    p3: await place(a, "three", 3),
    p4: await place(a, "four", 4),
    other: await place(b, "other", 5),
  };
  const lists = {
    l1: await list(a, "first", [pins.p1, pins.p2]),
    l2: await list(a, "second", [pins.p3]),
    other: await list(b, "theirs", [pins.other]),
  };
  const events = {
    e1: await event(a, pins.p1),
    e3: await event(a, pins.p3),
    e4: await event(a, pins.p4),
    other: await event(b, pins.other),
  };
  return { a, b, lists, pins, events };
}

describe("managing publishable keys", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });

  it("creates a key shown once, lists it without the key, and revokes it", async () => {
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const key = await createKey(f.a, {
      name: "city map",
      lists: [f.lists.l1, f.lists.l1],
      origins: ["https://maps.example.com", "https://*.example.org"],
      expires_at: expires,
    });
    expect(key.key).toMatch(/^pk_[A-Za-z0-9_-]{22,}$/);
    expect(key).toMatchObject({
      name: "city map",
      lists: [f.lists.l1],
      origins: ["https://maps.example.com", "https://*.example.org"],
      expires_at: expires,
      key_prefix: key.key.slice(0, 9),
    });
    const got = await json<Key>(await f.a.get(`/v3.0/keys/${key.id}`));
    expect(got).toEqual({ ...key, key: undefined });
    const page = await json<Page<Key>>(await f.a.get("/v3.0/keys"));
    expect(page.results.map((k) => k.id)).toContain(key.id);
    expect(page.results.every((k) => !("key" in k))).toBe(true);

    expect((await f.b.get(`/v3.0/keys/${key.id}`)).status).toBe(403);
    expect((await f.b.send("DELETE", `/v3.0/keys/${key.id}`)).status).toBe(403);
    expect((await f.a.send("DELETE", `/v3.0/keys/${key.id}`)).status).toBe(204);
    expect((await f.a.get(`/v3.0/keys/${key.id}`)).status).toBe(404);
    expect((await f.a.send("DELETE", `/v3.0/keys/${key.id}`)).status).toBe(404);
  });

  it("refuses another account's list, and creates nothing", async () => {
    const before = await json<Page<Key>>(await f.a.get("/v3.0/keys?limit=1000"));
    const response = await f.a.send("POST", "/v3.0/keys", { name: "x", lists: [f.lists.l1, f.lists.other] });
    expect(response.status).toBe(400);
    const body = await json<{ errors: { pointer: string }[] }>(response);
    expect(body.errors).toEqual([expect.objectContaining({ pointer: "/lists/1" })]);
    const after = await json<Page<Key>>(await f.a.get("/v3.0/keys?limit=1000"));
    expect(after.results).toHaveLength(before.results.length);
  });

  it("validates every field", async () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ name: "" }, "/name"],
      [{ lists: [] }, "/lists"],
      [{ lists: [0] }, "/lists/0"],
      [{ origins: ["maps.example.com"] }, "/origins/0"],
      [{ origins: ["https://maps.example.com/"] }, "/origins/0"],
      [{ origins: ["https://maps.example.com/path"] }, "/origins/0"],
      [{ origins: ["HTTPS://Maps.Example.com"] }, "/origins/0"],
      [{ origins: ["https://*.org"] }, "/origins/0"],
      [{ origins: ["https://a.*.example.org"] }, "/origins/0"],
      [{ origins: ["ftp://example.org"] }, "/origins/0"],
      [{ origins: ["https://maps.example.com'"] }, "/origins/0"],
      [{ origins: [] }, "/origins"],
      [{ expires_at: "2001-01-01T00:00:00Z" }, "/expires_at"],
      [{ expires_at: "tomorrow" }, "/expires_at"],
    ];
    for (const [body, pointer] of bad) {
      const response = await f.a.send("POST", "/v3.0/keys", { name: "x", ...body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      const problem = await json<{ errors: { pointer: string }[] }>(response);
      expect(
        problem.errors.map((e) => e.pointer),
        JSON.stringify(body),
      ).toContain(pointer);
    }
  });

  it("is managed only with an access token: a key cannot read or create keys", async () => {
    const { key } = await createKey(f.a, {});
    expect((await withKey(key, "/v3.0/keys")).status).toBe(403);
    expect((await withKey(key, "/v3.0/keys", {}, true)).status).toBe(403);
  });
});

describe("what a key reads", () => {
  let f: Fixture;
  let listKey: string;
  let everyListKey: string;
  beforeAll(async () => {
    f = await fixture();
    listKey = (await createKey(f.a, { lists: [f.lists.l1] })).key;
    everyListKey = (await createKey(f.a, {})).key;
  });

  it("reads its lists, their pinpoints and the events at them, by every query, and nothing else", async () => {
    const { pins, lists, events } = f;
    const cases = [
      { key: listKey, lists: [lists.l1], pins: [pins.p1, pins.p2], events: [events.e1] },
      {
        key: everyListKey,
        lists: [lists.l1, lists.l2],
        pins: [pins.p1, pins.p2, pins.p3],
        events: [events.e1, events.e3],
      },
    ];
    const pinpointQueries = [
      "",
      "?limit=1",
      "?bbox=4.0,45.0,5.0,46.0",
      "?latitude=45.76&longitude=4.83",
      "?latitude=45.76&longitude=4.83&radius=5000",
      "?q=museum",
      "?tags=free",
      "?category=1",
      "?updated_since=2000-01-01T00:00:00Z",
      "?q=museum&bbox=4.0,45.0,5.0,46.0&limit=1",
    ];
    const eventQueries = [
      "",
      "?limit=1",
      "?from=2030-01-01T00:00:00Z",
      "?q=museum",
      "?bbox=4.0,45.0,5.0,46.0",
      "?tags=free",
    ];
    for (const expected of cases) {
      expect(sorted(await allIds(expected.key, "/v3.0/lists"))).toEqual(expected.lists);
      for (const query of pinpointQueries) {
        expect(sorted(await allIds(expected.key, `/v3.0/pinpoints${query}`)), query).toEqual(expected.pins);
      }
      for (const query of eventQueries) {
        expect(sorted(await allIds(expected.key, `/v3.0/events${query}`)), query).toEqual(expected.events);
      }
      for (const id of expected.pins) expect((await withKey(expected.key, `/v3.0/pinpoints/${id}`)).status).toBe(200);
      for (const id of expected.events) expect((await withKey(expected.key, `/v3.0/events/${id}`)).status).toBe(200);
      for (const id of expected.lists) expect((await withKey(expected.key, `/v3.0/lists/${id}`)).status).toBe(200);
      // Everything else is simply not there: never a 403 that would confirm a foreign id.
      const hiddenPins = Object.values(pins).filter((id) => !expected.pins.includes(id));
      const hiddenEvents = Object.values(events).filter((id) => !expected.events.includes(id));
      const hiddenLists = Object.values(lists).filter((id) => !expected.lists.includes(id));
      for (const id of hiddenPins) {
        expect((await withKey(expected.key, `/v3.0/pinpoints/${id}`)).status, `pinpoint ${id}`).toBe(404);
        expect((await withKey(expected.key, `/v3.0/events?pinpoint=${id}`)).status, `events at ${id}`).toBe(404);
      }
      for (const id of hiddenEvents) expect((await withKey(expected.key, `/v3.0/events/${id}`)).status).toBe(404);
      for (const id of hiddenLists) {
        expect((await withKey(expected.key, `/v3.0/lists/${id}`)).status).toBe(404);
        expect((await withKey(expected.key, `/v3.0/pinpoints?list=${id}`)).status).toBe(404);
        expect((await withKey(expected.key, `/ogc/collections/list-${id}`)).status).toBe(404);
      }
      for (const id of expected.lists) {
        const members = sorted(await allIds(expected.key, `/v3.0/pinpoints?list=${id}`));
        expect(members.every((member) => expected.pins.includes(member))).toBe(true);
      }
    }
  });

  it("answers GeoJSON and OGC with the same rows", async () => {
    const geo = await withKey(listKey, "/v3.0/pinpoints?format=geojson");
    expect(geo.status).toBe(200);
    const collection = await json<{ features: { id: number }[] }>(geo);
    expect(sorted(collection.features.map((feature) => feature.id))).toEqual([f.pins.p1, f.pins.p2]);

    const collections = await json<{ collections: { id: string }[] }>(await withKey(listKey, "/ogc/collections"));
    expect(collections.collections.map((c) => c.id)).toEqual([`list-${f.lists.l1}`]);
    expect((await withKey(listKey, "/ogc/collections/pinpoints")).status).toBe(404);
    expect((await withKey(listKey, "/ogc/collections/events/items")).status).toBe(404);
    const items = await json<{ features: { id: number }[]; links: { rel: string; href: string }[] }>(
      await withKey(listKey, `/ogc/collections/list-${f.lists.l1}/items`),
    );
    expect(sorted(items.features.map((feature) => feature.id))).toEqual([f.pins.p1, f.pins.p2]);
    expect(items.links.find((l) => l.rel === "self")?.href).toContain(`key=${listKey}`);
    expect((await withKey(listKey, `/ogc/collections/list-${f.lists.l1}/items/${f.pins.p3}`)).status).toBe(404);
  });

  it("reads every category, as the account does", async () => {
    expect((await withKey(listKey, "/v3.0/categories/1")).status).toBe(200);
    expect((await withKey(listKey, "/v3.0/categories")).status).toBe(200);
  });

  it("refuses every write, the keys, the change feed and the token endpoint", async () => {
    const writes: [string, string, unknown][] = [
      ["POST", "/v3.0/pinpoints", { name: "x", latitude: 1, longitude: 1 }],
      ["PUT", `/v3.0/pinpoints/${f.pins.p1}`, { name: "x" }],
      ["DELETE", `/v3.0/pinpoints/${f.pins.p1}`, undefined],
      ["POST", "/v3.0/lists", { name: "x" }],
      ["PUT", `/v3.0/lists/${f.lists.l1}`, { name: "x" }],
      ["DELETE", `/v3.0/lists/${f.lists.l1}`, undefined],
      ["POST", `/v3.0/lists/${f.lists.l1}/pinpoints`, [{ id: f.pins.p3 }]],
      ["DELETE", `/v3.0/lists/${f.lists.l1}/pinpoints`, [{ id: f.pins.p1 }]],
      ["POST", "/v3.0/events", { name: "x", pinpoint: f.pins.p1, dates: [] }],
      ["PUT", `/v3.0/events/${f.events.e1}`, { name: "x" }],
      ["DELETE", `/v3.0/events/${f.events.e1}`, undefined],
      ["POST", "/v3.0/categories", { name: "x" }],
      ["DELETE", "/v3.0/categories/1", undefined],
      ["POST", "/v3.0/keys", { name: "x" }],
      ["GET", "/v3.0/changes", undefined],
    ];
    for (const [method, path, body] of writes) {
      const response = await call(`${path}${path.includes("?") ? "&" : "?"}key=${listKey}`, {
        method,
        headers: body === undefined ? {} : { "Content-Type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.headers.get("Content-Type")).toBe("application/problem+json");
    }
    // Nothing changed: the pinpoint is still there, still in its list.
    expect(sorted(await allIds(listKey, `/v3.0/pinpoints?list=${f.lists.l1}`))).toEqual([f.pins.p1, f.pins.p2]);

    const token = await call("/v3.0/oauth2/token", {
      method: "POST",
      headers: { Authorization: `Bearer ${listKey}`, "Content-Type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect([400, 401]).toContain(token.status);
    expect(await token.text()).not.toContain('access_token":');
  });

  it("is 401 when unknown or malformed, and 400 beside another credential", async () => {
    expect((await withKey("pk_unknownunknownunknownunknown", "/v3.0/lists")).status).toBe(401);
    expect((await withKey("pk_!", "/v3.0/lists")).status).toBe(401);
    const both = await call(`/v3.0/lists?key=${listKey}`, { headers: { Authorization: `Bearer ${f.a.token}` } });
    expect(both.status).toBe(400);
  });
});

describe("origins", () => {
  let f: Fixture;
  let key: string;
  beforeAll(async () => {
    f = await fixture();
    key = (await createKey(f.a, { origins: ["https://maps.example.com", "https://*.example.org"] })).key;
  });

  it("answers the origins it allows, by Origin or else Referer, and refuses the others", async () => {
    const allowed: Record<string, string>[] = [
      { Origin: "https://maps.example.com" },
      { Origin: "https://a.example.org" },
      { Origin: "https://a.b.example.org" },
      { Referer: "https://maps.example.com/city/tour.html?x=1" },
    ];
    for (const headers of allowed) {
      const response = await withKey(key, "/v3.0/lists", headers);
      expect(response.status, JSON.stringify(headers)).toBe(200);
      if (headers.Origin) expect(response.headers.get("Access-Control-Allow-Origin")).toBe(headers.Origin);
    }
    const refused: Record<string, string>[] = [
      {},
      { Origin: "https://evil.example.com" },
      { Origin: "https://example.org" },
      { Origin: "http://a.example.org" },
      { Origin: "https://maps.example.com.evil.test" },
      { Origin: "null" },
      { Referer: "https://evil.example.com/" },
      // Origin wins over Referer.
      { Origin: "https://evil.example.com", Referer: "https://maps.example.com/" },
    ];
    for (const headers of refused) {
      const response = await withKey(key, "/v3.0/lists", headers, true);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect((await json<{ detail: string }>(response)).detail).toMatch(/origin/i);
    }
  });

  it("lets an allowed page's preflight through", async () => {
    const response = await call("/v3.0/pinpoints", {
      method: "OPTIONS",
      headers: {
        Origin: "https://maps.example.com",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "authorization",
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toMatch(/^(\*|https:\/\/maps\.example\.com)$/);
    expect(response.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("authorization");
  });
});

describe("revocation and expiry", () => {
  it("stops a revoked key within seconds, cached answers included", async () => {
    const f = await fixture();
    const { id, key } = await createKey(f.a, {});
    expect((await withKey(key, "/v3.0/lists")).status).toBe(200);
    expect((await withKey(key, "/v3.0/lists")).headers.get("Cache-Status")).toMatch(/hit/);
    expect((await f.a.send("DELETE", `/v3.0/keys/${id}`)).status).toBe(204);
    expect(FRESH_MS).toBeLessThanOrEqual(5000);
    stopPastFreshness();
    expect((await withKey(key, "/v3.0/lists")).status).toBe(401);
  });

  it("stops a key at its expiry, and no browser keeps an answer past it", async () => {
    const f = await fixture();
    const expiresAt = Date.now() + 60_000;
    const { key } = await createKey(f.a, { expires_at: new Date(expiresAt).toISOString() });
    const early = await withKey(key, "/v3.0/lists");
    expect(early.status).toBe(200);
    expect(early.headers.get("Cache-Control")).toMatch(/^public, max-age=2, stale-while-revalidate=2$/);
    clock.now = () => expiresAt - 1500;
    const late = await withKey(key, "/v3.0/lists");
    expect(late.status).toBe(200);
    expect(late.headers.get("Cache-Control")).toBe("public, max-age=1");
    clock.now = () => expiresAt;
    expect((await withKey(key, "/v3.0/lists")).status).toBe(401);
  });
});

describe("the public limit", () => {
  it("counts per key and viewer address: one busy viewer never limits another", async () => {
    const f = await fixture();
    const { key } = await createKey(f.a, {});
    // As wrangler.toml configures it...
    const stated = await withKey(key, "/v3.0/lists", { "CF-Connecting-IP": "203.0.113.6" });
    expect(stated.headers.get("RateLimit-Policy")).toBe("public;q=600;w=60");
    // ...and counted on the tests' small limiter, whose window is ten seconds.
    const small = smallLimits();
    const { limit, period } = parseConfig(small).rateLimits.public;
    await windowWithRoom(5_000, period);
    const from = (address: string) =>
      fetchWith(small, withKeyUrl(key, "/v3.0/lists"), { headers: { "CF-Connecting-IP": address } });
    const statuses = await Promise.all(
      Array.from({ length: limit }, async () => {
        const response = await from("203.0.113.7");
        await response.body?.cancel();
        return response.status;
      }),
    );
    expect(statuses).toEqual(Array(limit).fill(200));
    const over = await from("203.0.113.7");
    expect(over.status).toBe(429);
    expect(over.headers.get("Retry-After")).toBe(String(period));
    expect(over.headers.get("RateLimit-Policy")).toBe(`public;q=${limit};w=${period}`);
    expect((await from("203.0.113.8")).status).toBe(200);
    expect((await from("2001:db8:1:2::1")).status).toBe(200);
  });

  it("counts the map page per key and viewer: a burst from one address is refused past the limit", async () => {
    const f = await fixture();
    const { key } = await createKey(f.a, { lists: [f.lists.l1] });
    const small = smallLimits();
    const { limit, period } = parseConfig(small).rateLimits.public;
    await windowWithRoom(5_000, period);
    const page = (address: string) =>
      fetchWith(small, withKeyUrl(key, `/maps/${f.lists.l1}`), { headers: { "CF-Connecting-IP": address } });
    const responses = await Promise.all(Array.from({ length: limit + 5 }, () => page("203.0.113.20")));
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    expect(statuses.filter((s) => s === 200)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    expect(responses.every((r) => r.headers.get("RateLimit-Policy") === `public;q=${limit};w=${period}`)).toBe(true);
    const refused = responses.find((r) => r.status === 429)!;
    expect(refused.headers.get("Retry-After")).toBe(String(period));
    // The same key's API reads from that address share its count; another viewer is served.
    const api = await fetchWith(small, withKeyUrl(key, "/v3.0/lists"), {
      headers: { "CF-Connecting-IP": "203.0.113.20" },
    });
    expect(api.status).toBe(429);
    const other = await page("203.0.113.21");
    expect(other.status).toBe(200);
    await Promise.all([api.body?.cancel(), other.body?.cancel()]);
  });

  it("counts unknown keys against the address before looking them up, on the API and the map page", async () => {
    const f = await fixture();
    const small = smallLimits();
    const { limit, period } = parseConfig(small).rateLimits.public;
    await windowWithRoom(5_000, period);
    const randomKey = () => `pk_${crypto.randomUUID().replaceAll("-", "")}`;
    const from = (address: string, key: string, path: string) =>
      fetchWith(small, withKeyUrl(key, path), { headers: { "CF-Connecting-IP": address } });
    const statusesOf = async (responses: Response[]) => {
      await Promise.all(responses.map((r) => r.body?.cancel()));
      return responses.map((r) => r.status);
    };

    // An address guessing keys in parallel: every guess counts, each one its own key.
    const guesses = await statusesOf(
      await Promise.all(Array.from({ length: limit }, () => from("198.51.100.30", randomKey(), "/v3.0/lists"))),
    );
    expect(guesses).toEqual(Array(limit).fill(401));
    // From there, a real key the service has never read is refused before it is read: read, it would be 200.
    const { key } = await createKey(f.a, { lists: [f.lists.l1] });
    expect((await statusesOf([await from("198.51.100.30", key, "/v3.0/lists")]))[0]).toBe(429);
    expect((await statusesOf([await from("198.51.100.30", key, `/maps/${f.lists.l1}`)]))[0]).toBe(429);
    // Another address reads it.
    expect((await statusesOf([await from("198.51.100.31", key, "/v3.0/lists")]))[0]).toBe(200);

    // The map page counts guesses the same way, all of them in parallel.
    const pages = await statusesOf(
      await Promise.all(
        Array.from({ length: limit + 5 }, () => from("198.51.100.32", randomKey(), `/maps/${f.lists.l1}`)),
      ),
    );
    expect(pages.filter((s) => s === 401)).toHaveLength(limit);
    expect(pages.filter((s) => s === 429)).toHaveLength(5);

    // One unknown key sent many times counts every time, whether this request read it or another did.
    const repeated = randomKey();
    const repeats = await statusesOf(
      await Promise.all(Array.from({ length: limit + 3 }, () => from("198.51.100.33", repeated, "/v3.0/lists"))),
    );
    expect(repeats.filter((s) => s === 401)).toHaveLength(limit);
    expect(repeats.filter((s) => s === 429)).toHaveLength(3);

    // What cannot be a key is refused unread and uncounted: the address keeps its allowance.
    const malformed = await statusesOf(
      await Promise.all(Array.from({ length: limit + 3 }, () => from("198.51.100.34", "pk_short", "/v3.0/lists"))),
    );
    expect(malformed).toEqual(Array(limit + 3).fill(401));
    expect((await statusesOf([await from("198.51.100.34", key, "/v3.0/lists")]))[0]).toBe(200);
  });
});

describe("the public cache", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });

  it("serves a key's second read from the cache; a token's answers are private and never cached", async () => {
    const { key } = await createKey(f.a, { lists: [f.lists.l1] });
    const first = await withKey(key, `/v3.0/pinpoints?list=${f.lists.l1}`);
    expect(first.headers.get("Cache-Status")).toBe("poi-public; fwd=miss; stored");
    expect(first.headers.get("Vary")).toBe("Accept, Origin");
    const second = await withKey(key, `/v3.0/pinpoints?list=${f.lists.l1}`);
    expect(second.headers.get("Cache-Status")).toBe("poi-public; hit");
    expect(await second.text()).toBe(await first.text());

    // Another key with the same lists keeps its own entries.
    const { key: other } = await createKey(f.a, { lists: [f.lists.l1] });
    expect((await withKey(other, `/v3.0/pinpoints?list=${f.lists.l1}`)).headers.get("Cache-Status")).toMatch(/miss/);

    for (const path of ["/v3.0/pinpoints", `/v3.0/pinpoints/${f.pins.p1}`, "/v3.0/lists", "/v3.0/categories"]) {
      const answer = await f.a.get(path);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("Cache-Control"), path).toBe("private");
      expect(answer.headers.get("Cache-Status")).toBeNull();
    }
  });

  it("answers If-None-Match with 304 through the cache, for collections and single objects", async () => {
    const { key } = await createKey(f.a, {});
    for (const path of ["/v3.0/pinpoints", `/v3.0/pinpoints/${f.pins.p1}`]) {
      const first = await withKey(key, path);
      const etag = first.headers.get("ETag")!;
      expect(etag).toMatch(/^"[^"]+"$/);
      const again = await withKey(key, path, { "If-None-Match": etag });
      expect(again.status).toBe(304);
      expect(again.headers.get("ETag")).toBe(etag);
      expect(again.headers.get("Cache-Control")).toMatch(/^public/);
      expect(await again.text()).toBe("");
      expect((await withKey(key, path, { "If-None-Match": '"other"' })).status).toBe(200);
    }
  });

  it("separates JSON from GeoJSON", async () => {
    const { key } = await createKey(f.a, {});
    const plain = await withKey(key, "/v3.0/pinpoints");
    const geo = await withKey(key, "/v3.0/pinpoints", { Accept: "application/geo+json" });
    expect(plain.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(geo.headers.get("Content-Type")).toMatch(/^application\/geo\+json/);
  });
});

describe("freshness", () => {
  it("shows each kind of write to a key's readers within the key cache's freshness, at most 5 seconds", async () => {
    expect(FRESH_MS).toBeLessThanOrEqual(5000);
    const f = await fixture();
    const { key } = await createKey(f.a, { lists: [f.lists.l1] });
    const { a, pins, lists, events } = f;
    const category = await created(
      await a.send("POST", "/v3.0/categories", {
        name: "icons",
        image_file: mediaFile("image/png", "icon.png"),
      }),
    );
    /**
     * Reads `path` until the cache serves it, runs `write`, and checks `seen` in what readers get before
     * the key's entry is FRESH_MS old: one of them may still get the old answer, while the key is read
     * again behind it (src/auth/publishable-keys.ts, past REFRESH_MS), and the next sees the write.
     */
    const fresh = async (
      path: string,
      write: () => Promise<Response>,
      seen: (body: string, status: number) => boolean,
    ) => {
      const at = stopPastFreshness();
      await withKey(key, path);
      expect((await withKey(key, path)).headers.get("Cache-Status"), path).toMatch(/hit/);
      const written = await write();
      expect(written.status, await written.clone().text()).toBeLessThan(300);
      clock.now = () => at + FRESH_MS - 1;
      // fetchWith resolves once the key was read again.
      await (await fetchWith({}, withKeyUrl(key, path))).body?.cancel();
      const response = await withKey(key, path);
      expect(seen(await response.text(), response.status), path).toBe(true);
    };
    await fresh(
      `/v3.0/pinpoints/${pins.p1}`,
      () => a.send("PUT", `/v3.0/pinpoints/${pins.p1}`, { name: "museum renamed" }),
      (body) => body.includes("museum renamed"),
    );
    await fresh(
      `/v3.0/pinpoints?list=${lists.l1}`,
      () => a.send("POST", `/v3.0/lists/${lists.l1}/pinpoints`, [{ id: pins.p3 }]),
      (body) => body.includes(`"id":${pins.p3}`),
    );
    await fresh(
      "/v3.0/pinpoints",
      () => a.send("DELETE", `/v3.0/lists/${lists.l1}/pinpoints`, [{ id: pins.p3 }]),
      (body) => !body.includes(`"id":${pins.p3}`),
    );
    await fresh(
      `/v3.0/events/${events.e1}`,
      () => a.send("PUT", `/v3.0/events/${events.e1}`, { name: "museum day" }),
      (body) => body.includes("museum day"),
    );
    await fresh(
      `/v3.0/lists/${lists.l1}`,
      () => a.send("PUT", `/v3.0/lists/${lists.l1}`, { name: "renamed list" }),
      (body) => body.includes("renamed list"),
    );
    await fresh(
      `/v3.0/categories/${category.id}`,
      () => a.send("PUT", `/v3.0/categories/${category.id}`, { name: "new icons" }),
      (body) => body.includes("new icons"),
    );
    // Another account's category, which every key reads too.
    await fresh(
      "/v3.0/categories?limit=1000",
      () => f.b.send("POST", "/v3.0/categories", { name: "their icons", image_file: mediaFile("image/png", "i.png") }),
      (body) => body.includes("their icons"),
    );
    await fresh(
      `/v3.0/pinpoints/${pins.p2}`,
      () => a.send("DELETE", `/v3.0/pinpoints/${pins.p2}`),
      (_, status) => status === 404,
    );
    await fresh(
      `/v3.0/lists/${lists.l1}`,
      () => a.send("DELETE", `/v3.0/lists/${lists.l1}`),
      (_, status) => status === 404,
    );
  });
});
