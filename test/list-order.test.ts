/**
 * The owner's order of a list (docs/api.md, "The order of a list"): PUT /v3.0/lists/{id}/pinpoints/order
 * by ids and by moves, and the pages of `?list=ID&order=position`, checked against a model of the order
 * through random sequences of moves, additions, removals and whole orders, in small pages both ways;
 * what one move writes; every bad body; conditional and unconditional moves sent at once; and the change
 * feed and a webhook seeing a reorder.
 */
import { describe, expect, it } from "vitest";
import { MIDDLE_POSITION, moveSql, POSITION_GAP, POSITION_SPACE } from "../src/db/list-positions";
import {
  caller,
  contentDb,
  createList,
  createPinpoint,
  expectProblem,
  json,
  personCaller,
  received,
  receiverUrl,
  settleWebhook,
  walkBothWays,
  type Caller,
} from "./helpers";

const orderOf = (list: number) => `/v3.0/lists/${list}/pinpoints/order`;
const membersOf = (list: number) => `/v3.0/lists/${list}/pinpoints`;

/** A seeded pseudo-random generator (mulberry32), so a failing sequence can be replayed. */
function randomFrom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[below(items.length)]!;
  const shuffled = <T>(items: readonly T[]): T[] => {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = below(i + 1);
      [copy[i], copy[j]] = [copy[j]!, copy[i]!];
    }
    return copy;
  };
  return { next, below, pick, shuffled };
}

/** `ids` with `moved` taken out and put before `before` (at the end when null): what a move does. */
function moved(ids: readonly number[], move: number, before: number | null): number[] {
  const rest = ids.filter((id) => id !== move);
  const at = before === null ? rest.length : rest.indexOf(before);
  return [...rest.slice(0, at), move, ...rest.slice(at)];
}

/** The list's members in its order, read `limit` a page forward and back through the API. */
async function readOrder(who: Caller, list: number, limit = 1000): Promise<number[]> {
  const rows = await walkBothWays<{ id: number }>(who, `/v3.0/pinpoints?list=${list}&order=position&limit=${limit}`);
  return rows.map((row) => row.id);
}

type Stored = { pinpoint_id: number; position: number };

/** The list's memberships as stored, in the list's order. */
async function stored(who: Caller, list: number): Promise<Stored[]> {
  const db = await contentDb(who.accountId);
  const { results } = await db
    .prepare("SELECT pinpoint_id, position FROM list_pinpoints WHERE list_id = ? ORDER BY position, pinpoint_id")
    .bind(list)
    .all<Stored>();
  return results;
}

/** The positions are labels of the space, and the stored order is `expected`. */
async function expectStored(who: Caller, list: number, expected: readonly number[]): Promise<Stored[]> {
  const rows = await stored(who, list);
  expect(rows.map((row) => row.pinpoint_id)).toEqual(expected);
  for (const { position } of rows) {
    expect(Number.isSafeInteger(position)).toBe(true);
    expect(position).toBeGreaterThanOrEqual(0);
    expect(position).toBeLessThan(POSITION_SPACE);
  }
  return rows;
}

const versionOf = async (who: Caller, list: number) =>
  Number((await who.get(`/v3.0/lists/${list}`)).headers.get("ETag")!.replaceAll('"', ""));

async function send(who: Caller, list: number, body: unknown, headers: Record<string, string> = {}) {
  const response = await who.send("PUT", orderOf(list), body, headers);
  expect(response.status, await response.clone().text()).toBe(200);
  return response;
}

async function add(who: Caller, list: number, ids: readonly number[]) {
  const response = await who.send(
    "POST",
    membersOf(list),
    ids.map((id) => ({ id })),
  );
  expect(response.status, await response.clone().text()).toBe(200);
  return json<{ errors: unknown[] }>(response);
}

