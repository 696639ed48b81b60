/**
 * Keyset pagination on every collection (GET /v3.0/pinpoints, /v3.0/lists and
 * /v3.0/pinpoints?list=ID): walking both ways, `limit` rules, links, rows
 * added while paging, and cursors that are tampered with or used elsewhere.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { ApiError } from "../src/core/problem";
import { base64urlDecode } from "../src/core/crypto";
import { decodeCursor, encodeCursor } from "../src/http/cursor";
import { call, caller, contentDb, createList, createPinpoint, databaseHolding, json, type Caller } from "./helpers";

type Page = { results: { id: number }[]; next: string | null; previous: string | null };
type Problem = { status: number; type: string; detail: string };

/** Inserts `n` rows for `accountId` straight into D1; returns their ids in ascending order. */
async function insertRows(table: "pinpoints" | "lists", accountId: number, n: number): Promise<number[]> {
  const columns = table === "pinpoints" ? "account_id, name, latitude, longitude" : "account_id, name";
  const values = table === "pinpoints" ? "?1, 'bulk ' || i, 0, 0" : "?1, 'bulk ' || i";
  const { results } = await (
    await contentDb(accountId)
  )
    .prepare(
      `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2)
     INSERT INTO ${table} (${columns}) SELECT ${values} FROM seq RETURNING id`,
    )
    .bind(accountId, n)
    .all<{ id: number }>();
  return results.map((r) => r.id).sort((x, y) => x - y);
}

async function addMembers(listId: number, ids: number[]) {
  await (
    await databaseHolding("lists", listId)
  )
    .prepare("INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT ?1, value FROM json_each(?2)")
    .bind(listId, JSON.stringify(ids))
    .run();
}

