/**
 * The database as the request code sees it. Each request runs in D1 sessions
 * (http/middleware/d1-session.ts opens them with `runInSession`), one per database it
 * touches: the directory, and the shard of the request's account
 * (docs/scaling.md). Everything else takes the binding, routed: one object per
 * binding, made once per isolate, whose statements run in the session of the
 * request that executes them (found through AsyncLocalStorage), on the
 * database their tables live in, or on the binding itself outside a request
 * (the scheduled job, which visits every shard). Because the routed object never changes, the drizzle handle
 * and the prepared queries below are built once per isolate, not once per
 * session: rebuilding them per request cost more than half of a GET's
 * throughput (measured, docs/benchmarks.md).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import type { DatabasePosition } from "../core/env";
import { ApiError } from "../core/problem";
import { nextCategoryId, type Batch, type Row } from "./id-ranges";
import { DIRECTORY, shardNames } from "./shard-plan";
import { bindingNamed, placementOf } from "./shards";
import * as schema from "./schema";

export type Database = DrizzleD1Database<typeof schema>;

/**
 * The databases of one request: a D1 session per database it touches, opened
 * on its first statement there. `shard` is the account's, once the request
 * said which account it works for (`useAccount`); until then content
 * statements run on the directory (the only shard of a single-database setup).
 */
type RequestDatabases = {
  env: Cloudflare.Env;
  /** A position the client sent (or a cache miss reads from): where the session of its database starts. */
  from: DatabasePosition | undefined;
  constraint: D1SessionConstraint;
  /** The directory's session (for its tables) apart from the content sessions, even on the same database. */
  sessions: Map<D1Database | "directory", D1DatabaseSession>;
  shard: D1Database | null;
  /** The binding name of `shard` (of the directory while there is none). */
  shardName: string;
  /** The account the request works for, once it said so. */
  account: number | null;
  waitUntil: (promise: Promise<unknown>) => void;
};

const requests = new AsyncLocalStorage<RequestDatabases>();

/**
 * The request's session on `binding` (named `name`), opened on first use: from the position the request
 * starts from if it is one of this database (a bookmark names one database's position), else from the
 * request's constraint.
 */
function sessionOf(store: RequestDatabases, binding: D1Database, name: string, directory = false): D1DatabaseSession {
  const key = directory ? "directory" : binding;
  let session = store.sessions.get(key);
  if (!session) {
    session = binding.withSession(store.from?.database === name ? store.from.bookmark : store.constraint);
    store.sessions.set(key, session);
  }
  return session;
}

/**
 * The position of the current request's session so far: what its reads have
 * seen, at least. The account's shard's, or the directory's when the request
 * touched no shard.
 */
export function currentBookmark(): DatabasePosition | null {
  const store = requests.getStore();
  if (!store) return null;
  const content = store.sessions.get(store.shard ?? store.env.DB);
  const bookmark = (content ?? store.sessions.get("directory"))?.getBookmark();
  return bookmark ? { bookmark, database: content ? store.shardName : DIRECTORY } : null;
}

/**
 * Runs `fn` (and everything it awaits) with its queries in sessions of the
 * request: the database `from` names started from it, if the client sent one, the others at `constraint`.
 */
export function runInSession<T>(
  env: Cloudflare.Env,
  start: { from: DatabasePosition | undefined; constraint: D1SessionConstraint },
  waitUntil: (promise: Promise<unknown>) => void,
  fn: () => T,
): T {
  return requests.run(
    { env, ...start, sessions: new Map(), shard: null, shardName: DIRECTORY, account: null, waitUntil },
    fn,
  );
}

/**
 * Runs `fn` in new sessions of the current request's databases, the one `from`
 * names starting from it (the others unconstrained): for work that must read
 * at least as recently as something read earlier.
 */
export function runFromBookmark<T>(from: DatabasePosition | null, fn: () => T): T {
  const store = requests.getStore();
  if (!store) return fn();
  return requests.run(
    { ...store, from: from ?? undefined, constraint: "first-unconstrained", sessions: new Map() },
    fn,
  );
}

/**
 * Says which account the current request works for: its content statements
 * run on that account's shard from now on (src/db/shards.ts). Authentication
 * calls it once it knows the principal.
 */
