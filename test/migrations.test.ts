/**
 * Migration safety: every migration, applied to a database populated under
 * the migrations before it, keeps every row, every column's values and every
 * foreign key. D1 runs a migration as one transaction with foreign keys
 * enforced (it ignores `PRAGMA foreign_keys=OFF`), so a drizzle-kit table
 * rebuild (`DROP TABLE` + rename) cascade-deletes the rows that reference the
 * table. applyD1Migrations runs each migration the same way (one batch), so
 * such a migration fails here. A migration's data fills (src/db/fills.ts)
 * run before the rows are counted. The rule for writing migrations is in
 * docs/development.md, "Writing migrations".
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { batchOn as batchOf, FILLS, runFills, unfinishedFills } from "../src/db/fills";
import { WHOLE_ACCOUNT } from "../src/db/reach";
import { addToList } from "../src/lists/membership";
import { changeOrder } from "../src/lists/order";
import { DIRECTORY, shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";
import { census, emptyDatabase, foreignKeyViolations, losses, populate } from "./migration-safety";

const migrations = env.TEST_MIGRATIONS;

const tableExists = (db: D1Database, name: string) =>
  db
    .prepare("SELECT 1 FROM sqlite_master WHERE name = ?")
    .bind(name)
    .first()
    .then((row) => row !== null);

/**
 * Migrations that cannot apply to a database populated under the ones before, with the reason. The
 * check then requires that they fail whole, changing nothing. A new migration does not belong here.
 */
const FAILS_ON_POPULATED: Record<string, string> = {
  "0001_builtin_category.sql":
    "seeds category 1, which a category created under 0000 alone would hold; 0000 and 0001 landed together, " +
    "before any database existed",
};

/**
 * The directory and, when the suite runs with several (vitest.shards.config.ts), the last shard: every
 * database gets every migration (docs/scaling.md).
 */
const DATABASES = [...new Set([DIRECTORY, shardNames(env.SHARDS).at(-1)!])];

describe.each(DATABASES)("%s: every migration keeps every row of a populated database", (name) => {
  const db = bindingNamed(env, name);

  it("finds the migrations", () => {
    expect(migrations.length).toBeGreaterThanOrEqual(3);
    expect(migrations[0]!.name).toMatch(/^0000_/);
  });

  it.each(migrations.map((m, i) => [m.name, i] as const))("%s", async (_name, index) => {
    await emptyDatabase(db);
    await applyD1Migrations(db, migrations.slice(0, index));
    await populate(db);
    const before = await census(db);
    // Every table holds rows, so a cascade from any table shows.
    for (const [table, { rows }] of before) expect(rows, table).toBeGreaterThan(0);

    const applying = applyD1Migrations(db, migrations.slice(0, index + 1));
    if (FAILS_ON_POPULATED[migrations[index]!.name]) await expect(applying).rejects.toThrow();
    else await applying;
    // With the data fills it left run (src/db/fills.ts), in small batches: a fill rebuilds what the migration
    // left to it, such as a full-text index created anew. Fills run on the latest schema, as after a deploy.
    const fills = (await tableExists(db, "data_fills")) ? await unfinishedFills(batchOf(db)) : [];
    if (fills.some((fill) => FILLS[fill.name])) {
      await applyD1Migrations(db, migrations);
      const run = await runFills(batchOf(db), { rows: 7 });
      expect(run.failed).toBeUndefined();
      expect(run.pending.filter((name) => FILLS[name])).toEqual([]);
    }
    expect(losses(before, await census(db))).toEqual([]);
    expect(await foreignKeyViolations(db)).toEqual([]);
  });

  it("the latest schema takes rows in every table", async () => {
    await emptyDatabase(db);
    await applyD1Migrations(db, migrations);
    await populate(db);
    for (const [table, { rows }] of await census(db)) expect(rows, table).toBeGreaterThan(0);
    expect(await foreignKeyViolations(db)).toEqual([]);
  });
});