async function remove(who: Caller, list: number, ids: readonly number[]) {
  const response = await who.send(
    "DELETE",
    membersOf(list),
    ids.map((id) => ({ id })),
  );
  expect(response.status, await response.clone().text()).toBe(200);
}

/** `n` pinpoints of the caller's account, made straight in D1; their ids ascending. */
async function insertPinpoints(who: Caller, n: number): Promise<number[]> {
  const db = await contentDb(who.accountId);
  const { results } = await db
    .prepare(
      `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2)
       INSERT INTO pinpoints (account_id, name, latitude, longitude, tags)
       SELECT ?1, 'place ' || i, 48 + i / 1000.0, 2 + i / 1000.0, json_array(CASE WHEN i % 3 = 0 THEN 'third' ELSE 'other' END)
       FROM seq RETURNING id`,
    )
    .bind(who.accountId, n)
    .all<{ id: number }>();
  return results.map((r) => r.id).sort((x, y) => x - y);
}

describe("a list's order against a model", () => {
  it("follows random moves, additions, removals and whole orders, in pages of any size both ways", async () => {
    const a = await caller();
    const random = randomFrom(20261128);
    const places = await insertPinpoints(a, 40);
    const list = (await createList(a)).id;
    let model: number[] = random.shuffled(places).slice(0, 25);
    await add(a, list, model);
    let version = await versionOf(a, list);
    const stats = { moves: 0, unchanged: 0, adds: 0, removes: 0, orders: 0 };

    for (let step = 0; step < 160; step++) {
      const before = model;
      const roll = random.next();
      if (roll < 0.6 && model.length >= 2) {
        const move = random.pick(model);
        const others = model.filter((id) => id !== move);
        const target = random.next() < 0.15 ? null : random.pick(others);
        await send(a, list, { move, before: target });
        model = moved(model, move, target);
        stats.moves++;
      } else if (roll < 0.75) {
        // Members among them are left where they are; the new ones go last, in the order sent.
        const sent = Array.from({ length: 1 + random.below(4) }, () => random.pick(places));
        await add(a, list, sent);
        for (const id of sent) if (!model.includes(id)) model = [...model, id];
        stats.adds++;
      } else if (roll < 0.9 && model.length > 3) {
        const gone = random.shuffled(model).slice(0, 1 + random.below(2));
        await remove(a, list, gone);
        model = model.filter((id) => !gone.includes(id));
        stats.removes++;
      } else {
        // A whole order, sometimes the one the list has already.
        model = random.next() < 0.2 ? model : random.shuffled(model);
        await send(a, list, { ids: model });
        stats.orders++;
      }
      const changed = JSON.stringify(before) !== JSON.stringify(model);
      if (!changed) stats.unchanged++;
      await expectStored(a, list, model);
      // The version moves once for a write that changed the order or the members, and not otherwise.
      const now = await versionOf(a, list);
      expect(now, `step ${step}`).toBe(version + (changed ? 1 : 0));
      version = now;
      if (step % 10 === 0) expect(await readOrder(a, list, 1 + random.below(7))).toEqual(model);
    }
    expect(await readOrder(a, list, 1)).toEqual(model);
    expect(stats.moves).toBeGreaterThan(60);
    expect(Object.values(stats).every((n) => n > 0)).toBe(true);
  }, 120_000);

  it("moves members into one spot until its labels run out, and spreads a bounded neighbourhood", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 300);
    const list = (await createList(a)).id;
    await add(a, list, places);
    let model = [...places];
    const random = randomFrom(7);
    // Every move lands just before the same member: each halves the labels left between it and its
    // predecessor, which run out after 31 moves (POSITION_GAP is 2^31).
    const fixed = places[150]!;
    let written = 0;
    let widest = 0;
    for (let step = 0; step < 120; step++) {
      const move = random.pick(model.filter((id) => id !== fixed));
      const was = new Map((await stored(a, list)).map((row) => [row.pinpoint_id, row.position]));
      await send(a, list, { move, before: fixed });
      model = moved(model, move, fixed);
      const rows = await expectStored(a, list, model);
      const changed = rows.filter((row) => was.get(row.pinpoint_id) !== row.position).length;
      written += changed;
      widest = Math.max(widest, changed);
    }
    expect(await readOrder(a, list, 13)).toEqual(model);
    // The labels ran out (more than the moved row was written at least once), and what was spread stayed
    // a small part of the list: far from relabelling all 300 members at each exhaustion.
    expect(widest).toBeGreaterThan(1);
    expect(widest).toBeLessThan(100);
    expect(written).toBeLessThan(120 * 4);
  });

  it("keeps memberships older than positions in pinpoint id order, and orders them as any others", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 30);
    const list = (await createList(a)).id;
    const db = await contentDb(a.accountId);
    // Written as before positions existed: every membership takes the column's default.
    for (const id of randomFrom(3).shuffled(places)) {
      await db.prepare("INSERT INTO list_pinpoints (list_id, pinpoint_id) VALUES (?, ?)").bind(list, id).run();
    }
    expect((await stored(a, list)).every((row) => row.position === MIDDLE_POSITION)).toBe(true);
    let model = [...places];
    expect(await readOrder(a, list, 4)).toEqual(model);
    let version = await versionOf(a, list);
    // Among members that share a label, a member moved where it is changes nothing.
    await send(a, list, { move: places[5], before: places[6] });
    await send(a, list, { move: places[29], before: null });
    expect(await versionOf(a, list)).toBe(version);
    const random = randomFrom(11);
    for (let step = 0; step < 40; step++) {
      const move = random.pick(model);
      const target =
        random.next() < 0.1
          ? null
          : random.next() < 0.2
            ? (model[model.indexOf(move) + 1] ?? null)
            : random.pick(model.filter((id) => id !== move));
      const before = model;
      await send(a, list, { move, before: target });
      model = moved(model, move, target);
      await expectStored(a, list, model);
      const now = await versionOf(a, list);
      expect(now).toBe(version + (JSON.stringify(before) === JSON.stringify(model) ? 0 : 1));
      version = now;
    }
    const fresh = (await createPinpoint(a)).id;
    await add(a, list, [fresh]);
    model = [...model, fresh];
    expect(await readOrder(a, list, 6)).toEqual(model);
  });

  it("works at the ends of the label space: additions make room, moves spread the crowded end", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 60);
    const list = (await createList(a)).id;
    await add(a, list, places.slice(0, 20));
    let model = places.slice(0, 20);
    const db = await contentDb(a.accountId);
    // The first ten crowded at the bottom of the space, the other ten at its very top.
    await db
      .prepare(
        `UPDATE list_pinpoints SET position = CASE WHEN r <= 10 THEN r - 1 ELSE ?2 - 21 + r END
         FROM (SELECT pinpoint_id AS id, row_number() OVER (ORDER BY position, pinpoint_id) AS r FROM list_pinpoints WHERE list_id = ?1) AS o
         WHERE list_id = ?1 AND pinpoint_id = o.id`,
      )
      .bind(list, POSITION_SPACE)
      .run();
    const top = await stored(a, list);
    expect(top.at(-1)!.position).toBe(POSITION_SPACE - 1);
    expect(top[0]!.position).toBe(0);

    // Moves to the end and to the front, where no label is left beyond the last and the first.
    for (let step = 0; step < 6; step++) {
      const last = model.at(-1)!;
      const first = model[0]!;
      const toEnd = model[5 + step]!;
      await send(a, list, { move: toEnd, before: null });
      model = moved(model, toEnd, null);
      const toFront = model[12 - step]!;
      await send(a, list, { move: toFront, before: model[0]! });
      model = moved(model, toFront, model[0]!);
      expect(model.at(-1)).not.toBe(last);
      expect(model[0]).not.toBe(first);
      await expectStored(a, list, model);
    }
    // Additions at the end of a full space: the members are spread out first, in their order.
    await db
      .prepare("UPDATE list_pinpoints SET position = ?2 - 1 WHERE list_id = ?1 AND pinpoint_id = ?3")
      .bind(list, POSITION_SPACE, model.at(-1))
      .run();
    const more = places.slice(20, 45);
    await add(a, list, more);
    model = [...model, ...more];
    const spread = await expectStored(a, list, model);
    expect(spread.at(-1)!.position).toBeLessThan(POSITION_SPACE / 2 + 60 * POSITION_GAP);
    expect(await readOrder(a, list, 9)).toEqual(model);
  });
});

