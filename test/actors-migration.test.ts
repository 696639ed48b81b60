/**
 * The migrations of who did it, on populated databases (test/migration-safety.ts):
 * migrations/0021_actors.sql adds `created_by`/`updated_by` to the content tables,
 * migrations/0022_change_actors.sql redefines the change-log triggers to keep each
 * change's actor. Both keep every row, leave what was written before them without an
 * actor, and the triggers after 0022 log a write (and its actor) exactly as before,
 * while an actor stamp alone logs nothing. A file of its own: it empties the database.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { census, emptyDatabase, foreignKeyViolations, losses, populate } from "./migration-safety";

const migrations = env.TEST_MIGRATIONS;
const indexOf = (prefix: string) => migrations.findIndex((m) => m.name.startsWith(prefix));
const db = env.DB;

type Row = Record<string, unknown>;
const first = (sql: string, ...values: unknown[]) =>
  db
    .prepare(sql)
    .bind(...values)
    .first<Row>();
const all = async (sql: string, ...values: unknown[]) =>
  (
    await db
      .prepare(sql)
      .bind(...values)
      .all<Row>()
  ).results;

describe("0021 and 0022 on a populated database", () => {
  it("keep every row and value, and give nothing written before them an actor", async () => {
    await emptyDatabase(db);
    await applyD1Migrations(db, migrations.slice(0, indexOf("0021_")));
    await populate(db);
    const before = await census(db);
    for (const [table, { rows }] of before) expect(rows, table).toBeGreaterThan(0);

    await applyD1Migrations(db, migrations.slice(0, indexOf("0022_") + 1));
    expect(losses(before, await census(db))).toEqual([]);
    expect(await foreignKeyViolations(db)).toEqual([]);
    for (const table of ["pinpoints", "lists", "events", "categories"]) {
      const row = await first(
        `SELECT count(*) AS n, count(created_by) AS created, count(updated_by) AS updated FROM ${table}`,
      );
      expect(row, table).toEqual({ n: before.get(table)!.rows, created: 0, updated: 0 });
    }
    for (const table of ["changes", "webhook_outbox"]) {
      expect(await first(`SELECT count(actor) AS n FROM ${table}`), table).toEqual({ n: 0 });
    }
  });
});

describe("0022_change_actors", () => {
  it("logs each write with its actor, its outbox object with created_by/updated_by, and a stamp alone not at all", async () => {
    await emptyDatabase(db);
    await applyD1Migrations(db, migrations.slice(0, indexOf("0022_")));
    const account = (await first("INSERT INTO accounts (name) VALUES ('one') RETURNING id"))!.id as number;
    await first(
      `INSERT INTO webhooks (account_id, url, events, secret, position, api_origin) VALUES (?, 'https://hooks.example.com/x', '["*"]', 'whsec_x', 0, 'https://api.example.com')`,
      account,
    );
    const earlier = (await first(
      "INSERT INTO pinpoints (account_id, name, latitude, longitude, created_by, updated_by) VALUES (?, 'earlier', 1, 2, 'client:c1', 'client:c1') RETURNING id",
      account,
    ))!.id as number;
    const logged = await first("SELECT seq, position FROM changes WHERE type = 'pinpoint' AND object_id = ?", earlier);

    await applyD1Migrations(db, migrations);
    // What was logged before keeps its entry as it was, without an actor.
    expect(await first("SELECT seq, position, actor FROM changes WHERE object_id = ?", earlier)).toEqual({
      ...logged,
      actor: null,
    });

    const head = async () => (await first("SELECT max(seq) AS seq, count(*) AS n FROM webhook_outbox"))!;
    const place = (await first(
      "INSERT INTO pinpoints (account_id, name, latitude, longitude, created_by, updated_by) VALUES (?, 'new', 1, 2, 'person:7', 'person:7') RETURNING id",
      account,
    ))!.id as number;
    const list = (await first(
      "INSERT INTO lists (account_id, name, created_by, updated_by) VALUES (?, 'L', 'person:7', 'person:7') RETURNING id",
      account,
    ))!.id as number;
    const category = (await first(
      "INSERT INTO categories (account_id, name, created_by, updated_by) VALUES (?, 'C', 'person:7', 'person:7') RETURNING id",
      account,
    ))!.id as number;
    const event = (await first(
      `INSERT INTO events (account_id, pinpoint_id, name, dates, created_by, updated_by) VALUES (?, ?, 'E', '[{"start":1,"end":2}]', 'person:7', 'person:7') RETURNING id`,
      account,
      place,
    ))!.id as number;
    const objects = { pinpoint: place, list, category, event };
    for (const [type, id] of Object.entries(objects)) {
      expect(await first("SELECT op, actor FROM changes WHERE type = ? AND object_id = ?", type, id), type).toEqual({
        op: "upsert",
        actor: "person:7",
      });
      const outbox = await first(
        "SELECT event, actor, object FROM webhook_outbox WHERE type = ? AND object_id = ?",
        type,
        id,
      );
      expect(outbox!.event, type).toBe(`${type}.created`);
      expect(outbox!.actor, type).toBe("person:7");
      expect(JSON.parse(outbox!.object as string), type).toMatchObject({
        id,
        created_by: "person:7",
        updated_by: "person:7",
      });
    }

    // A stamp (only `updated_by`, no new version) is no change: no log entry, no outbox row, on any table.
    const quiet = await head();
    const positions = await first("SELECT max(position) AS position FROM changes WHERE account_id = ?", account);
    for (const [type, id] of Object.entries(objects)) {
      const table = { pinpoint: "pinpoints", list: "lists", category: "categories", event: "events" }[type]!;
      await first(`UPDATE ${table} SET updated_by = 'client:c2' WHERE id = ?`, id);
    }
    expect(await head()).toEqual(quiet);
    expect(await first("SELECT max(position) AS position FROM changes WHERE account_id = ?", account)).toEqual(
      positions,
    );

    // A write is logged with its actor, the list's membership kind told apart as before.
    await first(
      "UPDATE lists SET name = 'L2', updated_at = updated_at + 1, version = version + 1, updated_by = 'person:8' WHERE id = ?",
      list,
    );
    await first("UPDATE lists SET version = version + 1, updated_by = 'client:c3' WHERE id = ?", list);
    const listEvents = await all(
      "SELECT event, actor, json_extract(object, '$.updated_by') AS by FROM webhook_outbox WHERE type = 'list' AND object_id = ? ORDER BY id",
      list,
    );
    expect(listEvents).toEqual([
      { event: "list.created", actor: "person:7", by: "person:7" },
      { event: "list.updated", actor: "person:8", by: "person:8" },
      { event: "list.membership_changed", actor: "client:c3", by: "client:c3" },
    ]);

    // A delete's actor is the stamp its request left on the row; the cascade's, the stamp on its rows.
    await first("UPDATE events SET updated_by = 'person:9' WHERE id = ?", event);
    await first("UPDATE pinpoints SET updated_by = 'person:9' WHERE id = ?", place);
    await first("DELETE FROM pinpoints WHERE id = ?", place);
    for (const [type, id] of [
      ["pinpoint", place],
      ["event", event],
    ] as const) {
      expect(await first("SELECT op, actor FROM changes WHERE type = ? AND object_id = ?", type, id), type).toEqual({
        op: "delete",
        actor: "person:9",
      });
      expect(
        await first(
          "SELECT actor, object FROM webhook_outbox WHERE type = ? AND object_id = ? AND op = 'delete'",
          type,
          id,
        ),
        type,
      ).toEqual({ actor: "person:9", object: null });
    }
    // Positions go on one by one above the entries before.
    const numbered = await all(
      "SELECT position FROM changes WHERE account_id = ? AND position IS NOT NULL ORDER BY seq",
      account,
    );
    const values = numbered.map((row) => row.position as number);
    expect(values).toEqual([...values].sort((x, y) => x - y));
    expect(new Set(values).size).toBe(values.length);
  });
});
