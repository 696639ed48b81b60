/**
 * List membership: POST and DELETE /v3.0/lists/{id}/pinpoints with batches of
 * `{"id"}` items, per-item errors, the 1,000-item limit and a full mixed batch.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { shardBindings } from "../src/db/shards";
import { WHOLE_ACCOUNT } from "../src/db/reach";
import { addToList, removeFromList } from "../src/lists/membership";
import { allPages, call, caller, contentDb, createList, createPinpoint, json, type Caller } from "./helpers";

type BatchResult = { total: number; errors: { index: number; id: unknown; error: string }[] };

const members = (list: number) => `/v3.0/lists/${list}/pinpoints`;

/** Inserts `n` pinpoints for `accountId` straight into D1; returns their ids in ascending order. */
async function insertPinpoints(accountId: number, n: number): Promise<number[]> {
  const { results } = await (
    await contentDb(accountId)
  )
    .prepare(
      `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2)
     INSERT INTO pinpoints (account_id, name, latitude, longitude) SELECT ?1, 'bulk ' || i, 0, 0 FROM seq
     RETURNING id`,
    )
    .bind(accountId, n)
    .all<{ id: number }>();
  return results.map((r) => r.id).sort((x, y) => x - y);
}

async function listMembers(who: Caller, list: number): Promise<number[]> {
  const pages = await allPages<{ id: number }>(who, `/v3.0/pinpoints?list=${list}&limit=1000`);
  return pages.flatMap((page) => page.results.map((p) => p.id));
}