describe("what a move writes", () => {
  it("one row for a move in a list of 2,000 whose members were added one batch after another", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 2000);
    const list = (await createList(a)).id;
    await add(a, list, places.slice(0, 1000));
    await add(a, list, places.slice(1000));
    let model = [...places];
    const random = randomFrom(5);
    for (let step = 0; step < 40; step++) {
      const move = random.pick(model);
      const target = random.next() < 0.1 ? null : random.pick(model.filter((id) => id !== move));
      const was = new Map((await stored(a, list)).map((row) => [row.pinpoint_id, row.position]));
      await send(a, list, { move, before: target });
      const before = model;
      model = moved(model, move, target);
      const rows = await expectStored(a, list, model);
      const changed = rows.filter((row) => was.get(row.pinpoint_id) !== row.position).map((row) => row.pinpoint_id);
      expect(changed).toEqual(JSON.stringify(before) === JSON.stringify(model) ? [] : [move]);
    }
    expect(await readOrder(a, list, 1000)).toEqual(model);
  });
});

describe("what a move reads", () => {
  it("the list's indexes around the spot: no statement of a move scans the list's members", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 50);
    const list = (await createList(a)).id;
    await add(a, list, places);
    const db = await contentDb(a.accountId);
    const { spread, place } = moveSql("1");
    for (const [name, sql] of Object.entries({ spread, place })) {
      for (const before of [places[10]!, null]) {
        const { results } = await db
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .bind(list, places[3], before)
          .all<{ detail: string }>();
        const details = results.map((row) => row.detail);
        expect(details.length, name).toBeGreaterThan(0);
        // Every read of the memberships is a search of one of their indexes, never a scan, and never a walk
        // of the list's members from one end (a search bound by the list alone).
        expect(
          details.filter(
            (detail) =>
              /\bSCAN (list_pinpoints|lists|pinpoints)\b/.test(detail) ||
              /list_pinpoints .*\(list_id=\?\)$/.test(detail),
          ),
          `${name}: ${details.join("; ")}`,
        ).toEqual([]);
      }
    }
  });
});

