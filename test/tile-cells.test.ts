/**
 * The tile cells (migrations/0011_tile_cells.sql, src/db/search/tile-cells.ts) against
 * a brute-force recount in JavaScript from the base tables: after the
 * migration's backfill of existing data, and after every kind of write the
 * triggers keep up with (creates, moves, deletes, memberships added and
 * removed, lists and whole accounts deleted, cascades included).
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { quantizedXSql, quantizedYSql, quantizeX, quantizeY, TILE_LEVELS } from "../src/db/search/tile-cells";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { emptyDatabase } from "./migration-safety";

type Cell = {
  account_id: number;
  list_id: number;
  level: number;
  cell: number;
  places: number;
  sum_x: number;
  sum_y: number;
  sum_id: number;
};

/** Every cell recounted from pinpoints and list_pinpoints, in the table's order. */
async function recount(): Promise<Cell[]> {
  const { results: pins } = await env.DB.prepare("SELECT id, account_id, latitude, longitude FROM pinpoints").all<{
    id: number;
    account_id: number;
    latitude: number;
    longitude: number;
  }>();
  const { results: members } = await env.DB.prepare("SELECT list_id, pinpoint_id FROM list_pinpoints").all<{
    list_id: number;
    pinpoint_id: number;
  }>();
  const listsOf = new Map<number, number[]>();
  for (const m of members) listsOf.set(m.pinpoint_id, [...(listsOf.get(m.pinpoint_id) ?? []), m.list_id]);
  const cells = new Map<string, Cell>();
  for (const p of pins) {
    const [x, y] = [quantizeX(p.longitude), quantizeY(p.latitude)];
    const lists = listsOf.get(p.id) ?? [];
    for (const list of [0, ...lists, ...(lists.length > 0 ? [-1] : [])]) {
      for (const level of TILE_LEVELS) {
        const cell = Math.floor(y / 2 ** (32 - level)) * 2 ** level + Math.floor(x / 2 ** (32 - level));
        const id = `${p.account_id}/${list}/${level}/${cell}`;
        const c = cells.get(id) ?? {
          account_id: p.account_id,
          list_id: list,
          level,
          cell,
          places: 0,
          sum_x: 0,
          sum_y: 0,
          sum_id: 0,
        };
        c.places++;
        c.sum_x += x;
        c.sum_y += y;
        c.sum_id += p.id;
        cells.set(id, c);
      }
    }
  }
  const order = (c: Cell) => [c.account_id, c.list_id, c.level, c.cell];
  return [...cells.values()].sort((p, q) => {
    const [a, b] = [order(p), order(q)];
    for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return 0;
  });
}

async function stored(): Promise<Cell[]> {
  return (await env.DB.prepare("SELECT * FROM tile_cells ORDER BY account_id, list_id, level, cell").all<Cell>())
    .results;
}

function random(seed: number) {
  let s = seed;
  return () => (s = (s * 48271) % 2147483647) / 2147483647;
}

/** Places near Paris, over the world, and at the edges of the map. */
function places(n: number, seed: number): [number, number][] {
  const rnd = random(seed);
  const out: [number, number][] = [
    [90, 180],
    [-90, -180],
    [85.0511287798066, 0],
    [0, 0],
  ];
  for (let i = 0; i < n; i++) {
    out.push(i % 2 ? [48.85 + (rnd() - 0.5) / 10, 2.35 + (rnd() - 0.5) / 10] : [rnd() * 180 - 90, rnd() * 360 - 180]);
  }
  return out;
}

async function insert(accountId: number, points: [number, number][]) {
  await env.DB.prepare(
    `INSERT INTO pinpoints (account_id, name, latitude, longitude) SELECT ?1, 'p', value ->> 0, value ->> 1 FROM json_each(?2)`,
  )
    .bind(accountId, JSON.stringify(points))
    .run();
}

const run = (query: string, ...params: unknown[]) =>
  env.DB.prepare(query)
    .bind(...params)
    .run();

describe("the migration", () => {
  it("gives the places that exist before it their cells", async () => {
    const migrations = env.TEST_MIGRATIONS;
    const index = migrations.findIndex((m) => m.name === "0011_tile_cells.sql");
    expect(index).toBeGreaterThan(0);
    await emptyDatabase(env.DB);
    await applyD1Migrations(env.DB, migrations.slice(0, index));
    await run("INSERT INTO accounts (name) VALUES ('one'), ('two')");
    await insert(1, places(300, 1));
    await insert(2, places(100, 2));
    await run("INSERT INTO lists (account_id, name) VALUES (1, 'a'), (1, 'b'), (2, 'c')");
    await run(
      "INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT 1, id FROM pinpoints WHERE account_id = 1 AND id % 2 = 0",
    );
    await run(
      "INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT 2, id FROM pinpoints WHERE account_id = 1 AND id % 3 = 0",
    );
    await run("INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT 3, id FROM pinpoints WHERE account_id = 2");
    await applyD1Migrations(env.DB, migrations.slice(0, index + 1));
    const expected = await recount();
    expect(expected.length).toBeGreaterThan(1000);
    expect(await stored()).toEqual(expected);
    // The rest of the migrations, so the next tests run on the full schema.
    await applyD1Migrations(env.DB, migrations);
  });
});

