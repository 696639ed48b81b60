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
import { ApiError } from "../core/problem";
import { shardNames } from "./shard-plan";
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
  /** The bookmark the client sent: where the account's shard session starts. */
  bookmark: string | undefined;
  constraint: D1SessionConstraint;
  /** The directory's session (for its tables) apart from the content sessions, even on the same database. */
  sessions: Map<D1Database | "directory", D1DatabaseSession>;
  shard: D1Database | null;
  waitUntil: (promise: Promise<unknown>) => void;
};

const requests = new AsyncLocalStorage<RequestDatabases>();

/**
 * The request's session on `binding`, opened on first use: the client's bookmark starts the session of
 * the account's content only (a bookmark is one database's position, and the client got it from there).
 */
function sessionOf(store: RequestDatabases, binding: D1Database, directory = false): D1DatabaseSession {
  const key = directory ? "directory" : binding;
  let session = store.sessions.get(key);
  if (!session) {
    const own = !directory && binding === (store.shard ?? store.env.DB);
    session = binding.withSession(own ? (store.bookmark ?? store.constraint) : store.constraint);
    store.sessions.set(key, session);
  }
  return session;
}

/**
 * The bookmark of the current request's session so far: what its reads have
 * seen, at least. The account's shard's, or the directory's when the request
 * touched no shard.
 */
export function currentBookmark(): string | null {
  const store = requests.getStore();
  if (!store) return null;
  const session = store.sessions.get(store.shard ?? store.env.DB) ?? store.sessions.get("directory");
  return session?.getBookmark() ?? null;
}

/**
 * Runs `fn` (and everything it awaits) with its queries in sessions of the
 * request: started from `bookmark` if the client sent one, else `constraint`.
 */
export function runInSession<T>(
  env: Cloudflare.Env,
  start: { bookmark: string | undefined; constraint: D1SessionConstraint },
  waitUntil: (promise: Promise<unknown>) => void,
  fn: () => T,
): T {
  return requests.run({ env, ...start, sessions: new Map(), shard: null, waitUntil }, fn);
}

/**
 * Runs `fn` in new sessions of the current request's databases, the account's
 * shard starting from `bookmark` (or unconstrained): for work that must read
 * at least as recently as something read earlier.
 */
export function runFromBookmark<T>(bookmark: string | null, fn: () => T): T {
  const store = requests.getStore();
  if (!store) return fn();
  return requests.run(
    { ...store, bookmark: bookmark ?? undefined, constraint: "first-unconstrained", sessions: new Map() },
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
  store.shard = await placementOf(store.env, accountId, store.waitUntil);
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
  return runInSession(env, { bookmark: undefined, constraint: "first-primary" }, waitUntil, async () => {
    await useAccount(accountId);
    return fn({ ...env, DB: routed(env.DB) });
  });
}

/**
 * Of `ids` of `table`, those another shard holds, with their accounts: what tells another account's
 * id (403) from one that does not exist (404) when the request's own shard has no such row. Read only
 * on that error path, one query per other shard; none in a single-database setup.
 */
export async function ownersElsewhere(table: string, ids: readonly number[]): Promise<Map<number, number | null>> {
  const owners = new Map<number, number | null>();
  const store = requests.getStore();
  if (!store || ids.length === 0) return owners;
  const own = store.shard ?? store.env.DB;
  for (const name of shardNames(store.env.SHARDS)) {
    const binding = bindingNamed(store.env, name);
    if (binding === own) continue;
    const { results } = await sessionOf(store, binding)
      .prepare(`SELECT id, account_id FROM "${table}" WHERE id IN (SELECT value FROM json_each(?))`)
      .bind(JSON.stringify(ids))
      .all<{ id: number; account_id: number | null }>();
    for (const row of results) owners.set(row.id, row.account_id);
  }
  return owners;
}

/** The directory's tables (docs/scaling.md, "Where rows live"), named in a statement. */
const DIRECTORY_SQL = /[\s"`(](accounts|clients|publishable_keys|publishable_key_lists)[\s"`(),;]/i;
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
  return namesDirectory(query) ? sessionOf(store, store.env.DB, true) : sessionOf(store, store.shard ?? store.env.DB);
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
  all = () =>
    (CATEGORY_WRITE.test(this.query) ? writeCategories(this) : this.native().all<Record<string, unknown>>()).catch(
      accountMoving,
    );
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
    .map((name) => bindingNamed(store.env, name))
    .filter((binding) => binding !== own)
    .map((binding) => sessionOf(store, binding));
}

/** `row` written as it is, in `session`: an update if it has the row, else an insert (see src/db/move.ts). */
function copyRow(session: D1DatabaseSession, row: Record<string, unknown>): Promise<unknown> {
  const columns = Object.keys(row).filter((column) => column !== "id");
  return session.batch([
    session
      .prepare(`UPDATE categories SET ${columns.map((c) => `"${c}" = ?`).join(", ")} WHERE id = ?`)
      .bind(...columns.map((c) => row[c]), row.id),
    session
      .prepare(
        `INSERT INTO categories ("id", ${columns.map((c) => `"${c}"`).join(", ")})
         SELECT ?, ${columns.map(() => "?").join(", ")} WHERE NOT EXISTS (SELECT 1 FROM categories WHERE id = ?)`,
      )
      .bind(row.id, ...columns.map((c) => row[c]), row.id),
  ]);
}

/**
 * Categories are shared: every account reads every one and may put any on its places (CONTRACT
 * "Access"), so every shard holds every category, and a write goes to the request's shard first (whose
 * AUTOINCREMENT gives a new one its id) and then, as the rows it returned, to every other shard. A
 * deletion another shard's places still depend on is undone and refused as the foreign key refuses it
 * on one database (409).
 */
async function writeCategories(statement: RoutedStatement): Promise<D1Result<Record<string, unknown>>> {
  const result = await statement.native().all<Record<string, unknown>>();
  const store = requests.getStore();
  if (!store) return result;
  const others = otherShards(store);
  const deletion = /^\s*delete/i.test(statement.query);
  for (const row of result.results) {
    if (deletion) {
      for (const other of others) {
        const used = await other.prepare("SELECT 1 FROM pinpoints WHERE category_id = ? LIMIT 1").bind(row.id).first();
        if (used) {
          await copyRow(sessionOf(store, store.shard ?? store.env.DB), row);
          throw new Error("FOREIGN KEY constraint failed: a place on another shard uses the category");
        }
      }
      for (const other of others) await other.prepare("DELETE FROM categories WHERE id = ?").bind(row.id).run();
    } else {
      for (const other of others) await copyRow(other, row);
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