describe("the answer", () => {
  it("is the list with its new ETag; 204 on Prefer: return=minimal; a move that changes nothing moves nothing", async () => {
    const a = await caller();
    const [p1, p2, p3] = await insertPinpoints(a, 3);
    const list = (await createList(a, { name: "Tour" })).id;
    await add(a, list, [p1!, p2!, p3!]);
    const version = await versionOf(a, list);
    const response = await send(a, list, { move: p3, before: p1 });
    expect(response.headers.get("ETag")).toBe(`"${version + 1}"`);
    expect(await json(response)).toMatchObject({ id: list, name: "Tour" });
    const minimal = await a.send("PUT", orderOf(list), { move: p1, before: null }, { Prefer: "return=minimal" });
    expect(minimal.status).toBe(204);
    expect(await minimal.text()).toBe("");
    expect(minimal.headers.get("Preference-Applied")).toBe("return=minimal");
    expect(minimal.headers.get("ETag")).toBe(`"${version + 2}"`);
    // Where it is already: the same answer, the same version, as a retry of the same move gets.
    const again = await send(a, list, { move: p1, before: null });
    expect(again.headers.get("ETag")).toBe(`"${version + 2}"`);
    const same = await send(a, list, { ids: [p3, p2, p1] });
    expect(same.headers.get("ETag")).toBe(`"${version + 2}"`);
    expect(await readOrder(a, list)).toEqual([p3, p2, p1]);
    // The path with a trailing slash is the same operation.
    expect((await a.send("PUT", `${orderOf(list)}/`, { move: p3, before: null })).status).toBe(200);
  });

  it("makes the writer the list's updated_by, not its updated_at", async () => {
    const owner = await caller();
    const other = await caller("read write", owner.accountId);
    const [p1, p2] = await insertPinpoints(owner, 2);
    const list = (await createList(owner)).id;
    await add(owner, list, [p1!, p2!]);
    const before = await json<{ updated_at: string }>(await owner.get(`/v3.0/lists/${list}`));
    const answer = await json<{ updated_at: string; updated_by: { id: string } }>(
      await send(other, list, { move: p2, before: p1 }),
    );
    expect(answer.updated_by.id).toBe(other.clientId);
    expect(answer.updated_at).toBe(before.updated_at);
  });
});

