/**
 * A fresh database at the scale the benchmark claims: the migrations as
 * wrangler would apply them, then rows generated inside SQLite (recursive CTEs,
 * one statement per table) so seeding 100,000 rows takes about a second.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { generateClientId, generateClientSecret, hashSecret } from "../src/core/secrets.ts";
import type { Batch, Row } from "../src/db/id-ranges.ts";

/** The parts of D1's binding the seeder uses (Miniflare's proxy implements them). */
export type D1 = {
  prepare(sql: string): Statement;
  batch(statements: Statement[]): Promise<unknown[]>;
};
type Statement = {
  bind(...values: unknown[]): Statement;
  run(): Promise<{ meta: { changes: number } }>;
  first<T>(): Promise<T | null>;
  all<T>(): Promise<{ results: T[] }>;
};

/** A database as a `Batch` (src/db/id-ranges.ts): for the id range claims and the move. */
export function batchOf(db: D1): Batch {
  return async (statements) =>
    (
      (await db.batch(statements.map(({ sql, params }) => db.prepare(sql).bind(...params)))) as { results: Row[] }[]
    ).map((result) => result.results);
}

export const SCALE = {
  /** Pinpoints of account A, the one every scenario calls as. */
  pinpointsA: 100_000,
  /** Every 26th row belongs to account B, interleaved, so owner filtering is real. */
  bEvery: 26,
  listMembers: 10_000,
  events: 1_000,
} as const;

export type Seeded = {
  accountA: number;
  accountB: number;
  client: { id: string; secret: string };
  /** A client of account B: the webhook target of the writes group writes as B (bench/scenarios.ts). */
  clientB: { id: string; secret: string };
  /** The list holding 10,000 of A's pinpoints. */
  list: number;
  /** An empty list of A's for the membership scenario. */
  batchList: number;
  /** A's pinpoint ids (ascending) used by scenarios. */
  pinpointIds: number[];
  rows: { pinpoints: number; pinpointsA: number; listMembers: number; events: number };
  millis: number;
};

/** Applies migrations/*.sql in order, statement by statement, as drizzle-kit split them. */
export async function migrate(db: D1): Promise<number> {
  const files = readdirSync("migrations")
    .filter((f) => f.endsWith(".sql"))
    .sort();
  for (const file of files) {
    const statements = readFileSync(join("migrations", file), "utf8")
      .split("--> statement-breakpoint")
      .map((s) => s.trim())
      .filter(Boolean);
    await db.batch(statements.map((s) => db.prepare(s)));
  }
  return files.length;
}

/**
 * Pinpoints per insert statement of the seed: on a machine at a load average of 15, a local D1 call was
 * cut off after about 12 s, which 20,000 rows took and 5,000 stay well within.
 */
const SEED_CHUNK = 5_000;

const PINPOINTS = `
  INSERT INTO pinpoints
    (account_id, name, address, altitude, category_id, description, latitude, longitude, media_credits, tags)
  WITH RECURSIVE n(i) AS (SELECT cast(?5 AS integer) UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
  SELECT CASE WHEN i % ?4 = 0 THEN ?3 ELSE ?2 END,
    'Pinpoint ' || i,
    i || ' Rue de la Paix, 75002 Paris',
    35.5 + (i % 100),
    1,
    '<p>Point of interest number <strong>' || i || '</strong>: a short description with a '
      || '<a href="https://example.com/poi/' || i || '">link</a>, about as long as a real one.</p>',
    -60 + (i * 7919 % 120000) / 1000.0,
    -170 + (i * 104729 % 340000) / 1000.0,
    'Photo: benchmark',
    json_array('tag' || (i % 10), 'tag' || (i % 7), 'bench')
  FROM n`;

const LIST_MEMBERS = `
  INSERT INTO list_pinpoints (list_id, pinpoint_id)
  SELECT ?1, id FROM pinpoints WHERE account_id = ?2 AND id % 9 = 0 ORDER BY id LIMIT ?3`;

const EVENTS = `
  INSERT INTO events (account_id, pinpoint_id, name, description, dates, tags)
  SELECT ?1, id, 'Event at ' || id, '<p>Something happens here.</p>',
    json_array(json_object('start', 1795000000000 + id * 60000, 'end', 1795000000000 + id * 60000 + 3600000)),
    '["bench"]'
  FROM pinpoints WHERE account_id = ?1 AND id % 97 = 1 ORDER BY id LIMIT ?2`;