export async function useAccount(accountId: number): Promise<void> {
  const store = requests.getStore();
  if (!store) return;
  const shard = await placementOf(store.env, accountId, store.waitUntil);
  store.shard = shard;
  store.shardName = shardNames(store.env.SHARDS).find((name) => bindingNamed(store.env, name) === shard) ?? DIRECTORY;
  store.account = accountId;
}

/**
 * The database the current request's content statements run on (its account's shard), or `binding`
 * itself outside a request: what tells one database's state apart in a cache of the isolate.
 */
export function contentDatabase(binding: D1Database): D1Database {
  const store = requests.getStore();
  return store ? (store.shard ?? store.env.DB) : binding;
}

/**
 * Runs `fn` with an env whose DB is routed as a request of `accountId` sees it (its content on its
 * shard): for work outside a request that concerns one account, such as a queue message.
 */
export function asAccount<T>(
  env: Cloudflare.Env,
  accountId: number,
  waitUntil: (promise: Promise<unknown>) => void,
  fn: (env: Cloudflare.Env) => Promise<T>,
): Promise<T> {
  return runInSession(env, { from: undefined, constraint: "first-primary" }, waitUntil, async () => {
    await useAccount(accountId);
    return fn({ ...env, DB: routed(env.DB) });
  });
}

/**
 * Of `ids` of `table`, those another account holds on another shard, with their accounts: what tells
 * another account's id (403) from one that does not exist (404) when the request's own shard has no
 * such row. The request's own account's rows there do not count: they are what a move copied or left
 * behind (src/db/move.ts), and an id of its own it does not hold is a 404. Read only on that error
 * path, one query per other shard; none in a single-database setup.
 */
export async function ownersElsewhere(table: string, ids: readonly number[]): Promise<Map<number, number | null>> {
  const owners = new Map<number, number | null>();
  const store = requests.getStore();
  if (!store || ids.length === 0) return owners;
  const own = store.shard ?? store.env.DB;
  for (const name of shardNames(store.env.SHARDS)) {
    const binding = bindingNamed(store.env, name);
    if (binding === own) continue;
    const { results } = await sessionOf(store, binding, name)
      .prepare(
        `SELECT id, account_id FROM "${table}" WHERE id IN (SELECT value FROM json_each(?)) AND account_id IS NOT ?`,
      )
      .bind(JSON.stringify(ids), store.account)
      .all<{ id: number; account_id: number | null }>();
    for (const row of results) owners.set(row.id, row.account_id);
  }
  return owners;
}