describe("bad requests", () => {
  it("answers 400 naming each difference, and changes nothing", async () => {
    const a = await caller();
    const stranger = await caller();
    const places = await insertPinpoints(a, 6);
    const [p1, p2, p3, p4] = places as [number, number, number, number];
    const outside = places[4]!;
    const theirs = (await createPinpoint(stranger)).id;
    const list = (await createList(a)).id;
    await add(a, list, [p1, p2, p3, p4]);
    const version = await versionOf(a, list);
    const tooMany = Array.from({ length: 10_001 }, (_, i) => i + 1);
    const cases: [unknown, string[]][] = [
      [{}, [""]],
      [[p1], [""]],
      [{ ids: [p1, p2, p3, p4], move: p1, before: null }, ["/move"]],
      [{ move: p1 }, ["/before"]],
      [{ move: p1, before: p1 }, ["/before"]],
      [{ move: "p1", before: null }, ["/move"]],
      [{ move: p1, before: 0 }, ["/before"]],
      [{ ids: "all" }, ["/ids"]],
      [{ ids: [p1, p2, 1.5, p4] }, ["/ids/2"]],
      [{ ids: tooMany }, ["/ids"]],
      [{ ids: [p1, p2, p3, p4, p2, p1] }, ["/ids/4", "/ids/5"]],
      [{ ids: [p1, p2, p3] }, ["/ids"]],
      [{ ids: [p1, p2, p3, p4, outside] }, ["/ids/4"]],
      [{ ids: [p1, p2, p3, p4, 987_654_321] }, ["/ids/4"]],
      [{ ids: [p1, theirs, p3, p4] }, ["/ids/1", "/ids"]],
      [{ ids: [] }, ["/ids"]],
      [{ move: outside, before: p1 }, ["/move"]],
      [{ move: p1, before: outside }, ["/before"]],
      [{ move: theirs, before: 987_654_321 }, ["/move", "/before"]],
    ];
    for (const [body, pointers] of cases) {
      await expectProblem(await a.send("PUT", orderOf(list), body), 400, { code: "validation_failed", pointers });
    }
    const lacking = await expectProblem(await a.send("PUT", orderOf(list), { ids: [p2] }), 400);
    expect(lacking.detail).toContain(`lacks members of the list: ${p1}, ${p3}, ${p4}`);
    const twice = await expectProblem(await a.send("PUT", orderOf(list), { ids: [p1, p2, p1] }), 400);
    expect(twice.detail).toContain("repeats /ids/0");
    const many = await expectProblem(await a.send("PUT", orderOf(list), { ids: Array(10_000).fill(p1) }), 400);
    expect(many.errors).toHaveLength(101);
    expect(many.errors!.at(-1)).toEqual({ pointer: "/ids", detail: "repeats 9899 more ids" });
    const strangers = Array.from({ length: 300 }, (_, i) => 900_000_000 + i);
    const unknown = await expectProblem(
      await a.send("PUT", orderOf(list), { ids: [p1, p2, p3, p4, ...strangers] }),
      400,
    );
    expect(unknown.errors).toHaveLength(101);
    expect(unknown.errors![0]).toEqual({ pointer: "/ids/4", detail: "is not a member of the list" });
    expect(unknown.errors!.at(-1)).toEqual({ pointer: "/ids", detail: "names 200 more ids that are not members" });
    const malformed = await a.send("PUT", orderOf(list), undefined, { "Content-Type": "application/json" });
    await expectProblem(malformed, 400, { code: "malformed_json" });
    expect(await versionOf(a, list)).toBe(version);
    expect(await readOrder(a, list)).toEqual([p1, p2, p3, p4]);
  });

  it("404 for no such list, 403 for another account's, 412 for a stale If-Match, before the body's members", async () => {
    const a = await caller();
    const b = await caller();
    const [p1, p2] = await insertPinpoints(a, 2);
    const list = (await createList(a)).id;
    await add(a, list, [p1!, p2!]);
    await expectProblem(await a.send("PUT", orderOf(987_654_321), { move: p1, before: null }), 404);
    await expectProblem(await b.send("PUT", orderOf(list), { move: p1, before: null }), 403, { code: "forbidden" });
    await expectProblem(await b.send("PUT", orderOf(list), { move: 1, before: 2 }), 403, { code: "forbidden" });
    const stale = { "If-Match": `"${(await versionOf(a, list)) - 1}"` };
    await expectProblem(await a.send("PUT", orderOf(list), { move: p2, before: p1 }, stale), 412, {
      code: "precondition_failed",
    });
    await expectProblem(await a.send("PUT", orderOf(list), { move: 987_654_321, before: p1 }, stale), 412);
    const reader = await caller("read", a.accountId);
    await expectProblem(await reader.send("PUT", orderOf(list), { move: p2, before: p1 }), 403, {
      code: "insufficient_scope",
    });
    expect(await readOrder(a, list)).toEqual([p1, p2]);
    expect((await a.get(orderOf(list))).status).toBe(405);
  });
});