async function batch(who: Caller, method: "POST" | "DELETE", list: number, body: unknown, headers = {}) {
  const response = await who.send(method, members(list), body, headers);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

describe("POST /v3.0/lists/{id}/pinpoints", () => {
  it("adds pinpoints and answers 200 {total, errors}", async () => {
    const a = await caller();
    const [p1, p2] = [await createPinpoint(a), await createPinpoint(a)];
    const list = await createList(a);
    const result = await batch(a, "POST", list.id, [{ id: p2.id }, { id: p1.id }]);
    expect(result).toMatchObject({ status: 200, body: { total: 2, errors: [] } });
    expect(result.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await listMembers(a, list.id)).toEqual([p1.id, p2.id]);
  });

  it("accepts the slashed path and an empty batch", async () => {
    const a = await caller();
    const list = await createList(a);
    const response = await a.send("POST", `${members(list.id)}/`, []);
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ total: 0, errors: [] });
  });

  it("reports each failing item by index and still applies the valid ones", async () => {
    const a = await caller();
    const b = await caller();
    const mine = [await createPinpoint(a), await createPinpoint(a)];
    const theirs = await createPinpoint(b);
    const list = await createList(a);
    const items = [
      { id: mine[0]!.id },
      { id: 987_654_321 },
      { id: theirs.id },
      { id: "12" },
      {},
      null,
      7,
      { id: 0 },
      { id: 1.5 },
      { id: mine[1]!.id, extra: "ignored" },
    ];
    const { status, body } = await batch(a, "POST", list.id, items);
    expect(status).toBe(200);
    expect(body).toEqual({
      total: 10,
      errors: [
        { index: 1, id: 987_654_321, error: "not_found" },
        { index: 2, id: theirs.id, error: "forbidden" },
        { index: 3, id: "12", error: "invalid" },
        { index: 4, id: null, error: "invalid" },
        { index: 5, id: null, error: "invalid" },
        { index: 6, id: null, error: "invalid" },
        { index: 7, id: 0, error: "invalid" },
        { index: 8, id: 1.5, error: "invalid" },
      ],
    });
    expect(await listMembers(a, list.id)).toEqual([mine[0]!.id, mine[1]!.id]);
  });

  it("does not report adding a member twice, in one batch or across batches", async () => {
    const a = await caller();
    const p = await createPinpoint(a);
    const list = await createList(a);
    expect((await batch(a, "POST", list.id, [{ id: p.id }, { id: p.id }])).body).toEqual({ total: 2, errors: [] });
    expect((await batch(a, "POST", list.id, [{ id: p.id }])).body).toEqual({ total: 1, errors: [] });
    expect(await listMembers(a, list.id)).toEqual([p.id]);
  });

  it("lets one pinpoint belong to several lists", async () => {
    const a = await caller();
    const p = await createPinpoint(a);
    const [l1, l2] = [await createList(a), await createList(a)];
    await batch(a, "POST", l1.id, [{ id: p.id }]);
    await batch(a, "POST", l2.id, [{ id: p.id }]);
    expect(await listMembers(a, l1.id)).toEqual([p.id]);
    expect(await listMembers(a, l2.id)).toEqual([p.id]);
  });

  it.each([[{ id: 1 }], ["[]"], [42], [null], [{ items: [] }]])(
    "refuses a body that is not an array (%j)",
    async (body) => {
      const a = await caller();
      const list = await createList(a);
      const result = await batch(a, "POST", list.id, body);
      expect(result.status).toBe(400);
      expect(result.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
    },
  );

  it("refuses malformed JSON, an empty body and a missing body", async () => {
    const a = await caller();
    const list = await createList(a);
    for (const body of ['[{"id": 1}', ""]) {
      const response = await call(members(list.id), {
        method: "POST",
        headers: { Authorization: `Bearer ${a.token}`, "Content-Type": "application/json" },
        body,
      });
      expect(response.status, body).toBe(400);
      await response.body?.cancel();
    }
    const response = await a.send("POST", members(list.id));
    expect(response.status).toBe(400);
    await response.body?.cancel();
  });

  it("refuses more than 1,000 items with 413 and applies none", async () => {
    const a = await caller();
    const p = await createPinpoint(a);
    const list = await createList(a);
    const items = Array.from({ length: 1001 }, () => ({ id: p.id }));
    const result = await batch(a, "POST", list.id, items);
    expect(result.status).toBe(413);
    expect(result.body.status).toBe(413);
    expect(await listMembers(a, list.id)).toEqual([]);
  });

  it("answers 404 for a list that does not exist", async () => {
    const a = await caller();
    const p = await createPinpoint(a);
    expect((await batch(a, "POST", 987_654_321, [{ id: p.id }])).status).toBe(404);
    const response = await a.send("POST", "/v3.0/lists/abc/pinpoints", [{ id: p.id }]);
    expect(response.status).toBe(404);
    await response.body?.cancel();
  });

  it("applies a batch of exactly 1,000 mixed items in one request", async () => {
    const a = await caller();
    const b = await caller();
    const own = await insertPinpoints(a.accountId, 700);
    const foreign = await insertPinpoints(b.accountId, 100);
    const list = await createList(a);
    // A member before the batch: adding it again is no error.
    await batch(a, "POST", list.id, [{ id: own[0] }]);

    const missing = (foreign[foreign.length - 1]! + own[own.length - 1]!) * 10;
    const items: unknown[] = [];
    const expected: BatchResult["errors"] = [];
    for (let i = 0; i < 1000; i++) {
      const kind = i % 10;
      if (kind < 6) {
        items.push({ id: own[Math.floor(i / 10) * 6 + kind] });
      } else if (kind === 6) {
        const id = foreign[Math.floor(i / 10)]!;
        items.push({ id });
        expected.push({ index: i, id, error: "forbidden" });
      } else if (kind === 7) {
        const id = missing + i;
        items.push({ id });
        expected.push({ index: i, id, error: "not_found" });
      } else if (kind === 8) {
        const shapes = [{ id: String(own[0]) }, { pinpoint: own[0] }, null, { id: -3 }, [own[0]]];
        const shape = shapes[Math.floor(i / 10) % shapes.length];
        items.push(shape);
        const id = shape !== null && typeof shape === "object" && "id" in shape ? shape.id : null;
        expected.push({ index: i, id, error: "invalid" });
      } else {
        // A duplicate of an item earlier in the batch.
        items.push({ id: own[Math.floor(i / 10) * 6] });
      }
    }
    expect(items).toHaveLength(1000);

    const started = Date.now();
    const { status, body } = await batch(a, "POST", list.id, items);
    const elapsed = Date.now() - started;
    expect(status).toBe(200);
    expect(body.total).toBe(1000);
    expect(body.errors).toEqual(expected);
    expect(body.errors).toHaveLength(300);
    // Every own pinpoint named (600 of the 700, own[0] among them) is now a member, and nothing else.
    const named = own.filter((_, n) => n < 600);
    expect(await listMembers(a, list.id)).toEqual(named);
    console.log(`membership: 1,000 mixed items added in ${elapsed} ms`);

    // The same batch again removes exactly those members; the rest are reported.
    const removal = await batch(a, "DELETE", list.id, items);
    expect(removal.status).toBe(200);
    expect(removal.body).toEqual({ total: 1000, errors: expected });
    expect(await listMembers(a, list.id)).toEqual([]);
  });
});