describe("0015_webhook_outbox", () => {
  it("moves the changes a webhook was not sent yet into the outbox, in log order, and its position onto them", async () => {
    const index = migrations.findIndex((m) => m.name.startsWith("0015_"));
    await emptyDatabase(env.DB);
    await applyD1Migrations(env.DB, migrations.slice(0, index));
    const run = (sql: string, ...values: unknown[]) =>
      env.DB.prepare(sql)
        .bind(...values)
        .first<Record<string, number>>();
    const [one, two] = [
      (await run("INSERT INTO accounts (name) VALUES ('one') RETURNING id"))!.id!,
      (await run("INSERT INTO accounts (name) VALUES ('two') RETURNING id"))!.id!,
    ];
    const place = (account: number, name: string) =>
      run(
        "INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, ?, 1, 2) RETURNING id",
        account,
        name,
      );
    const sent = (await place(one, "sent"))!.id!;
    const seqOf = async (id: number) =>
      (await run("SELECT seq FROM changes WHERE type = 'pinpoint' AND object_id = ?", id))!.seq!;
    const webhook = (position: number) =>
      run(
        `INSERT INTO webhooks (account_id, url, events, secret, position, api_origin) VALUES (?, 'https://hooks.example.com/x', '["*"]', 'whsec_x', ?, 'https://api.example.com') RETURNING id`,
        one,
        position,
      );
    const behind = (await webhook(await seqOf(sent)))!.id!;
    const changed = (await place(one, "before"))!.id!;
    await run("UPDATE pinpoints SET name = 'after', version = version + 1 WHERE id = ?", changed);
    const created = (await place(one, "new"))!.id!;
    const gone = (await place(one, "gone"))!.id!;
    await run("DELETE FROM pinpoints WHERE id = ?", gone);
    await place(two, "theirs");
    const caughtUp = (await webhook(await seqOf(gone)))!.id!;

    await applyD1Migrations(env.DB, migrations);
    const { results } = await env.DB.prepare("SELECT * FROM webhook_outbox ORDER BY id").all<Record<string, unknown>>();
    expect(results.map((r) => [r.account_id, r.object_id, r.event, r.version])).toEqual([
      [one, changed, "pinpoint.updated", 2],
      [one, created, "pinpoint.created", 1],
      [one, gone, "pinpoint.deleted", 1],
    ]);
    expect(JSON.parse(results[0]!.object as string)).toMatchObject({ id: changed, name: "after", tags: "[]" });
    expect(results[2]!.object).toBeNull();
    const positions = await env.DB.prepare("SELECT id, position FROM webhooks ORDER BY id").all<{
      id: number;
      position: number;
    }>();
    expect(positions.results).toEqual([
      { id: behind, position: 0 },
      { id: caughtUp, position: results[2]!.id },
    ]);
    // From now on the triggers write the rows, for the account with webhooks only.
    await place(one, "later");
    await place(two, "later");
    const later = await run(
      "SELECT count(*) AS n, max(account_id) AS account FROM webhook_outbox WHERE id > ?",
      results[2]!.id,
    );
    expect(later).toEqual({ n: 1, account: one });
  });
});

describe("0018_account_positions", () => {
  it("numbers each account's changes alone, above the positions it was already sent, and the outbox keeps them", async () => {
    const index = migrations.findIndex((m) => m.name.startsWith("0018_"));
    await emptyDatabase(env.DB);
    await applyD1Migrations(env.DB, migrations.slice(0, index));
    const run = (sql: string, ...values: unknown[]) =>
      env.DB.prepare(sql)
        .bind(...values)
        .first<Record<string, number | null>>();
    const account = async (name: string) =>
      (await run("INSERT INTO accounts (name) VALUES (?) RETURNING id", name))!.id!;
    const [one, two] = [await account("one"), await account("two")];
    await run(
      `INSERT INTO webhooks (account_id, url, events, secret, position, api_origin) VALUES (?, 'https://hooks.example.com/x', '["*"]', 'whsec_x', 0, 'https://api.example.com')`,
      one,
    );
    const place = async (owner: number, name: string) =>
      (await run(
        "INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, ?, 1, 2) RETURNING id",
        owner,
        name,
      ))!.id!;
    // Before: the accounts' writes interleave in the one sequence they share.
    await place(one, "a");
    await place(two, "b");
    await place(two, "c");
    const legacy = await place(one, "d");
    const legacySeq = (await run("SELECT seq FROM changes WHERE type = 'pinpoint' AND object_id = ?", legacy))!.seq!;

    await applyD1Migrations(env.DB, migrations);
    const entry = (id: number) =>
      run("SELECT seq, position FROM changes WHERE type = 'pinpoint' AND object_id = ?", id) as Promise<{
        seq: number;
        position: number | null;
      }>;
    // Nothing is filled: the entries before keep their sequence number as their position.
    expect(await entry(legacy)).toEqual({ seq: legacySeq, position: null });
    const after: number[] = [];
    for (let n = 0; n < 4; n++) {
      after.push(await place(one, `one ${n}`));
      // Every write of the other account in between moves the shared sequence, not account one's positions.
      for (let k = 0; k <= n; k++) await place(two, `two ${n} ${k}`);
    }
    await run("UPDATE pinpoints SET name = 'renamed', version = version + 1 WHERE id = ?", after[0]);
    await run("DELETE FROM pinpoints WHERE id = ?", after[1]);
    const positions = [];
    for (const id of after) positions.push((await entry(id)).position);
    expect(positions).toEqual([legacySeq + 5, legacySeq + 6, legacySeq + 3, legacySeq + 4]);
    // Account two numbers its own changes, above its own last sequence number.
    const twos = (await run(
      "SELECT min(position) AS first, max(position) AS last, count(*) AS n FROM changes WHERE account_id = ? AND position IS NOT NULL",
      two,
    ))!;
    expect(twos.last! - twos.first! + 1).toBe(twos.n);
    // The outbox (account one has a webhook) keeps each write's position: the rows before keep none.
    const { results } = await env.DB.prepare(
      "SELECT object_id, event, position FROM webhook_outbox WHERE account_id = ? ORDER BY id",
    )
      .bind(one)
      .all<{ object_id: number; event: string; position: number | null }>();
    expect(results.filter((r) => r.position === null).map((r) => r.object_id)).toContain(legacy);
    expect(results.filter((r) => r.position !== null).map((r) => [r.object_id, r.event, r.position])).toEqual([
      [after[0], "pinpoint.created", legacySeq + 1],
      [after[1], "pinpoint.created", legacySeq + 2],
      [after[2], "pinpoint.created", legacySeq + 3],
      [after[3], "pinpoint.created", legacySeq + 4],
      [after[0], "pinpoint.updated", legacySeq + 5],
      [after[1], "pinpoint.deleted", legacySeq + 6],
    ]);
  });
});