describe("sent at once", () => {
  it("with the same If-Match, exactly one of many moves wins, the others are 412 and change nothing", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 30);
    const list = (await createList(a)).id;
    await add(a, list, places);
    const etag = `"${await versionOf(a, list)}"`;
    const movers = places.slice(0, 20);
    const answers = await Promise.all(
      movers.map((move) => a.send("PUT", orderOf(list), { move, before: null }, { "If-Match": etag })),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(19);
    const winner = movers[statuses.indexOf(200)]!;
    expect(answers[statuses.indexOf(200)]!.headers.get("ETag")).toBe(`"${Number(etag.slice(1, -1)) + 1}"`);
    for (const answer of answers) await answer.body?.cancel();
    expect(await readOrder(a, list, 7)).toEqual(moved(places, winner, null));
  });

  it("without If-Match, every move applies: the members stay, each once, and each move lands", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 60);
    const list = (await createList(a)).id;
    await add(a, list, places);
    const version = await versionOf(a, list);
    const toEnd = places.slice(0, 15);
    const fixed = places[45]!;
    const beforeFixed = places.slice(15, 30);
    const answers = await Promise.all([
      ...toEnd.map((move) => a.send("PUT", orderOf(list), { move, before: null })),
      ...beforeFixed.map((move) => a.send("PUT", orderOf(list), { move, before: fixed })),
    ]);
    for (const answer of answers) expect(answer.status, await answer.text()).toBe(200);
    const order = await readOrder(a, list, 8);
    expect([...order].sort((x, y) => x - y)).toEqual(places);
    // Whatever order they committed in: the members moved to the end are the last ones, those moved before
    // `fixed` are just before it, and the others keep their order.
    expect(new Set(order.slice(-15))).toEqual(new Set(toEnd));
    const at = order.indexOf(fixed);
    expect(new Set(order.slice(at - 15, at))).toEqual(new Set(beforeFixed));
    const untouched = places.filter((id) => !toEnd.includes(id) && !beforeFixed.includes(id));
    expect(order.filter((id) => untouched.includes(id))).toEqual(untouched);
    // Each move changed the order: one version each.
    expect(await versionOf(a, list)).toBe(version + 30);
    await expectStored(a, list, order);
  });

  it("whole orders and moves at once leave one of the orders sent, then the moves after it", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 20);
    const list = (await createList(a)).id;
    await add(a, list, places);
    const random = randomFrom(99);
    const orders = Array.from({ length: 8 }, () => random.shuffled(places));
    const answers = await Promise.all([
      ...orders.map((ids) => a.send("PUT", orderOf(list), { ids })),
      ...places.slice(0, 8).map((move) => a.send("PUT", orderOf(list), { move, before: null })),
    ]);
    for (const answer of answers) expect(answer.status, await answer.text()).toBe(200);
    const order = await readOrder(a, list, 3);
    expect([...order].sort((x, y) => x - y)).toEqual(places);
  });
});