describe("DELETE /v3.0/lists/{id}/pinpoints", () => {
  it("removes members and answers 200 with the batch result, not_member for non-members", async () => {
    const a = await caller();
    const b = await caller();
    const [p1, p2, p3] = [await createPinpoint(a), await createPinpoint(a), await createPinpoint(a)];
    const theirs = await createPinpoint(b);
    const list = await createList(a);
    await batch(a, "POST", list.id, [{ id: p1.id }, { id: p2.id }]);
    const { status, body } = await batch(a, "DELETE", list.id, [
      { id: p1.id },
      { id: p3.id },
      { id: 987_654_321 },
      { id: theirs.id },
      { id: "x" },
    ]);
    expect(status).toBe(200);
    expect(body).toEqual({
      total: 5,
      errors: [
        { index: 1, id: p3.id, error: "not_member" },
        { index: 2, id: 987_654_321, error: "not_found" },
        { index: 3, id: theirs.id, error: "forbidden" },
        { index: 4, id: "x", error: "invalid" },
      ],
    });
    expect(await listMembers(a, list.id)).toEqual([p2.id]);
    // The pinpoints themselves are untouched.
    expect((await a.get(`/v3.0/pinpoints/${p1.id}`)).status).toBe(200);
  });

  it("answers 204 with Preference-Applied for Prefer: return=minimal", async () => {
    const a = await caller();
    const p = await createPinpoint(a);
    const list = await createList(a);
    await batch(a, "POST", list.id, [{ id: p.id }]);
    const result = await batch(a, "DELETE", list.id, [{ id: p.id }], { Prefer: "return=minimal" });
    expect(result.status).toBe(204);
    expect(result.body).toBeNull();
    expect(result.headers.get("Preference-Applied")).toBe("return=minimal");
    expect(await listMembers(a, list.id)).toEqual([]);
    // Without the preference the full result comes back, and no Preference-Applied.
    const full = await batch(a, "DELETE", list.id, [{ id: p.id }], { Prefer: "return=representation" });
    expect(full.status).toBe(200);
    expect(full.headers.get("Preference-Applied")).toBeNull();
    expect(full.body).toEqual({ total: 1, errors: [{ index: 0, id: p.id, error: "not_member" }] });
  });

  it("applies the same body rules as POST", async () => {
    const a = await caller();
    const list = await createList(a);
    expect((await batch(a, "DELETE", list.id, { id: 1 })).status).toBe(400);
    expect(
      (
        await batch(
          a,
          "DELETE",
          list.id,
          Array.from({ length: 1001 }, () => ({ id: 1 })),
        )
      ).status,
    ).toBe(413);
    expect((await batch(a, "DELETE", 987_654_321, [{ id: 1 }])).status).toBe(404);
    expect((await batch(a, "DELETE", 987_654_321, [{ id: 1 }], { Prefer: "return=minimal" })).status).toBe(404);
  });
});

