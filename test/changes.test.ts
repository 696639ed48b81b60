/**
 * The change feed (docs/offline-and-concurrency.md): commit order, one entry per object, tombstones
 * with cascades, include=objects, 410 past the retention window, accounts
 * kept apart, and a consumer that follows the feed under concurrent writes
 * ending with exactly the server's state.
 */
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { base64urlDecode, base64urlEncode, utf8 } from "../src/core/crypto";
import { hmacSign, signingKeys } from "../src/core/signing";
import { decodeCursor, encodeCursor } from "../src/http/cursor";
import worker from "../src/index";
import { allPages, caller, contentDb, createList, createPinpoint, json, type Caller } from "./helpers";

type Entry = {
  type: string;
  id: number;
  op: "upsert" | "delete";
  version: number;
  changed_at: string;
  object?: Record<string, unknown>;
};
type Feed = { results: Entry[]; next: string | null; cursor: string };

const DAY = 24 * 60 * 60 * 1000;

let alice: Caller;
let bob: Caller;
beforeAll(async () => {
  alice = await caller();
  bob = await caller();
});

async function start(who: Caller): Promise<string> {
  const response = await who.get("/v3.0/changes");
  expect(response.status).toBe(200);
  const feed = await json<Feed>(response);
  expect(feed.results).toEqual([]);
  expect(feed.next).toBeNull();
  return feed.cursor;
}

/** Follows the feed from `cursor` to the end; returns every entry and the cursor to keep. */
async function follow(who: Caller, cursor: string, query = ""): Promise<{ entries: Entry[]; cursor: string }> {
  const entries: Entry[] = [];
  let url: string | null = `/v3.0/changes?cursor=${encodeURIComponent(cursor)}${query}`;
  let last = cursor;
  while (url) {
    const response = await who.get(url);
    expect(response.status, await response.clone().text()).toBe(200);
    const feed = await json<Feed>(response);
    entries.push(...feed.results);
    last = feed.cursor;
    url = feed.next;
  }
  return { entries, cursor: last };
}

const event = (pinpoint: number) => ({
  name: "E",
  pinpoint,
  dates: [{ start: "2026-05-01T10:00:00Z", end: "2026-05-01T11:00:00Z" }],
});

