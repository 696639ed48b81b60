/**
 * Accounts over several databases (docs/scaling.md), run by vitest.shards.config.ts with three shards:
 * placement, ids unique across shards, the fence that refuses a moved account's writes, and the online
 * move under concurrent writes, with an audit of every acknowledged write and a change-feed follower
 * that continues across the move.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { runFills } from "../src/db/fills";
import { moveAccount, MoveError, type Batch } from "../src/db/move";
import { DIRECTORY, ID_RANGE, shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";
import {
  batchOf,
  caller,
  contentDb,
  createAccount,
  createList,
  createPinpoint,
  json,
  received,
  receiverUrl,
  shardOf,
  type Caller,
} from "./helpers";

const SHARDS = shardNames(env.SHARDS);

const move = (account: number, to: string, extra: Partial<Parameters<typeof moveAccount>[0]> = {}) =>
  moveAccount({
    account,
    to,
    directory: batchOf(env.DB),
    shards: Object.fromEntries(SHARDS.map((name) => [name, batchOf(bindingNamed(env, name))])),
    batchRows: 50,
    graceMs: 0,
    ...extra,
  });

async function rowsOf(db: D1Database, account: number): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of [
    "pinpoints",
    "lists",
    "events",
    "categories",
    "changes",
    "tile_cells",
    "idempotency_keys",
    "webhooks",
  ]) {
    const row = await db
      .prepare(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`)
      .bind(account)
      .first<{ n: number }>();
    counts[table] = row!.n;
  }
  return counts;
}

/** Sends a write, and again after Retry-After while the account's writes are paused; returns the answer and the retries. */
async function write(who: Caller, method: string, path: string, body?: unknown): Promise<[Response, number]> {
  for (let retries = 0; ; retries++) {
    const response = await who.send(method, path, body);
    if (response.status !== 503) return [response, retries];
    expect(response.headers.get("Retry-After")).toBe("1");
    expect((await json(response)).type).toBe("urn:poi-api:problem:account_moving");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("placement", () => {
  it("keeps each account's content in its own shard only, with ids from disjoint ranges", async () => {
    expect(SHARDS).toEqual(["DB", "SHARD_1", "SHARD_2"]);
    const callers = await Promise.all(SHARDS.map(async (shard) => caller("read write", await createAccount(shard))));
    const ids: number[] = [];
    for (const [index, who] of callers.entries()) {
      const pin = await createPinpoint(who, { name: `on ${SHARDS[index]}` });
      ids.push(pin.id);
      expect(Math.floor(pin.id / ID_RANGE)).toBe(index);
      for (const shard of SHARDS) {
        const counts = await rowsOf(bindingNamed(env, shard), who.accountId);
        expect(counts.pinpoints, shard).toBe(shard === SHARDS[index] ? 1 : 0);
      }
      expect(await contentDb(who.accountId)).toBe(bindingNamed(env, SHARDS[index]!));
    }
    expect(new Set(ids).size).toBe(3);
    // Another shard's id is another account's: 403, as with one database; an unused id stays 404.
    expect((await callers[0]!.get(`/v3.0/pinpoints/${ids[1]}`)).status).toBe(403);
    expect((await callers[0]!.get(`/v3.0/pinpoints/${ids[1]! + 1}`)).status).toBe(404);
  });
});

describe("moving an account", () => {
  it("moves under concurrent writes: every acknowledged write is there, the feed continues, the source is emptied", async () => {
    const owner = await caller("read write", await createAccount(DIRECTORY));
    const who = owner;
    const list = await createList(who);
    const seeded: number[] = [];
    for (let i = 0; i < 120; i++) seeded.push((await createPinpoint(who, { name: `seed ${i}`, latitude: i / 10 })).id);
    expect(
      (
        await who.send(
          "POST",
          `/v3.0/lists/${list.id}/pinpoints`,
          seeded.slice(0, 60).map((id) => ({ id })),
        )
      ).status,
    ).toBe(200);
    const event = await who.send("POST", "/v3.0/events", {
      name: "fair",
      pinpoint: seeded[0],
      dates: [{ start: "2030-01-01T10:00:00Z", end: "2030-01-01T12:00:00Z" }],
    });
    expect(event.status, await event.clone().text()).toBe(201);
    const cursor = (await json<{ cursor: string }>(await who.get("/v3.0/changes"))).cursor;
    // A webhook (to the test receiver, test/webhook-receiver.ts), delivering through the queue all along.
    const hookName = crypto.randomUUID();
    const created = await who.send("POST", "http://127.0.0.1:8787/v3.0/webhooks", {
      url: receiverUrl(hookName),
      events: ["pinpoint.created", "pinpoint.updated", "pinpoint.deleted"],
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const hook = await json<{ id: number }>(created);

    // Writers: each creates, renames and deletes its own places, and remembers what was acknowledged.
    let stop = false;
    let retried = 0;
    const names = new Map<number, string>();
    const deleted = new Set<number>();
    const writer = async (n: number) => {
      // A client of its own per writer, each under its rate limit (RATE_LIMIT_CLIENT, 20 requests a
      // second): a step sends at most four.
      const who = await caller("read write", owner.accountId);
      let step = 0;
      while (!stop) {
        step++;
        await new Promise((resolve) => setTimeout(resolve, 200));
        const [created, r1] = await write(who, "POST", "/v3.0/pinpoints", {
          name: `w${n}-${step}`,
          latitude: 1,
          longitude: 2,
        });
        retried += r1;
        expect(created.status, await created.clone().text()).toBe(201);
        const id = (await json<{ id: number }>(created)).id;
        names.set(id, `w${n}-${step}`);
        const [renamed, r2] = await write(who, "PUT", `/v3.0/pinpoints/${id}`, { name: `w${n}-${step}-renamed` });
        retried += r2;
        expect(renamed.status).toBe(200);
        names.set(id, `w${n}-${step}-renamed`);
        if (step % 3 === 0) {
          const [gone, r3] = await write(who, "DELETE", `/v3.0/pinpoints/${id}`);
          retried += r3;
          expect(gone.status).toBe(204);
          deleted.add(id);
        }
        if (step % 4 === 0) {
          const [added, r4] = await write(who, "POST", `/v3.0/lists/${list.id}/pinpoints`, [
            { id: seeded[step % 120] },
          ]);
          retried += r4;
          expect(added.status).toBe(200);
        }
      }
    };
    const writers = [1, 2, 3, 4].map(writer);
    // Each batch a little slower than in-process D1, so the writers write while the rows are copied.
    const slow =
      (db: D1Database): Batch =>
      async (statements) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return batchOf(db)(statements);
      };
    const moveStarted = Date.now();
    const report = await move(who.accountId, "SHARD_2", {
      batchRows: 20,
      shards: Object.fromEntries(SHARDS.map((name) => [name, slow(bindingNamed(env, name))])),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop = true;
    await Promise.all(writers);

    expect(report).toMatchObject({ from: DIRECTORY, to: "SHARD_2", purged: true });
    // Writes pause only for the final catch-up, never for the copy. How long, against its goal, is
    // bench/move.ts's to measure: a shared machine's load stretches it here.
    expect(report.pauseMs).toBeGreaterThan(0);
    expect(report.pauseMs).toBeLessThan((Date.now() - moveStarted) / 2);
    expect(report.caughtUp).toBeGreaterThan(0);
    expect(await shardOf(who.accountId)).toBe("SHARD_2");
    expect(names.size).toBeGreaterThan(4);

    // The audit: every acknowledged write, read back through the API.
    for (const [id, name] of names) {
      const response = await who.get(`/v3.0/pinpoints/${id}`);
      if (deleted.has(id)) expect(response.status, `${id}`).toBe(404);
      else {
        expect(response.status, `${id}`).toBe(200);
        expect((await json(response)).name).toBe(name);
      }
    }
    for (const id of seeded) expect((await who.get(`/v3.0/pinpoints/${id}`)).status).toBe(200);
    const target = await rowsOf(bindingNamed(env, "SHARD_2"), who.accountId);
    expect(target.pinpoints).toBe(120 + names.size - deleted.size);
    expect(target.events).toBe(1);
    expect(Object.values(await rowsOf(env.DB, who.accountId)).every((n) => n === 0)).toBe(true);
    // Derived rows rebuilt by the target's triggers: the tile cells count every place and every member.
    const shard2 = bindingNamed(env, "SHARD_2");
    const cells = (listId: number) =>
      shard2
        .prepare(
          "SELECT coalesce(sum(places), 0) AS n FROM tile_cells WHERE account_id = ? AND list_id = ? AND level = 4",
        )
        .bind(who.accountId, listId)
        .first<{ n: number }>();
    const members = await shard2
      .prepare("SELECT count(*) AS n FROM list_pinpoints WHERE list_id = ?")
      .bind(list.id)
      .first<{ n: number }>();
    expect((await cells(0))!.n).toBe(target.pinpoints);
    expect((await cells(list.id))!.n).toBe(members!.n);
    expect(members!.n).toBeGreaterThanOrEqual(60);

    // The follower continues from its old cursor: the last entry of each object is the object's fate.
    const fate = new Map<number, string>();
    let url: string | null = `/v3.0/changes?cursor=${encodeURIComponent(cursor)}`;
    while (url) {
      const response = await who.get(url);
      expect(response.status, await response.clone().text()).toBe(200);
      const feed = await json<{ results: { type: string; id: number; op: string }[]; next: string | null }>(response);
      for (const entry of feed.results) if (entry.type === "pinpoint") fate.set(entry.id, entry.op);
      url = feed.next;
    }
    for (const id of names.keys()) expect(fate.get(id), `${id}`).toBe(deleted.has(id) ? "delete" : "upsert");

    // The webhook moved with its delivery log, and its deliveries went on: every place written reached it.
    expect(target.webhooks).toBe(1);
    expect((await who.get(`/v3.0/webhooks/${hook.id}`)).status).toBe(200);
    const attempts = await json<{ results: unknown[] }>(await who.get(`/v3.0/webhooks/${hook.id}/deliveries`));
    expect(attempts.results.length).toBeGreaterThan(0);
    const delivered = new Set<number>();
    for (let i = 0; i < 300 && [...names.keys()].some((id) => !delivered.has(id)); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      for (const { body } of await received(hookName))
        delivered.add((JSON.parse(body) as { data: { id: number } }).data.id);
    }
    expect([...names.keys()].filter((id) => !delivered.has(id))).toEqual([]);

    // A write routed with a stale view of the directory reaches the old shard, which refuses it.
    await expect(
      env.DB.prepare("INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, 'stale', 0, 0)")
        .bind(who.accountId)
        .run(),
    ).rejects.toThrow(/account_fenced/);
    // New ids on the target come from above everything copied into it.
    const fresh = await createPinpoint(who);
    expect(fresh.id).toBeGreaterThan(Math.max(...names.keys(), ...seeded));
    expect(Math.floor(fresh.id / ID_RANGE)).toBeGreaterThan(2);
    console.log(JSON.stringify({ move: report, writes: names.size, retried }));
  }, 300_000);

  it("refuses to start while the source or the target has a data fill to finish, and moves once it is done", async () => {
    const who = await caller("read write", await createAccount("SHARD_1"));
    for (let i = 0; i < 5; i++) await createPinpoint(who, { name: `東京 ${i}` });
    for (const shard of ["SHARD_1", "SHARD_2"]) {
      const db = bindingNamed(env, shard);
      await db.prepare("INSERT INTO data_fills (name, blocks) VALUES ('search_forms_pinpoints', 'text_search')").run();
      await expect(move(who.accountId, "SHARD_2")).rejects.toThrow(
        new RegExp(`${shard} has data fills to finish \\(search_forms_pinpoints\\)`),
      );
      expect(await shardOf(who.accountId)).toBe("SHARD_1");
      expect((await runFills(batchOf(db))).finished).toEqual(["search_forms_pinpoints"]);
      await db.prepare("DELETE FROM data_fills").run();
    }
    expect((await move(who.accountId, "SHARD_2")).copied).toBeGreaterThanOrEqual(5);
    expect((await rowsOf(bindingNamed(env, "SHARD_2"), who.accountId)).pinpoints).toBe(5);
  });

  it("leaves an interrupted account whole on its source, and moves it when run again", async () => {
    const who = await caller("read write", await createAccount("SHARD_1"));
    for (let i = 0; i < 30; i++) await createPinpoint(who, { name: `p${i}` });
    const abort = new AbortController();
    let batches = 0;
    const counting = (db: D1Database): Batch => {
      const inner = batchOf(db);
      return (statements) => {
        if (++batches === 6) abort.abort();
        return inner(statements);
      };
    };
    await expect(
      move(who.accountId, "DB", {
        signal: abort.signal,
        shards: {
          DB: counting(env.DB),
          SHARD_1: counting(bindingNamed(env, "SHARD_1")),
          SHARD_2: batchOf(bindingNamed(env, "SHARD_2")),
        },
      }),
    ).rejects.toThrow(MoveError);
    expect(await shardOf(who.accountId)).toBe("SHARD_1");
    expect((await rowsOf(bindingNamed(env, "SHARD_1"), who.accountId)).pinpoints).toBe(30);
    const [renamed] = await write(who, "POST", "/v3.0/pinpoints", {
      name: "after the interruption",
      latitude: 0,
      longitude: 0,
    });
    expect(renamed.status).toBe(201);

    const report = await move(who.accountId, "DB");
    expect(report.from).toBe("SHARD_1");
    expect(await shardOf(who.accountId)).toBe("DB");
    expect((await rowsOf(env.DB, who.accountId)).pinpoints).toBe(31);
    expect((await rowsOf(bindingNamed(env, "SHARD_1"), who.accountId)).pinpoints).toBe(0);
    const page = await json<{ results: unknown[] }>(await who.get("/v3.0/pinpoints?limit=100"));
    expect(page.results).toHaveLength(31);
  });
});

describe("moving an account while it is written", () => {
  it("copies a place created and put on a list while the rows are copied, with its event", async () => {
    const who = await caller("read write", await createAccount(DIRECTORY));
    const list = await createList(who);
    const places: number[] = [];
    for (let i = 0; i < 20; i++) places.push((await createPinpoint(who, { name: `p${i}` })).id);
    const added = await who.send(
      "POST",
      `/v3.0/lists/${list.id}/pinpoints`,
      places.slice(0, 10).map((id) => ({ id })),
    );
    expect(added.status).toBe(200);

    // Once the places are copied, as the lists' copy begins: a new place on the list, another with an event.
    let late: { member: number; place: number; event: number } | null = null;
    const source = batchOf(env.DB);
    const writingSource: Batch = async (statements) => {
      if (!late && /FROM "lists" WHERE account_id/.test(statements[0]!.sql)) {
        const member = (await createPinpoint(who, { name: "late member" })).id;
        const [onList] = await write(who, "POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: member }]);
        expect(onList.status).toBe(200);
        const place = (await createPinpoint(who, { name: "late place" })).id;
        const [event] = await write(who, "POST", "/v3.0/events", {
          name: "late event",
          pinpoint: place,
          dates: [{ start: "2031-01-01T10:00:00Z", end: "2031-01-01T11:00:00Z" }],
        });
        expect(event.status, await event.clone().text()).toBe(201);
        late = { member, place, event: (await json<{ id: number }>(event)).id };
      }
      return source(statements);
    };
    const report = await move(who.accountId, "SHARD_1", {
      batchRows: 5,
      shards: {
        ...Object.fromEntries(SHARDS.map((name) => [name, batchOf(bindingNamed(env, name))])),
        DB: writingSource,
      },
    });
    expect(report).toMatchObject({ from: DIRECTORY, to: "SHARD_1", purged: true });
    expect(late).not.toBeNull();
    const { member, place, event } = late!;

    const members = await json<{ results: { id: number }[] }>(
      await who.get(`/v3.0/pinpoints?list=${list.id}&limit=100`),
    );
    expect(members.results.map((p) => p.id).sort((a, b) => a - b)).toEqual(
      [...places.slice(0, 10), member].sort((a, b) => a - b),
    );
    for (const id of [member, place]) expect((await who.get(`/v3.0/pinpoints/${id}`)).status).toBe(200);
    const copiedEvent = await who.get(`/v3.0/events/${event}`);
    expect(copiedEvent.status).toBe(200);
    expect(await json(copiedEvent)).toMatchObject({ name: "late event", pinpoint: place });
    const target = await rowsOf(bindingNamed(env, "SHARD_1"), who.accountId);
    expect(target).toMatchObject({ pinpoints: 22, lists: 1, events: 1 });
    expect(Object.values(await rowsOf(env.DB, who.accountId)).every((n) => n === 0)).toBe(true);
  });

  it("carries each list's order, and the moves made while it copies", async () => {
    const who = await caller("read write", await createAccount(DIRECTORY));
    const list = await createList(who);
    const places: number[] = [];
    for (let i = 0; i < 40; i++) places.push((await createPinpoint(who, { name: `p${i}` })).id);
    const shuffled = [...places].sort((x, y) => ((x * 7919) % 41) - ((y * 7919) % 41));
    expect(
      (
        await who.send(
          "POST",
          `/v3.0/lists/${list.id}/pinpoints`,
          shuffled.map((id) => ({ id })),
        )
      ).status,
    ).toBe(200);
    let model = [...shuffled].reverse();
    expect((await who.send("PUT", `/v3.0/lists/${list.id}/pinpoints/order`, { ids: model })).status).toBe(200);

    // One writer moves members one after another throughout the move: each acknowledged move is in the model.
    let stop = false;
    let moves = 0;
    const writer = (async () => {
      for (let step = 0; !stop; step++) {
        const move = model[(step * 13) % model.length]!;
        const before = step % 5 === 0 ? null : model[(step * 7) % model.length]!;
        if (move === before) continue;
        const [answer] = await write(who, "PUT", `/v3.0/lists/${list.id}/pinpoints/order`, { move, before });
        expect(answer.status, await answer.clone().text()).toBe(200);
        const rest = model.filter((id) => id !== move);
        const at = before === null ? rest.length : rest.indexOf(before);
        model = [...rest.slice(0, at), move, ...rest.slice(at)];
        moves++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const slow =
      (db: D1Database): Batch =>
      async (statements) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        return batchOf(db)(statements);
      };
    const report = await move(who.accountId, "SHARD_2", {
      batchRows: 10,
      shards: Object.fromEntries(SHARDS.map((name) => [name, slow(bindingNamed(env, name))])),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop = true;
    await writer;
    expect(report).toMatchObject({ from: DIRECTORY, to: "SHARD_2", purged: true });
    expect(moves).toBeGreaterThan(3);

    const pages = await json<{ results: { id: number }[] }>(
      await who.get(`/v3.0/pinpoints?list=${list.id}&order=position&limit=100`),
    );
    expect(pages.results.map((p) => p.id)).toEqual(model);
    const { results } = await bindingNamed(env, "SHARD_2")
      .prepare("SELECT pinpoint_id FROM list_pinpoints WHERE list_id = ? ORDER BY position, pinpoint_id")
      .bind(list.id)
      .all<{ pinpoint_id: number }>();
    expect(results.map((r) => r.pinpoint_id)).toEqual(model);
  }, 120_000);

  it("answers 404, not 403, for the account's own deleted places during and after a failed move", async () => {
    const who = await caller("read write", await createAccount("SHARD_1"));
    const stranger = await caller("read write", await createAccount("SHARD_2"));
    const theirs = (await createPinpoint(stranger)).id;
    const list = await createList(who);
    const places: number[] = [];
    for (let i = 0; i < 12; i++) places.push((await createPinpoint(who, { name: `p${i}` })).id);

    // Everything is copied to SHARD_2; the account then deletes a place on SHARD_1, still its shard.
    const abort = new AbortController();
    let copiedAll = false;
    let during: number[] | null = null;
    const source = batchOf(bindingNamed(env, "SHARD_1"));
    const deletingSource: Batch = async (statements) => {
      if (copiedAll && !during) {
        const [deleted] = await write(who, "DELETE", `/v3.0/pinpoints/${places[0]}`);
        expect(deleted.status).toBe(204);
        const statuses = [
          (await who.get(`/v3.0/pinpoints/${places[0]}`)).status,
          (await who.send("PUT", `/v3.0/pinpoints/${places[0]}`, { name: "again" })).status,
          (await who.get(`/v3.0/pinpoints/${theirs}`)).status,
        ];
        const batch = await json<{ errors: { error: string }[] }>(
          await who.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: places[0] }, { id: theirs }]),
        );
        during = [...statuses, ...batch.errors.map((e) => (e.error === "not_found" ? 404 : 403))];
        abort.abort();
      }
      return source(statements);
    };
    await expect(
      move(who.accountId, "SHARD_2", {
        signal: abort.signal,
        log: (line) => {
          if (line.startsWith("Copied")) copiedAll = true;
        },
        shards: {
          ...Object.fromEntries(SHARDS.map((name) => [name, batchOf(bindingNamed(env, name))])),
          SHARD_1: deletingSource,
        },
      }),
    ).rejects.toThrow(MoveError);
    expect(during).toEqual([404, 404, 403, 404, 403]);
    expect(await shardOf(who.accountId)).toBe("SHARD_1");
    // SHARD_2 keeps the failed move's copy of the account's places until the next run.
    const leftover = await bindingNamed(env, "SHARD_2")
      .prepare("SELECT account_id FROM pinpoints WHERE id = ?")
      .bind(places[1])
      .first("account_id");
    expect(leftover).toBe(who.accountId);

    // After: the deleted place, and one deleted now, are 404; another account's place is still 403.
    const [deleted] = await write(who, "DELETE", `/v3.0/pinpoints/${places[1]}`);
    expect(deleted.status).toBe(204);
    for (const id of [places[0], places[1]]) {
      expect((await who.get(`/v3.0/pinpoints/${id}`)).status, `${id}`).toBe(404);
      expect((await who.send("DELETE", `/v3.0/pinpoints/${id}`)).status, `${id}`).toBe(404);
    }
    expect((await who.get(`/v3.0/pinpoints/${theirs}`)).status).toBe(403);
  });
});