describe("0023_list_order", () => {
  it("keeps every list's members in pinpoint id order, writing no change, and lets them be ordered", async () => {
    const index = migrations.findIndex((m) => m.name.startsWith("0023_"));
    await emptyDatabase(env.DB);
    await applyD1Migrations(env.DB, migrations.slice(0, index));
    const run = (sql: string, ...values: unknown[]) =>
      env.DB.prepare(sql)
        .bind(...values)
        .first<Record<string, number>>();
    const account = (await run("INSERT INTO accounts (name) VALUES ('one') RETURNING id"))!.id!;
    await run(
      `INSERT INTO webhooks (account_id, url, events, secret, position, api_origin) VALUES (?, 'https://hooks.example.com/x', '["*"]', 'whsec_x', 0, 'https://api.example.com')`,
      account,
    );
    const places: number[] = [];
    for (let n = 0; n < 8; n++) {
      places.push(
        (await run(
          "INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, 'p', 1, 2) RETURNING id",
          account,
        ))!.id!,
      );
    }
    const list = (await run("INSERT INTO lists (account_id, name) VALUES (?, 'Tour') RETURNING id", account))!.id!;
    // Added in another order than their ids': the API gave them by id all the same.
    for (const id of [places[5], places[1], places[7], places[3], places[0]]) {
      await run("INSERT INTO list_pinpoints (list_id, pinpoint_id) VALUES (?, ?)", list, id);
    }
    const counts = () =>
      run(
        "SELECT (SELECT count(*) FROM changes) AS changes, (SELECT count(*) FROM webhook_outbox) AS outbox, (SELECT version FROM lists WHERE id = ?) AS version",
        list,
      );
    const before = (await counts())!;

    await applyD1Migrations(env.DB, migrations);
    expect(await counts()).toEqual(before);
    const order = async () =>
      (
        await env.DB.prepare("SELECT pinpoint_id FROM list_pinpoints WHERE list_id = ? ORDER BY position, pinpoint_id")
          .bind(list)
          .all<{ pinpoint_id: number }>()
      ).results.map((r) => r.pinpoint_id);
    expect(await order()).toEqual([places[0], places[1], places[3], places[5], places[7]]);

    // Ordered as any list: a move among them, then a new member at the end; each a change of the list.
    const writer = { accountId: account, actor: "client:migration" };
    const moved = await changeOrder(
      env.DB,
      writer,
      list,
      WHOLE_ACCOUNT,
      { move: places[7]!, before: places[1]! },
      null,
    );
    expect(moved.version).toBe(before.version! + 1);
    await addToList(env.DB, writer, list, WHOLE_ACCOUNT, [{ id: places[2] }]);
    expect(await order()).toEqual([places[0], places[7], places[1], places[3], places[5], places[2]]);
    const { results } = await env.DB.prepare(
      "SELECT event, version FROM webhook_outbox WHERE object_id = ? ORDER BY id",
    )
      .bind(list)
      .all<{ event: string; version: number }>();
    expect(results.slice(-2)).toEqual([
      { event: "list.membership_changed", version: before.version! + 1 },
      { event: "list.membership_changed", version: before.version! + 2 },
    ]);
    // A position, as any write of a membership, is refused on a shard the account has left.
    await run("INSERT INTO account_fences (account_id, state) VALUES (?, 'gone')", account);
    await expect(
      env.DB.prepare("UPDATE list_pinpoints SET position = position + 1 WHERE list_id = ?").bind(list).run(),
    ).rejects.toThrow(/account_fenced/);
  });
});