/**
 * Where seeded accounts live with several shards (docs/scaling.md): the directory `db` names `shard`,
 * whose database `content` gets their content, and every shard but the directory holds the account
 * row (`shards`, `content` among them), as the registration tool writes it.
 */
export type Placement = { shard: string; content: D1; shards: D1[] };

/** An account and a client of it with a known secret (hashed as the service does) and both scopes. */
export async function createAccount(
  db: D1,
  name: string,
  placement?: Placement,
): Promise<{ accountId: number; client: { id: string; secret: string } }> {
  const account = (await db
    .prepare("INSERT INTO accounts (name, shard) VALUES (?, ?) RETURNING id, created_at")
    .bind(name, placement?.shard ?? "DB")
    .first<{ id: number; created_at: number }>())!;
  const accountId = account.id;
  for (const shard of placement?.shards ?? []) {
    await shard
      .prepare("INSERT INTO accounts (id, name, created_at, shard) VALUES (?, ?, ?, ?)")
      .bind(accountId, name, account.created_at, placement!.shard)
      .run();
  }
  const secret = generateClientSecret();
  const id = generateClientId();
  await db
    .prepare("INSERT INTO clients (id, account_id, name, secret_hash, scope) VALUES (?, ?, ?, ?, 'read write')")
    .bind(id, accountId, "bench", await hashSecret(secret))
    .run();
  return { accountId, client: { id, secret } };
}

/**
 * Seeds two accounts with a client each, 100,000 + a few thousand pinpoints, two lists and 1,000 events:
 * all in `directory`, or the content on a shard of `placement`.
 */
export async function seed(directory: D1, placement?: Placement): Promise<Seeded> {
  const started = performance.now();
  const { accountId: accountA, client } = await createAccount(directory, "bench-a", placement);
  const { accountId: accountB, client: clientB } = await createAccount(directory, "bench-b", placement);
  const db = placement?.content ?? directory;

  // Total rows such that exactly SCALE.pinpointsA belong to A.
  const total = Math.floor((SCALE.pinpointsA * SCALE.bEvery) / (SCALE.bEvery - 1));
  // In statements of SEED_CHUNK rows: on a busy machine workerd closed the connection of a local D1
  // call that wrote all of them at once (their triggers fill the search indexes and tile cells).
  for (let from = 1; from <= total; from += SEED_CHUNK) {
    const to = Math.min(total, from + SEED_CHUNK - 1);
    await db.prepare(PINPOINTS).bind(to, accountA, accountB, SCALE.bEvery, from).run();
  }

  const list = async (name: string) =>
    (await db
      .prepare("INSERT INTO lists (account_id, name, description) VALUES (?, ?, ?) RETURNING id")
      .bind(accountA, name, "<p>Benchmark list</p>")
      .first<{ id: number }>())!.id;
  const listId = await list("Ten thousand");
  const batchList = await list("Batches");
  await db.prepare(LIST_MEMBERS).bind(listId, accountA, SCALE.listMembers).run();
  await db.prepare(EVENTS).bind(accountA, SCALE.events).run();

  const count = async (sql: string, ...args: unknown[]) =>
    (await db
      .prepare(sql)
      .bind(...args)
      .first<{ n: number }>())!.n;
  const rows = {
    pinpoints: await count("SELECT count(*) AS n FROM pinpoints"),
    pinpointsA: await count("SELECT count(*) AS n FROM pinpoints WHERE account_id = ?", accountA),
    listMembers: await count("SELECT count(*) AS n FROM list_pinpoints WHERE list_id = ?", listId),
    events: await count("SELECT count(*) AS n FROM events"),
  };
  const { results } = await db
    .prepare("SELECT id FROM pinpoints WHERE account_id = ? AND id % 97 = 3 ORDER BY id LIMIT 1000")
    .bind(accountA)
    .all<{ id: number }>();
  return {
    accountA,
    accountB,
    client,
    clientB,
    list: listId,
    batchList,
    pinpointIds: results.map((r) => r.id),
    rows,
    millis: performance.now() - started,
  };
}