describe("statements per batch", () => {
  /** A D1 binding that records what reaches the database: batches, statements and bound parameters. */
  function countingD1(db: D1Database) {
    const seen = { batches: 0, statements: 0, maxParameters: 0, other: 0 };
    const d1 = new Proxy(db, {
      get(target, property) {
        if (property === "prepare") {
          return (sql: string) => {
            const statement = target.prepare(sql);
            return new Proxy(statement, {
              get(inner, name) {
                if (name === "bind") {
                  return (...values: unknown[]) => {
                    seen.maxParameters = Math.max(seen.maxParameters, values.length);
                    return inner.bind(...values);
                  };
                }
                if (name === "run" || name === "all" || name === "first" || name === "raw") seen.other++;
                const value = Reflect.get(inner, name, inner);
                return typeof value === "function" ? value.bind(inner) : value;
              },
            });
          };
        }
        if (property === "batch") {
          return (statements: D1PreparedStatement[]) => {
            seen.batches++;
            seen.statements += statements.length;
            return target.batch(statements);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { d1, seen };
  }

  it.each([1, 10, 1000])(
    "is one D1 batch of seven statements to add and six to remove %i items, far below 100 parameters",
    async (n) => {
      const a = await caller();
      const own = await insertPinpoints(a.accountId, n);
      const list = await createList(a);
      const items = own.map((id) => ({ id }));
      for (const [apply, statements] of [
        [addToList, 7],
        [removeFromList, 6],
      ] as const) {
        const { d1, seen } = countingD1(await contentDb(a.accountId));
        const writer = { accountId: a.accountId, actor: `client:${a.clientId}` };
        const result = await apply(d1, writer, list.id, WHOLE_ACCOUNT, items);
        expect(result).toEqual({ total: n, errors: [] });
        // The list, the ids, the account and the caller's reach (src/db/reach.ts): three lists and an actor.
        expect(seen).toEqual({ batches: 1, statements, maxParameters: 6, other: 0 });
      }
    },
  );
});

describe("a batch moves its list's version and change-log entry once", () => {
  type Entry = { type: string; id: number; op: string; version: number };

  const version = async (who: Caller, list: number) =>
    Number((await who.get(`/v3.0/lists/${list}`)).headers.get("ETag")!.replaceAll('"', ""));

  /** The feed's position now, and the entries written after a position. */
  async function feedCursor(who: Caller): Promise<string> {
    return (await json<{ cursor: string }>(await who.get("/v3.0/changes"))).cursor;
  }
  async function entriesSince(who: Caller, cursor: string): Promise<Entry[]> {
    const pages = await allPages<Entry>(who, `/v3.0/changes?cursor=${encodeURIComponent(cursor)}&limit=1000`);
    return pages.flatMap((page) => page.results);
  }

  const batchesOpen = async () => {
    let open = 0;
    for (const shard of shardBindings(env)) {
      open += (await shard.prepare("SELECT count(*) AS n FROM list_batches").first<{ n: number }>())!.n;
    }
    return open;
  };

  it("an addition of 500 members: version + 1, one upsert of the list in the feed", async () => {
    const a = await caller();
    const list = await createList(a);
    const own = await insertPinpoints(a.accountId, 500);
    const before = await version(a, list.id);
    const cursor = await feedCursor(a);
    expect(
      await batch(
        a,
        "POST",
        list.id,
        own.map((id) => ({ id })),
      ),
    ).toMatchObject({ status: 200 });
    expect(await version(a, list.id)).toBe(before + 1);
    expect(await entriesSince(a, cursor)).toEqual([
      expect.objectContaining({ type: "list", id: list.id, op: "upsert", version: before + 1 }),
    ]);
    expect(await batchesOpen()).toBe(0);
  });

  it("a removal: version + 1 and one feed entry, however many members go", async () => {
    const a = await caller();
    const list = await createList(a);
    const own = await insertPinpoints(a.accountId, 20);
    await batch(
      a,
      "POST",
      list.id,
      own.map((id) => ({ id })),
    );
    const before = await version(a, list.id);
    const cursor = await feedCursor(a);
    const result = await batch(
      a,
      "DELETE",
      list.id,
      own.slice(0, 15).map((id) => ({ id })),
    );
    expect(result).toMatchObject({ status: 200, body: { total: 15, errors: [] } });
    expect(await version(a, list.id)).toBe(before + 1);
    expect(await entriesSince(a, cursor)).toEqual([
      expect.objectContaining({ type: "list", id: list.id, op: "upsert", version: before + 1 }),
    ]);
    expect(await listMembers(a, list.id)).toEqual(own.slice(15));
  });

  it("a batch that changes nothing leaves the version and the feed alone", async () => {
    const a = await caller();
    const b = await caller();
    const list = await createList(a);
    const own = await insertPinpoints(a.accountId, 3);
    const absent = await insertPinpoints(a.accountId, 2);
    const theirs = await createPinpoint(b);
    await batch(
      a,
      "POST",
      list.id,
      own.map((id) => ({ id })),
    );
    const before = await version(a, list.id);
    const cursor = await feedCursor(a);
    // Members already, another account's pinpoint, one that does not exist, non-members to remove.
    const readd = await batch(a, "POST", list.id, [...own.map((id) => ({ id })), { id: theirs.id }, { id: 9e14 }]);
    expect(readd.body.errors.map((e: { error: string }) => e.error)).toEqual(["forbidden", "not_found"]);
    const remove = await batch(
      a,
      "DELETE",
      list.id,
      absent.map((id) => ({ id })),
    );
    expect(remove.body.errors.map((e: { error: string }) => e.error)).toEqual(["not_member", "not_member"]);
    expect(await version(a, list.id)).toBe(before);
    expect(await entriesSince(a, cursor)).toEqual([]);
    // Another account's list: 403, nothing changed, no batch left open.
    expect((await batch(b, "POST", list.id, [{ id: theirs.id }])).status).toBe(403);
    expect(await version(a, list.id)).toBe(before);
    expect(await batchesOpen()).toBe(0);
  });

  it("a deleted pinpoint moves each list it was in by one, and the feed shows each", async () => {
    const a = await caller();
    const [l1, l2, l3] = [await createList(a), await createList(a), await createList(a)];
    const [gone, kept] = [await createPinpoint(a), await createPinpoint(a)];
    for (const list of [l1, l2]) await batch(a, "POST", list.id, [{ id: gone.id }, { id: kept.id }]);
    await batch(a, "POST", l3.id, [{ id: kept.id }]);
    const before = await Promise.all([l1, l2, l3].map((list) => version(a, list.id)));
    const cursor = await feedCursor(a);
    expect((await a.send("DELETE", `/v3.0/pinpoints/${gone.id}`)).status).toBe(204);
    const after = await Promise.all([l1, l2, l3].map((list) => version(a, list.id)));
    expect(after).toEqual([before[0]! + 1, before[1]! + 1, before[2]]);
    const entries = await entriesSince(a, cursor);
    expect(entries.map(({ type, id, op, version }) => ({ type, id, op, version }))).toEqual(
      expect.arrayContaining([
        { type: "pinpoint", id: gone.id, op: "delete", version: expect.any(Number) },
        { type: "list", id: l1.id, op: "upsert", version: after[0] },
        { type: "list", id: l2.id, op: "upsert", version: after[1] },
      ]),
    );
    expect(entries).toHaveLength(3);
  });

  it("a membership written outside a batch still moves the list's version per row", async () => {
    const a = await caller();
    const list = await createList(a);
    const own = await insertPinpoints(a.accountId, 2);
    const before = await version(a, list.id);
    await (
      await contentDb(a.accountId)
    )
      .prepare("INSERT INTO list_pinpoints (list_id, pinpoint_id) VALUES (?1, ?2), (?1, ?3)")
      .bind(list.id, own[0], own[1])
      .run();
    expect(await version(a, list.id)).toBe(before + 2);
  });
});