describe("followers of the account", () => {
  it("the change feed and a webhook see a reorder as a change of the list's members, and no more", async () => {
    const a = await caller();
    const [p1, p2, p3] = await insertPinpoints(a, 3);
    const list = (await createList(a)).id;
    await add(a, list, [p1!, p2!, p3!]);
    const name = crypto.randomUUID();
    const made = await a.send("POST", "http://127.0.0.1:8787/v3.0/webhooks", {
      url: receiverUrl(name),
      events: ["list.membership_changed", "list.updated"],
    });
    expect(made.status, await made.clone().text()).toBe(201);
    const hook = await json<{ id: number }>(made);
    const cursor = (await json<{ cursor: string }>(await a.get("/v3.0/changes"))).cursor;
    const version = await versionOf(a, list);

    await send(a, list, { move: p3, before: p1 });
    await send(a, list, { move: p3, before: p1 });
    await send(a, list, { ids: [p2, p3, p1] });

    type Feed = { results: { type: string; id: number; op: string; version: number }[] };
    const feed = await json<Feed>(await a.get(`/v3.0/changes?cursor=${encodeURIComponent(cursor)}`));
    expect(feed.results).toEqual([
      expect.objectContaining({ type: "list", id: list, op: "upsert", version: version + 2 }),
    ]);

    await settleWebhook(hook.id, a.accountId);
    const payloads = (await received(name)).map(
      (r) => JSON.parse(r.body) as { type: string; data: { id: number; version: number; object: { id: number } } },
    );
    expect(payloads.map((p) => [p.type, p.data.id, p.data.version])).toEqual([
      ["list.membership_changed", list, version + 1],
      ["list.membership_changed", list, version + 2],
    ]);
  });
});