/** The directory's tables (docs/scaling.md, "Where rows live"), named in a statement. */
const DIRECTORY_SQL =
  /[\s"`(](accounts|clients|publishable_keys|publishable_key_lists|id_ranges|people|passkeys|recovery_codes|sessions|members|list_collaborators|invitations|auth_tickets)[\s"`(),;]/i;
const directoryQueries = new Map<string, boolean>();

/** Whether `query` reads or writes a directory table (the routing is per statement, decided once per SQL text). */
function namesDirectory(query: string): boolean {
  let answer = directoryQueries.get(query);
  if (answer === undefined) {
    answer = DIRECTORY_SQL.test(` ${query} `);
    if (directoryQueries.size < 10_000) directoryQueries.set(query, answer);
  }
  return answer;
}

/** Where a statement runs: outside a request on the binding itself; in one, in the session of its database. */
function targetOf(binding: D1Database, query: string): D1Database | D1DatabaseSession {
  const store = requests.getStore();
  if (!store) return binding;
  return namesDirectory(query)
    ? sessionOf(store, store.env.DB, DIRECTORY, true)
    : sessionOf(store, store.shard ?? store.env.DB, store.shardName);
}

/** A shard refused the write of an account that is being moved or has left (migration 0014's fence triggers). */
function accountMoving(error: unknown): never {
  if (error instanceof Error && `${error.message} ${String(error.cause ?? "")}`.includes("account_fenced")) {
    throw new ApiError("account_moving", "The account is being moved to another database; retry in a moment.", {
      headers: { "Retry-After": "1" },
    });
  }
  throw error;
}

/**
 * A statement that is prepared where it runs: binding it (or running it
 * unbound) prepares it in the current session of its database, which costs D1
 * no round trip.
 */
class RoutedStatement {
  constructor(
    readonly binding: D1Database,
    readonly query: string,
    readonly values: readonly unknown[] = [],
  ) {}
  /** The D1 statement, prepared and bound in `target` (by default where this request runs it). */
  native = (target = targetOf(this.binding, this.query)) => target.prepare(this.query).bind(...this.values);
  bind = (...values: unknown[]) => new RoutedStatement(this.binding, this.query, values);
  first = (column?: string) =>
    (column === undefined ? this.native().first() : this.native().first(column)).catch(accountMoving);
  run = () => this.native().run().catch(accountMoving);
  all = () => (CATEGORY_WRITE.test(this.query) ? writeCategories(this) : this.native().all<Row>()).catch(accountMoving);
  raw = (options?: { columnNames?: boolean }) =>
    (CATEGORY_WRITE.test(this.query)
      ? writeCategories(this).then(({ results }) => {
          const rows = results.map((row) => Object.values(row));
          return options?.columnNames ? [Object.keys(results[0] ?? {}), ...rows] : rows;
        })
      : options?.columnNames
        ? this.native().raw({ columnNames: true })
        : this.native().raw()
    ).catch(accountMoving);
}

/** A statement that writes categories (drizzle's inserts, updates and deletes, all with RETURNING). */
const CATEGORY_WRITE = /^\s*(insert\s+into|update|delete\s+from)\s+["`]?categories["`]?\s/i;

/** The shards other than the request's own: where a shared row is written too. */
function otherShards(store: RequestDatabases): D1DatabaseSession[] {
  const own = store.shard ?? store.env.DB;
  return shardNames(store.env.SHARDS)
    .map((name) => ({ name, binding: bindingNamed(store.env, name) }))
    .filter(({ binding }) => binding !== own)
    .map(({ name, binding }) => sessionOf(store, binding, name));
}

/** A session as a `Batch` (src/db/id-ranges.ts): its statements in one transaction, each one's rows. */
function batchIn(session: D1DatabaseSession): Batch {
  return async (statements) =>
    (await session.batch(statements.map(({ sql, params }) => session.prepare(sql).bind(...params)))).map(
      (result) => result.results as Row[],
    );
}

/**
 * `row` written as it is in `session`: an update of the account's row with its id, else an insert, but
 * never over another account's row with that id. Whether the id is the account's there afterwards.
 */
async function copyRow(session: D1DatabaseSession, row: Row): Promise<boolean> {
  const columns = Object.keys(row).filter((column) => column !== "id");
  const [, , held] = await session.batch<{ account_id: number | null }>([
    session
      .prepare(`UPDATE categories SET ${columns.map((c) => `"${c}" = ?`).join(", ")} WHERE id = ? AND account_id IS ?`)
      .bind(...columns.map((c) => row[c]), row.id, row.account_id),
    session
      .prepare(
        `INSERT INTO categories ("id", ${columns.map((c) => `"${c}"`).join(", ")})
         SELECT ?, ${columns.map(() => "?").join(", ")} WHERE NOT EXISTS (SELECT 1 FROM categories WHERE id = ?)`,
      )
      .bind(row.id, ...columns.map((c) => row[c]), row.id),
    session.prepare("SELECT account_id FROM categories WHERE id = ?").bind(row.id),
  ]);
  return held!.results[0]?.account_id === row.account_id;
}

/** Drizzle's insert of one category, which leaves the id to the database: it names `id` first, as `null`. */
const LEAVES_ID = /^(\s*insert\s+into\s+"categories"\s*\("id",[^)]*\)\s*values\s*\()null,/i;

/** The insert with `id` given. */
function withId(statement: RoutedStatement, id: number): RoutedStatement {
  if (!LEAVES_ID.test(statement.query)) throw new Error("A category insert must leave its id to src/db/client.ts.");
  return new RoutedStatement(statement.binding, statement.query.replace(LEAVES_ID, "$1?,"), [id, ...statement.values]);
}

/**
 * Categories are shared: every account reads every one and may put any on its places (CONTRACT
 * "Access"), so every shard holds every category, and a write goes to the request's shard first and
 * then, as the rows it returned, to every other shard. With one database a new category's id is its
 * AUTOINCREMENT's, as for every table; with several, it comes from the directory's counter
 * (src/db/id-ranges.ts): ids a shard allocated would collide with another shard's, and each copy
 * would overwrite the other. A copy never overwrites another account's row: a new category that meets
 * one (an id that collided before ids were counted) is undone and fails; a change to one leaves that
 * shard's row alone, logged. A deletion another shard's places still depend on is undone and refused
 * as the foreign key refuses it on one database (409).
 */
async function writeCategories(statement: RoutedStatement): Promise<D1Result<Row>> {
  const store = requests.getStore();
  const others = store ? otherShards(store) : [];
  const insertion = /^\s*insert/i.test(statement.query);
  let written = statement;
  if (store && insertion && others.length > 0) {
    const directory = batchIn(sessionOf(store, store.env.DB, DIRECTORY, true));
    const shards = shardNames(store.env.SHARDS).map((name) =>
      batchIn(sessionOf(store, bindingNamed(store.env, name), name)),
    );
    written = withId(statement, await nextCategoryId(directory, shards));
  }
  const result = await written.native().all<Row>();
  if (!store || others.length === 0) return result;
  const own = sessionOf(store, store.shard ?? store.env.DB, store.shardName);
  const deletion = /^\s*delete/i.test(statement.query);
  for (const row of result.results) {
    if (deletion) {
      for (const other of others) {
        const used = await other
          .prepare(
            "SELECT 1 FROM pinpoints WHERE category_id = ? AND EXISTS (SELECT 1 FROM categories WHERE id = ? AND account_id IS ?) LIMIT 1",
          )
          .bind(row.id, row.id, row.account_id)
          .first();
        if (used) {
          await copyRow(own, row);
          throw new Error("FOREIGN KEY constraint failed: a place on another shard uses the category");
        }
      }
      for (const other of others) {
        await other
          .prepare("DELETE FROM categories WHERE id = ? AND account_id IS ?")
          .bind(row.id, row.account_id)
          .run();
      }
      continue;
    }
    const copied: D1DatabaseSession[] = [];
    for (const other of others) {
      if (await copyRow(other, row)) {
        copied.push(other);
        continue;
      }
      if (insertion) {
        for (const session of [own, ...copied]) {
          await session
            .prepare("DELETE FROM categories WHERE id = ? AND account_id IS ?")
            .bind(row.id, row.account_id)
            .run();
        }
        throw new Error(`Category id ${row.id} is another account's on another shard; the new category was undone.`);
      }
      console.error(
        JSON.stringify({
          level: "error",
          message: "category id held by another account on another shard; its row there was left alone",
          category: row.id,
        }),
      );
    }
  }
  return result;
}

const routedBindings = new WeakMap<D1Database, D1Database>();

/**
 * The binding, with its statements and batches run in the current request's
 * sessions, each on the database its tables live in. A batch is one
 * transaction, so all its statements must go to one database.
 */
export function routed(binding: D1Database): D1Database {
  let db = routedBindings.get(binding);
  if (!db) {
    db = {
      // D1's statement classes cannot be constructed by user code; RoutedStatement has their members.
      prepare: (query) => new RoutedStatement(binding, query) as unknown as D1PreparedStatement,
      batch: <T = unknown>(statements: D1PreparedStatement[]) => {
        const routedOnes = statements as unknown as RoutedStatement[];
        const targets = new Set(routedOnes.map((s) => targetOf(binding, s.query)));
        if (targets.size > 1) throw new Error("A batch mixes directory and content tables; split it.");
        const [target] = targets;
        return target!.batch<T>(routedOnes.map((s) => s.native(target))).catch(accountMoving);
      },
      exec: (query) => binding.exec(query),
      withSession: (constraintOrBookmark) => binding.withSession(constraintOrBookmark),
      dump: () => binding.dump(),
    };
    routedBindings.set(binding, db);
  }
  return db;
}

const handles = new WeakMap<D1Database, Database>();

export function database(d1: D1Database): Database {
  let db = handles.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    handles.set(d1, db);
  }
  return db;
}

/**
 * A query built once per database handle (so once per isolate) and then run
 * with placeholders: the SQL is not rebuilt and the D1 statement not
 * re-prepared on every request. For the hot paths.
 */
export function preparedOnce<Q>(build: (db: Database) => Q): (d1: D1Database) => Q {
  const built = new WeakMap<Database, Q>();
  return (d1) => {
    const db = database(d1);
    let queries = built.get(db);
    if (!queries) {
      queries = build(db);
      built.set(db, queries);
    }
    return queries;
  };
}