describe("the triggers", () => {
  it("keep every cell exact through creates, moves, deletes, memberships, and lists and accounts deleted", async () => {
    await run("INSERT INTO accounts (name) VALUES ('three'), ('four')");
    const { results: accounts } = await env.DB.prepare("SELECT id FROM accounts ORDER BY id").all<{ id: number }>();
    const [one, , three, four] = accounts.map((a) => a.id) as [number, number, number, number];
    await insert(three, places(200, 3));
    await insert(four, places(50, 4));
    await run("INSERT INTO lists (account_id, name) VALUES (?, 'd'), (?, 'e')", three, three);
    const { results: lists } = await env.DB.prepare("SELECT id FROM lists WHERE account_id = ? ORDER BY id")
      .bind(three)
      .all<{ id: number }>();
    const [d, e] = lists.map((l) => l.id) as [number, number];
    expect(await stored()).toEqual(await recount());

    const steps: [string, () => Promise<unknown>][] = [
      // A membership batch as src/lists/membership.ts writes it (INSERT OR IGNORE: repeats are no change).
      [
        "memberships added, twice",
        async () => {
          for (let i = 0; i < 2; i++) {
            await run(
              "INSERT OR IGNORE INTO list_pinpoints (list_id, pinpoint_id) SELECT ?, id FROM pinpoints WHERE account_id = ? AND id % 2 = 0",
              d,
              three,
            );
          }
          await run(
            "INSERT OR IGNORE INTO list_pinpoints (list_id, pinpoint_id) SELECT ?, id FROM pinpoints WHERE account_id = ? AND id % 3 = 0",
            e,
            three,
          );
        },
      ],
      [
        "places moved",
        () =>
          run(
            "UPDATE pinpoints SET latitude = -latitude, longitude = longitude / 2 WHERE account_id = ? AND id % 5 = 0",
            three,
          ),
      ],
      [
        "a place moved nowhere",
        () => run("UPDATE pinpoints SET latitude = latitude WHERE account_id = ? AND id % 7 = 0", three),
      ],
      ["a name changed", () => run("UPDATE pinpoints SET name = 'renamed' WHERE account_id = ?", three)],
      ["memberships removed", () => run("DELETE FROM list_pinpoints WHERE list_id = ? AND pinpoint_id % 4 = 0", d)],
      ["places in lists deleted", () => run("DELETE FROM pinpoints WHERE account_id = ? AND id % 6 = 0", three)],
      ["a list deleted", () => run("DELETE FROM lists WHERE id = ?", e)],
      ["places created", () => insert(three, places(30, 5))],
      ["an account deleted", () => run("DELETE FROM accounts WHERE id = ?", four)],
      ["every place of an account deleted", () => run("DELETE FROM pinpoints WHERE account_id = ?", one)],
    ];
    for (const [what, step] of steps) {
      await step();
      expect(await stored(), what).toEqual(await recount());
    }
  });
});

describe("the quantization", () => {
  it("is the same SQL in the triggers and in the reads, and the same numbers in JavaScript", async () => {
    const dialect = new SQLiteSyncDialect();
    const text = (q: ReturnType<typeof sql>) => dialect.sqlToQuery(q).sql;
    const { results } = await env.DB.prepare(
      "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'pinpoints_tiles_insert'",
    ).all<{ sql: string }>();
    const trigger = results[0]!.sql;
    expect(trigger).toContain(text(quantizedXSql(sql.raw("new.`longitude`"))));
    expect(trigger).toContain(text(quantizedYSql(sql.raw("new.`latitude`"))));
    const points = places(2000, 9);
    const { results: rows } = await env.DB.prepare(
      `SELECT ${text(quantizedXSql(sql.raw("(value ->> 1)")))} AS x, ${text(quantizedYSql(sql.raw("(value ->> 0)")))} AS y FROM json_each(?) ORDER BY key`,
    )
      .bind(JSON.stringify(points))
      .all<{ x: number; y: number }>();
    expect(rows).toEqual(points.map(([lat, lon]) => ({ x: quantizeX(lon), y: quantizeY(lat) })));
  });
});