describe("the check catches what D1 does to a table rebuild", () => {
  /**
   * Triggers of other tables whose bodies name `pinpoints` (the tile cells' membership triggers read a
   * pinpoint's place): ALTER TABLE … RENAME refuses to run while the table they name is missing, so a
   * rebuild drops them first and creates them again once the rows are back (docs/development.md "Writing migrations").
   */
  async function triggersNamingPinpoints(): Promise<{ drop: string[]; create: string[] }> {
    const { results } = await env.DB.prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name <> 'pinpoints'",
    ).all<{ name: string; sql: string }>();
    const naming = results.filter((t) => /[`"\s]pinpoints[`"\s]/.test(t.sql));
    return { drop: naming.map((t) => `DROP TRIGGER \`${t.name}\``), create: naming.map((t) => t.sql) };
  }

  /** The statements drizzle-kit writes to change a column of `pinpoints` (SQLite cannot ALTER it in place). */
  async function rebuildPinpoints(pragma: string): Promise<string[]> {
    const row = await env.DB.prepare("SELECT sql FROM sqlite_master WHERE name = 'pinpoints'").first<{ sql: string }>();
    return [
      pragma,
      row!.sql.replace(/^CREATE TABLE [`"]?pinpoints[`"]?/, "CREATE TABLE `__new_pinpoints`"),
      "INSERT INTO `__new_pinpoints` SELECT * FROM `pinpoints`",
      "DROP TABLE `pinpoints`",
      "ALTER TABLE `__new_pinpoints` RENAME TO `pinpoints`",
    ];
  }

  it.each(["PRAGMA foreign_keys=OFF", "PRAGMA defer_foreign_keys = on"])(
    "a rebuild of pinpoints under %s cascades to events and memberships",
    async (pragma) => {
      await emptyDatabase(env.DB);
      await applyD1Migrations(env.DB, migrations);
      await populate(env.DB);
      const before = await census(env.DB);

      const triggers = await triggersNamingPinpoints();
      await applyD1Migrations(env.DB, [
        ...migrations,
        {
          name: "9999_rebuild_pinpoints",
          queries: [...triggers.drop, ...(await rebuildPinpoints(pragma)), ...triggers.create],
        },
      ]);

      const lost = losses(before, await census(env.DB));
      expect(lost).toContain(`table events lost ${before.get("events")!.rows} of ${before.get("events")!.rows} rows`);
      expect(lost).toContain(
        `table list_pinpoints lost ${before.get("list_pinpoints")!.rows} of ${before.get("list_pinpoints")!.rows} rows`,
      );
      expect((await census(env.DB)).get("pinpoints")!.rows).toBe(before.get("pinpoints")!.rows);
    },
  );

  it("a migration that clears a column's values counts as a loss", async () => {
    await emptyDatabase(env.DB);
    await applyD1Migrations(env.DB, migrations);
    await populate(env.DB);
    const before = await census(env.DB);
    const keys = before.get("pinpoints")!.columns.get("media_key")!;

    await applyD1Migrations(env.DB, [
      ...migrations,
      { name: "9999_clear_media_keys", queries: ["UPDATE `pinpoints` SET `media_key` = NULL"] },
    ]);

    expect(losses(before, await census(env.DB))).toEqual([`pinpoints.media_key lost ${keys} of ${keys} values`]);
  });

  it("a rebuild that saves and restores the rows referencing the table keeps everything", async () => {
    await emptyDatabase(env.DB);
    await applyD1Migrations(env.DB, migrations);
    await populate(env.DB);
    const before = await census(env.DB);
    // The tables whose rows a DROP TABLE pinpoints cascades to; a migration names them by hand.
    const referencing = ["events", "list_pinpoints"];
    const rebuild = await rebuildPinpoints("PRAGMA defer_foreign_keys = on");
    const triggers = await triggersNamingPinpoints();

    await applyD1Migrations(env.DB, [
      ...migrations,
      {
        name: "9999_rebuild_pinpoints_safely",
        queries: [
          ...referencing.map((t) => `CREATE TABLE \`__keep_${t}\` AS SELECT * FROM \`${t}\``),
          ...triggers.drop,
          ...rebuild,
          ...referencing.map((t) => `INSERT INTO \`${t}\` SELECT * FROM \`__keep_${t}\``),
          ...referencing.map((t) => `DROP TABLE \`__keep_${t}\``),
          ...triggers.create,
        ],
      },
    ]);

    expect(losses(before, await census(env.DB))).toEqual([]);
    expect(await foreignKeyViolations(env.DB)).toEqual([]);
  });
});