describe("GET /v3.0/changes", () => {
  it("reports creates, updates and deletes in commit order, one entry per object", async () => {
    const cursor = await start(alice);
    const a = await createPinpoint(alice);
    const b = await createPinpoint(alice);
    const list = await createList(alice);
    await alice.send("PUT", `/v3.0/pinpoints/${a.id}`, { name: "A2" });
    await alice.send("DELETE", `/v3.0/pinpoints/${b.id}`);
    const { entries, cursor: kept } = await follow(alice, cursor);
    expect(entries.map((e) => [e.type, e.id, e.op])).toEqual([
      ["list", list.id, "upsert"],
      ["pinpoint", a.id, "upsert"],
      ["pinpoint", b.id, "delete"],
    ]);
    const tag = (await alice.get(`/v3.0/pinpoints/${a.id}`)).headers.get("ETag");
    expect(`"${entries[1]!.version}"`).toBe(tag);
    // Nothing changed since: an empty page with a cursor that still works.
    const again = await follow(alice, kept);
    expect(again.entries).toEqual([]);
  });

  it("pages with next, in order, and resumes from any cursor", async () => {
    const cursor = await start(alice);
    const made = [];
    for (let i = 0; i < 7; i++) made.push((await createPinpoint(alice)).id);
    const { entries } = await follow(alice, cursor, "&limit=3");
    expect(entries.map((e) => e.id)).toEqual(made);
    const first = await json<Feed>(await alice.get(`/v3.0/changes?cursor=${encodeURIComponent(cursor)}&limit=3`));
    expect(first.next).not.toBeNull();
    const rest = await follow(alice, first.cursor);
    expect(rest.entries.map((e) => e.id)).toEqual(made.slice(3));
  });

  it("reports cascades: a deleted pinpoint's events are tombstones and its lists changed", async () => {
    const pinpoint = await createPinpoint(alice);
    const list = await createList(alice);
    await alice.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: pinpoint.id }]);
    const e1 = await json<{ id: number }>(await alice.send("POST", "/v3.0/events", event(pinpoint.id)));
    const e2 = await json<{ id: number }>(await alice.send("POST", "/v3.0/events", event(pinpoint.id)));
    const cursor = await start(alice);
    const listTag = (await alice.get(`/v3.0/lists/${list.id}`)).headers.get("ETag");
    expect((await alice.send("DELETE", `/v3.0/pinpoints/${pinpoint.id}`)).status).toBe(204);
    const { entries } = await follow(alice, cursor);
    const seen = new Map(entries.map((e) => [`${e.type}:${e.id}`, e]));
    expect(seen.get(`pinpoint:${pinpoint.id}`)?.op).toBe("delete");
    expect(seen.get(`event:${e1.id}`)?.op).toBe("delete");
    expect(seen.get(`event:${e2.id}`)?.op).toBe("delete");
    const listEntry = seen.get(`list:${list.id}`)!;
    expect(listEntry.op).toBe("upsert");
    const newTag = (await alice.get(`/v3.0/lists/${list.id}`)).headers.get("ETag");
    expect(newTag).not.toBe(listTag);
    expect(`"${listEntry.version}"`).toBe(newTag);
    expect(entries).toHaveLength(4);
    // Deleting the list: one tombstone, nothing else.
    const c2 = await start(alice);
    await alice.send("DELETE", `/v3.0/lists/${list.id}`);
    expect((await follow(alice, c2)).entries.map((e) => [e.type, e.op])).toEqual([["list", "delete"]]);
  });

  it("include=objects carries each upserted object as GET returns it", async () => {
    const cursor = await start(alice);
    const pinpoint = await createPinpoint(alice, { tags: ["x"] });
    const list = await createList(alice);
    const ev = await json<{ id: number }>(await alice.send("POST", "/v3.0/events", event(pinpoint.id)));
    const gone = await createPinpoint(alice);
    await alice.send("DELETE", `/v3.0/pinpoints/${gone.id}`);
    const { entries } = await follow(alice, cursor, "&include=objects");
    for (const [type, path, id] of [
      ["pinpoint", "pinpoints", pinpoint.id],
      ["list", "lists", list.id],
      ["event", "events", ev.id],
    ] as const) {
      const entry = entries.find((e) => e.type === type && e.id === id)!;
      expect(entry.object).toEqual(await json(await alice.get(`/v3.0/${path}/${id}`)));
    }
    const tombstone = entries.find((e) => e.id === gone.id && e.type === "pinpoint")!;
    expect(tombstone.op).toBe("delete");
    expect(tombstone.object).toBeUndefined();
  });

  it("never shows another account's changes, and another account's cursor is a 400", async () => {
    const cursor = await start(alice);
    const mine = await createPinpoint(alice);
    await createPinpoint(bob);
    await createList(bob);
    const { entries } = await follow(alice, cursor);
    expect(entries.map((e) => e.id)).toEqual([mine.id]);
    const foreign = await bob.get(`/v3.0/changes?cursor=${encodeURIComponent(cursor)}`);
    expect(foreign.status).toBe(400);
    expect((await bob.get("/v3.0/changes?cursor=garbage")).status).toBe(400);
    expect((await bob.get("/v3.0/changes?include=everything")).status).toBe(400);
  });

  it("a new feed starts at the account's own position, which other accounts' writes do not move", async () => {
    const [quiet, busy] = [await caller(), await caller()];
    const position = async (who: Caller) =>
      (await decodeCursor(env, await start(who), `${who.accountId}:changes`)).key[0];
    // An account that never wrote starts at 0, and stays there however much others write.
    expect(await position(quiet)).toBe(0);
    await createPinpoint(busy);
    await createList(busy);
    expect(await position(quiet)).toBe(0);
    // Its own write moves it; the next writes of others do not.
    await createPinpoint(quiet);
    const own = await position(quiet);
    expect(own).toBeGreaterThan(0);
    await createPinpoint(busy);
    expect(await position(quiet)).toBe(own);
  });

  it("cursors are opaque: neither JSON nor a sequence number can be read from them", async () => {
    const who = await caller();
    await createPinpoint(who);
    const { entries, cursor } = await follow(who, await start(who));
    expect(entries).toEqual([]);
    const seq = (await decodeCursor(env, cursor, `${who.accountId}:changes`)).key[0];
    expect(cursor).toMatch(/^[\w-]+$/);
    const bytes = new TextDecoder("latin1").decode(base64urlDecode(cursor)!);
    for (const plain of ['{"', '"k"', `[${seq},`]) expect(bytes).not.toContain(plain);
  });

  it("a tampered cursor is 400", async () => {
    const cursor = await start(alice);
    const flipped = cursor.slice(0, 5) + (cursor[5] === "A" ? "B" : "A") + cursor.slice(6);
    const response = await alice.get(`/v3.0/changes?cursor=${encodeURIComponent(flipped)}`);
    expect(response.status).toBe(400);
    expect((await json(response)).type).toBe("urn:poi-api:problem:invalid_cursor");
  });

  it("a cursor of the readable form issued before cursors were encrypted is 410: resync", async () => {
    // As the service signed them then: base64url JSON, a dot, the first 16 bytes of an HMAC.
    const readable = async (scope: string, key: unknown[]) => {
      const body = base64urlEncode(utf8.encode(JSON.stringify({ s: scope, d: "a", k: key })));
      const signature = (await hmacSign((await signingKeys(env)).current, `cursor.${body}`)).subarray(0, 16);
      return `${body}.${base64urlEncode(signature)}`;
    };
    const old = await readable(`${alice.accountId}:changes`, [1, Date.now()]);
    const gone = await alice.get(`/v3.0/changes?cursor=${encodeURIComponent(old)}`);
    expect(gone.status).toBe(410);
    expect((await json(gone)).type).toBe("urn:poi-api:problem:cursor_expired");
    // Only the account's own, untampered cursor of that form: anything else is invalid, as is an old page cursor.
    expect((await bob.get(`/v3.0/changes?cursor=${encodeURIComponent(old)}`)).status).toBe(400);
    const tampered = `${old.slice(0, -2)}${old.endsWith("AA") ? "AQ" : "AA"}`;
    expect((await alice.get(`/v3.0/changes?cursor=${encodeURIComponent(tampered)}`)).status).toBe(400);
    const page = await readable(`${alice.accountId}:pinpoints?`, [1]);
    expect((await alice.get(`/v3.0/pinpoints?cursor=${encodeURIComponent(page)}`)).status).toBe(400);
  });

  it("a cursor older than the retention window is 410; the cron prunes old tombstones only", async () => {
    const doomed = await createPinpoint(alice);
    const kept = await createPinpoint(alice);
    await alice.send("DELETE", `/v3.0/pinpoints/${doomed.id}`);
    // The account's newest entry is a tombstone too, which the prune keeps: positions count from it.
    const last = await createPinpoint(alice);
    await alice.send("DELETE", `/v3.0/pinpoints/${last.id}`);
    const base = Date.now();
    // Cursors as the service would have issued them 29 and 31 days ago (a token would not live that long).
    const issued = (daysAgo: number) =>
      encodeCursor(env, `${alice.accountId}:changes`, { direction: "after", key: [0, base - daysAgo * DAY] });
    expect((await alice.get(`/v3.0/changes?cursor=${encodeURIComponent(await issued(29))}`)).status).toBe(200);
    const expired = await alice.get(`/v3.0/changes?cursor=${encodeURIComponent(await issued(31))}`);
    expect(expired.status).toBe(410);
    expect((await json(expired)).type).toBe("urn:poi-api:problem:cursor_expired");

    const db = await contentDb(alice.accountId);
    const entry = (id: number) =>
      db.prepare("SELECT op FROM changes WHERE type = 'pinpoint' AND object_id = ?").bind(id).first<{ op: string }>();
    const newestPosition = async () =>
      (await db
        .prepare("SELECT position FROM changes WHERE account_id = ? ORDER BY seq DESC LIMIT 1")
        .bind(alice.accountId)
        .first<{ position: number }>())!.position;
    const before = await newestPosition();
    await worker.scheduled(createScheduledController({ scheduledTime: base + 30 * DAY, cron: "17 * * * *" }), env);
    expect(await entry(doomed.id)).toEqual({ op: "delete" });
    await worker.scheduled(createScheduledController({ scheduledTime: base + 32 * DAY, cron: "17 * * * *" }), env);
    expect(await entry(doomed.id)).toBeNull();
    expect(await entry(kept.id)).toEqual({ op: "upsert" });
    expect(await entry(last.id)).toEqual({ op: "delete" });
    // The next change takes the position after it, as if nothing had been pruned.
    await createPinpoint(alice);
    expect(await newestPosition()).toBe(before + 1);
  });

  it("a client that syncs and follows the feed under concurrent writes in several accounts ends with the server's state", async () => {
    const who = [alice, bob, await caller()];
    type State = Map<string, Record<string, unknown>>;
    const collections = ["pinpoints", "lists", "events"] as const;
    const typeOf = { pinpoints: "pinpoint", lists: "list", events: "event" } as const;

    async function serverState(c: Caller): Promise<State> {
      const state: State = new Map();
      for (const collection of collections) {
        for (const page of await allPages<Record<string, unknown>>(c, `/v3.0/${collection}?limit=1000`)) {
          for (const item of page.results) state.set(`${typeOf[collection]}:${item.id}`, item);
        }
      }
      return state;
    }

    // Random writes by every account: creates, updates, deletes (with cascades), membership.
    async function writer(c: Caller, rounds: number) {
      const pinpoints: number[] = [];
      const lists: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const r = (i * 7919 + c.accountId * 31) % 10;
        if (r < 3 || pinpoints.length === 0) pinpoints.push((await createPinpoint(c, { name: `p${i}` })).id);
        else if (r === 3) lists.push((await createList(c)).id);
        else if (r === 4) await c.send("PUT", `/v3.0/pinpoints/${pinpoints[i % pinpoints.length]}`, { name: `u${i}` });
        else if (r === 5) await c.send("POST", "/v3.0/events", event(pinpoints[i % pinpoints.length]!));
        else if (r === 6 && lists.length > 0)
          await c.send("POST", `/v3.0/lists/${lists[i % lists.length]}/pinpoints`, [{ id: pinpoints.at(-1) }]);
        else if (r === 7) await c.send("DELETE", `/v3.0/pinpoints/${pinpoints.splice(i % pinpoints.length, 1)[0]}`);
        else if (r === 8 && lists.length > 0) await c.send("DELETE", `/v3.0/lists/${lists.pop()}`);
        else pinpoints.push((await createPinpoint(c)).id);
      }
    }

    // The documented recipe: take a cursor, page through the collections, then follow the feed.
    const local: State = new Map();
    const cursor = await start(alice);
    const writing = Promise.all(who.map((c) => writer(c, 40)));
    for (const [key, value] of await serverState(alice)) local.set(key, value);
    let position = cursor;
    let done = false;
    void writing.then(() => (done = true));
    for (;;) {
      const finished = done;
      const { entries, cursor: next } = await follow(alice, position, "&include=objects&limit=7");
      for (const e of entries) {
        const key = `${e.type}:${e.id}`;
        if (e.op === "delete") local.delete(key);
        else if (e.type !== "category") local.set(key, e.object!);
      }
      position = next;
      if (finished) break;
    }
    await writing;
    const server = await serverState(alice);
    expect([...local.keys()].sort()).toEqual([...server.keys()].sort());
    for (const [key, value] of server) expect(local.get(key), key).toEqual(value);
  });
});