describe("GET /v3.0/pinpoints?list=ID&order=position", () => {
  it("needs a list and no order of its own; keeps its filters; a cursor of one order fails on the other", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 12);
    const list = (await createList(a)).id;
    const model = randomFrom(17).shuffled(places);
    await add(a, list, model);
    for (const [query, detail] of [
      ["order=position", /needs list/],
      [`order=position&list=${list}&q=place`, /q/],
      [`order=position&list=${list}&latitude=48&longitude=2`, /latitude/],
      [`order=rank&list=${list}`, /"id" or "position"/],
    ] as const) {
      const problem = await expectProblem(await a.get(`/v3.0/pinpoints?${query}`), 400, { code: "validation_failed" });
      expect(problem.errors).toEqual([{ parameter: "order", detail: expect.stringMatching(detail) }]);
    }
    // By id, as before, unless asked.
    const byId = await walkBothWays<{ id: number }>(a, `/v3.0/pinpoints?list=${list}&limit=5`);
    expect(byId.map((r) => r.id)).toEqual(places);
    const explicit = await walkBothWays<{ id: number }>(a, `/v3.0/pinpoints?list=${list}&order=id&limit=5`);
    expect(explicit.map((r) => r.id)).toEqual(places);
    // Filters keep the list's order.
    const thirds = await walkBothWays<{ id: number; tags: string[] }>(
      a,
      `/v3.0/pinpoints?list=${list}&order=position&tags=third&limit=2`,
    );
    const tagged = new Set(
      (await walkBothWays<{ id: number; tags: string[] }>(a, `/v3.0/pinpoints?list=${list}&tags=third`)).map(
        (r) => r.id,
      ),
    );
    expect(thirds.map((r) => r.id)).toEqual(model.filter((id) => tagged.has(id)));
    const boxed = await walkBothWays<{ id: number }>(
      a,
      `/v3.0/pinpoints?list=${list}&order=position&bbox=2.003,48.003,2.009,48.009&limit=2`,
    );
    expect(boxed.map((r) => r.id)).toEqual(model.filter((id) => places.indexOf(id) >= 2 && places.indexOf(id) <= 8));
    // The order is bound into the cursor: a page link of one order is refused by the other.
    const page = await json<{ next: string }>(await a.get(`/v3.0/pinpoints?list=${list}&order=position&limit=2`));
    expect(new URL(page.next).searchParams.get("order")).toBe("position");
    const cursor = new URL(page.next).searchParams.get("cursor")!;
    await expectProblem(await a.get(`/v3.0/pinpoints?list=${list}&limit=2&cursor=${cursor}`), 400, {
      code: "invalid_cursor",
    });
  });

  it("in GeoJSON and in the list's OGC collection, the list's order", async () => {
    const a = await caller();
    const places = await insertPinpoints(a, 9);
    const list = (await createList(a)).id;
    const model = randomFrom(23).shuffled(places);
    await add(a, list, model);
    const features = await json<{ features: { id: number }[] }>(
      await a.get(`/v3.0/pinpoints?list=${list}&order=position&format=geojson`),
    );
    expect(features.features.map((f) => f.id)).toEqual(model);
    type Items = { features: { id: number }[]; links: { rel: string; href: string }[] };
    const items: number[] = [];
    for (let url: string | undefined = `/ogc/collections/list-${list}/items?limit=4`; url;) {
      const page: Items = await json<Items>(await a.get(url));
      items.push(...page.features.map((f) => f.id));
      url = page.links.find((l) => l.rel === "next")?.href;
    }
    expect(items).toEqual(model);
    const selected = await json<{ features: { id: number }[] }>(
      await a.get(`/ogc/collections/list-${list}/items?tags=third`),
    );
    const thirds = new Set(places.filter((_, i) => (i + 1) % 3 === 0));
    expect(selected.features.map((f) => f.id)).toEqual(model.filter((id) => thirds.has(id)));
  });
});

describe("a list collaborator", () => {
  it("who edits the list may reorder it; one who views it may not", async () => {
    const owner = await caller();
    const places = await insertPinpoints(owner, 3);
    const list = (await createList(owner)).id;
    await add(owner, list, places);
    const editor = await personCaller(null, { accountId: owner.accountId, lists: [[list, "editor"]] });
    const viewer = await personCaller(null, { accountId: owner.accountId, lists: [[list, "viewer"]] });
    const moved1 = await editor.send("PUT", orderOf(list), { move: places[2], before: places[0] });
    expect(moved1.status, await moved1.text()).toBe(200);
    await expectProblem(await viewer.send("PUT", orderOf(list), { ids: places }), 403, { code: "role_forbidden" });
    expect(await readOrder(owner, list)).toEqual([places[2], places[0], places[1]]);
  });
});