async function page(who: Caller, url: string): Promise<Page> {
  const response = await who.get(url);
  const body = await json<Page>(response);
  expect(response.status, `${url}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

/** Follows `link` ("next" or "previous") from `url` until it is null, returning the pages in order visited. */
async function walk(who: Caller, url: string, link: "next" | "previous"): Promise<Page[]> {
  const pages: Page[] = [];
  for (let at: string | null = url; at !== null; at = pages[pages.length - 1]![link]) {
    pages.push(await page(who, at));
    if (pages.length > 200) throw new Error("pagination does not end");
  }
  return pages;
}

const ids = (pages: Page[]) => pages.flatMap((p) => p.results.map((r) => r.id));

async function expectBadRequest(who: Caller, url: string, type = "invalid_cursor") {
  const response = await who.get(url);
  const body = await json<Problem>(response);
  expect(response.status, `${url}: ${JSON.stringify(body)}`).toBe(400);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
  expect(body.type).toBe(`urn:poi-api:problem:${type}`);
  return body;
}

/** The three collections, each with 45 rows of the account's own, interleaved with rows it must not see. */
let a: Caller;
let collections: { name: string; url: string; rows: number[] }[];
let listId: number;

beforeAll(async () => {
  a = await caller();
  const other = await caller();
  const pinpoints: number[] = [];
  for (let i = 0; i < 3; i++) {
    pinpoints.push(...(await insertRows("pinpoints", a.accountId, 15)));
    await insertRows("pinpoints", other.accountId, 5);
  }
  const lists: number[] = [];
  for (let i = 0; i < 3; i++) {
    lists.push(...(await insertRows("lists", a.accountId, 15)));
    await insertRows("lists", other.accountId, 5);
  }
  listId = (await createList(a, { name: "members" })).id;
  // Every other pinpoint is a member of the list; 45 members out of 90.
  const extra = await insertRows("pinpoints", a.accountId, 45);
  const all = [...pinpoints, ...extra];
  const memberIds = all.filter((_, i) => i % 2 === 0);
  await addMembers(listId, memberIds);
  collections = [
    { name: "pinpoints", url: "/v3.0/pinpoints", rows: all },
    { name: "lists", url: "/v3.0/lists", rows: [...lists, listId] },
    { name: "pinpoints?list", url: `/v3.0/pinpoints?list=${listId}`, rows: memberIds },
  ];
});

describe.each(["pinpoints", "lists", "pinpoints?list"])("walking %s", (name) => {
  const collection = () => collections.find((c) => c.name === name)!;

  it("forward via next to the end: ascending ids, no gap, no repeat, 20 per page by default", async () => {
    const { url, rows } = collection();
    const pages = await walk(a, url, "next");
    expect(rows.length).toBeGreaterThan(40);
    expect(ids(pages)).toEqual(rows);
    expect(pages.map((p) => p.results.length)).toEqual(
      Array.from({ length: Math.ceil(rows.length / 20) }, (_, i) => Math.min(20, rows.length - i * 20)),
    );
    expect(pages[0]!.previous).toBeNull();
    expect(pages[pages.length - 1]!.next).toBeNull();
    for (const p of pages.slice(1)) expect(p.previous).not.toBeNull();
  });

  it("backward via previous from the last page to the start", async () => {
    const { url, rows } = collection();
    const forward = await walk(a, `${url}${url.includes("?") ? "&" : "?"}limit=7`, "next");
    const backward = await walk(a, forward[forward.length - 1]!.previous!, "previous");
    expect(ids([...backward].reverse())).toEqual(
      rows.slice(0, rows.length - forward[forward.length - 1]!.results.length),
    );
    expect(backward.map((p) => p.results)).toEqual(
      forward
        .slice(0, -1)
        .reverse()
        .map((p) => p.results),
    );
    expect(backward[backward.length - 1]!.previous).toBeNull();
    // From the first page reached backward, next leads forward again.
    const again = await walk(a, backward[backward.length - 1]!.next!, "next");
    expect(ids(again)).toEqual(rows.slice(7));
  });

  it("links are absolute on the request's origin and keep the filter and limit", async () => {
    const { url } = collection();
    const origin = "http://other-host.example:8787";
    const first = await page(a, `${origin}${url}${url.includes("?") ? "&" : "?"}limit=5`);
    const next = new URL(first.next!);
    expect(next.origin).toBe(origin);
    expect(next.pathname).toBe(url.split("?")[0]);
    expect(next.searchParams.get("limit")).toBe("5");
    expect(next.searchParams.get("list")).toBe(name === "pinpoints?list" ? String(listId) : null);
    expect(next.searchParams.get("cursor")).toMatch(/^[\w-]+$/);
    const second = await page(a, first.next!);
    expect(new URL(second.previous!).origin).toBe(origin);
    expect(new URL(second.previous!).searchParams.get("limit")).toBe("5");
  });
});

describe("limit", () => {
  const sizes = async (query: string) => (await page(a, `/v3.0/pinpoints${query}`)).results.length;

  it("defaults to 20; 0 means the default", async () => {
    expect(await sizes("")).toBe(20);
    expect(await sizes("?limit=0")).toBe(20);
    expect(await sizes("?limit=3")).toBe(3);
    expect(await sizes("?limit=007")).toBe(7);
  });

  it("serves limit=400 in one page and clips above 1,000", async () => {
    const big = await caller();
    const rows = await insertRows("pinpoints", big.accountId, 1005);
    const p400 = await page(big, "/v3.0/pinpoints?limit=400");
    expect(p400.results.map((r) => r.id)).toEqual(rows.slice(0, 400));
    expect(new URL(p400.next!).searchParams.get("limit")).toBe("400");
    for (const limit of ["1000", "1001", "5000", "99999999999999999999999"]) {
      const p = await page(big, `/v3.0/pinpoints?limit=${limit}`);
      expect(
        p.results.map((r) => r.id),
        limit,
      ).toEqual(rows.slice(0, 1000));
      expect(new URL(p.next!).searchParams.get("limit")).toBe("1000");
      const rest = await page(big, p.next!);
      expect(rest.results.map((r) => r.id)).toEqual(rows.slice(1000));
      expect(rest.next).toBeNull();
    }
  });

  it.each(["-1", "1.5", "abc", "1e3", "", "+5", "0x10", " 5"])("refuses limit=%j with 400", async (limit) => {
    const body = await expectBadRequest(a, `/v3.0/pinpoints?limit=${encodeURIComponent(limit)}`, "validation_failed");
    expect(body.detail).toMatch(/limit/);
  });

  it("refuses a repeated limit, and unknown parameters, naming each and the likely intended one", async () => {
    await expectBadRequest(a, "/v3.0/pinpoints?limit=5&limit=6", "validation_failed");
    const response = await a.get("/v3.0/pinpoints?lmit=1&offset=1&offset=2&format=json");
    expect(response.status).toBe(400);
    const body = await json<{ detail: string; errors: { parameter: string; detail: string }[] }>(response);
    expect(body.detail).toBe("Unknown query parameter(s): lmit, offset.");
    expect(body.errors).toEqual([
      { parameter: "lmit", detail: "is not a parameter of this operation (did you mean `limit`?)" },
      { parameter: "offset", detail: "is not a parameter of this operation" },
    ]);
    // format is a parameter where GeoJSON is offered, and only there; the token and a key, everywhere.
    expect(await sizes("?limit=4&format=json")).toBe(4);
    await expectBadRequest(a, "/v3.0/lists?format=json", "validation_failed");
    expect((await call(`/v3.0/lists?limit=1&access_token=${a.token}`)).status).toBe(200);
    // A browser library's cache buster is ignored everywhere, and links do not carry it on.
    const busted = await page(a, "/v3.0/pinpoints?limit=2&_=1764115200000");
    expect(busted.results).toHaveLength(2);
    expect(busted.next).not.toContain("_=");
    expect((await a.get("/ogc/collections/pinpoints/items?limit=1&_=1")).status).toBe(200);
  });

  it("applies to lists and list filters too", async () => {
    expect((await page(a, "/v3.0/lists?limit=2")).results).toHaveLength(2);
    expect((await page(a, `/v3.0/pinpoints?list=${listId}&limit=2`)).results).toHaveLength(2);
    await expectBadRequest(a, "/v3.0/lists?limit=-2", "validation_failed");
    await expectBadRequest(a, `/v3.0/pinpoints?list=${listId}&limit=x`, "validation_failed");
  });
});

describe("rows added while paging", () => {
  it("appear at the end; nothing is skipped or repeated", async () => {
    const who = await caller();
    const before = await insertRows("pinpoints", who.accountId, 25);
    const first = await page(who, "/v3.0/pinpoints?limit=10");
    const added = [(await createPinpoint(who)).id, (await createPinpoint(who)).id];
    const rest = await walk(who, first.next!, "next");
    expect(ids([first, ...rest])).toEqual([...before, ...added]);
  });

  it("the same holds for members added to a filtered list while paging", async () => {
    const who = await caller();
    const pins = await insertRows("pinpoints", who.accountId, 30);
    const list = await createList(who);
    await addMembers(list.id, pins.slice(0, 20));
    const first = await page(who, `/v3.0/pinpoints?list=${list.id}&limit=8`);
    // Members added behind the reader's position are not seen; those ahead are.
    await addMembers(list.id, [pins[25]!, pins[26]!]);
    const rest = await walk(who, first.next!, "next");
    expect(ids([first, ...rest])).toEqual([...pins.slice(0, 20), pins[25], pins[26]]);
  });

  it("an emptied page answers with its way back, never an error", async () => {
    const who = await caller();
    const rows = await insertRows("pinpoints", who.accountId, 5);
    const first = await page(who, "/v3.0/pinpoints?limit=3");
    for (const id of rows.slice(3)) expect((await who.send("DELETE", `/v3.0/pinpoints/${id}`)).status).toBe(204);
    const emptied = await page(who, first.next!);
    expect(emptied).toMatchObject({ results: [], next: null });
    expect(ids([await page(who, emptied.previous!)])).toEqual(rows.slice(0, 3));
  });
});

describe("cursors", () => {
  const firstNext = async (who: Caller, url: string) => (await page(who, url)).next!;

  const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

  it("refuses a cursor with any one character changed", async () => {
    const next = new URL(await firstNext(a, "/v3.0/pinpoints?limit=2"));
    const cursor = next.searchParams.get("cursor")!;
    for (let i = 0; i < cursor.length; i++) {
      if (cursor[i] === ".") continue;
      // Flipping the high bit of the 6-bit group changes a decoded bit even in a part's last character.
      const replacement = BASE64URL[BASE64URL.indexOf(cursor[i]!) ^ 32]!;
      next.searchParams.set("cursor", cursor.slice(0, i) + replacement + cursor.slice(i + 1));
      await expectBadRequest(a, next.toString());
    }
  });

  it("refuses a cursor re-encoded with other unused bits (non-canonical base64url)", async () => {
    // Positions of three lengths: the cursor of at least one ends in a partial group, whose last
    // character carries unused bits.
    let tested = 0;
    for (const key of [1, 10, 100]) {
      const cursor = await encodeCursor(env, "scope", { direction: "after", key: [key] });
      expect((await decodeCursor(env, cursor, "scope")).key).toEqual([key]);
      if (cursor.length % 4 === 0) continue;
      const tampered = cursor.slice(0, -1) + BASE64URL[BASE64URL.indexOf(cursor[cursor.length - 1]!) ^ 1];
      const error = await decodeCursor(env, tampered, "scope").catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(400);
      tested++;
    }
    expect(tested).toBeGreaterThan(0);
  });

  it("reveals nothing: no JSON, no key, and a new ciphertext every time", async () => {
    const position = { direction: "after", key: [4242, "Tour Eiffel"] } as const;
    const [one, two] = [
      await encodeCursor(env, "1:pinpoints?q=tour", position),
      await encodeCursor(env, "1:pinpoints?q=tour", position),
    ];
    expect(one).not.toBe(two);
    for (const cursor of [one, two]) {
      const text = new TextDecoder("latin1").decode(base64urlDecode(cursor)!);
      for (const plain of ["4242", "Tour", "pinpoints", '"k"', '{"d"']) expect(text).not.toContain(plain);
    }
    expect((await decodeCursor(env, one, "1:pinpoints?q=tour")).key).toEqual([4242, "Tour Eiffel"]);
  });

  it("refuses garbage with 400, never 500", async () => {
    for (const cursor of [
      "abc",
      "a.b",
      "....",
      ".",
      "eyJzIjoiMSJ9.",
      "eyJzIjoiMSJ9.AAAAAAAAAAAAAAAAAAAAAA",
      "✓.✓",
      "%00",
      "x".repeat(600),
      "null",
      "e30.e30.e30",
    ]) {
      const response = await a.get(`/v3.0/pinpoints?cursor=${encodeURIComponent(cursor)}`);
      expect(response.status, cursor).toBe(400);
      await response.body?.cancel();
    }
  });

  it("refuses a cursor from another account", async () => {
    const b = await caller();
    const next = await firstNext(a, "/v3.0/pinpoints?limit=2");
    const body = await expectBadRequest(b, next);
    // Nothing of A's data in the answer.
    expect(JSON.stringify(body)).not.toMatch(/bulk/);
    // Another client of the same account shares its content, and its cursors.
    const sameAccount = await caller("read write", a.accountId);
    expect((await page(sameAccount, next)).results).toHaveLength(2);
  });

  it("refuses a cursor used with another filter or on another collection", async () => {
    const other = await createList(a, { name: "other" });
    await addMembers(other.id, collections[2]!.rows.slice(0, 5));
    const fromList = new URL(await firstNext(a, `/v3.0/pinpoints?list=${listId}&limit=2`));
    const cursor = fromList.searchParams.get("cursor")!;
    await expectBadRequest(a, `/v3.0/pinpoints?list=${other.id}&limit=2&cursor=${cursor}`);
    await expectBadRequest(a, `/v3.0/pinpoints?limit=2&cursor=${cursor}`);
    await expectBadRequest(a, `/v3.0/lists?limit=2&cursor=${cursor}`);
    const fromPinpoints = new URL(await firstNext(a, "/v3.0/pinpoints?limit=2")).searchParams.get("cursor")!;
    await expectBadRequest(a, `/v3.0/lists?cursor=${fromPinpoints}`);
    await expectBadRequest(a, `/v3.0/pinpoints?list=${listId}&cursor=${fromPinpoints}`);
    const fromLists = new URL(await firstNext(a, "/v3.0/lists?limit=2")).searchParams.get("cursor")!;
    await expectBadRequest(a, `/v3.0/pinpoints?cursor=${fromLists}`);
  });

  it("keeps working when the limit in the link is changed", async () => {
    const next = new URL(await firstNext(a, "/v3.0/pinpoints?limit=2"));
    next.searchParams.set("limit", "3");
    expect(ids([await page(a, next.toString())])).toEqual(collections[0]!.rows.slice(2, 5));
  });

  it("carries an access_token given in the query into the links", async () => {
    const response = await call(`/v3.0/pinpoints?limit=2&access_token=${a.token}`);
    const body = await json<Page>(response);
    expect(response.status).toBe(200);
    expect(new URL(body.next!).searchParams.get("access_token")).toBe(a.token);
    const second = await call(body.next!);
    expect(second.status).toBe(200);
    expect(ids([await json<Page>(second)])).toEqual(collections[0]!.rows.slice(2, 4));
  });
});

describe("the list filter", () => {
  it.each(["abc", "0", "-1", "1.5", "", "1e3"])("refuses ?list=%j with 400", async (value) => {
    const body = await expectBadRequest(a, `/v3.0/pinpoints?list=${encodeURIComponent(value)}`, "validation_failed");
    expect(body.detail).toMatch(/list/);
  });

  it("answers 404 for a list that does not exist", async () => {
    const response = await a.get("/v3.0/pinpoints?list=987654321");
    expect(response.status).toBe(404);
    await response.body?.cancel();
  });

  it("gives an empty page for an empty list", async () => {
    const empty = await createList(a);
    expect(await page(a, `/v3.0/pinpoints?list=${empty.id}`)).toEqual({ results: [], next: null, previous: null });
  });
});
