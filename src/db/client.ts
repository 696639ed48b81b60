/**
 * The database as the request code sees it. Each request runs in a D1 session
 * (http/d1-session.ts opens it with `runInSession`); everything else takes the
 * binding, routed: one object per binding, made once per isolate, whose
 * statements run in the session of the request that executes them (found
 * through AsyncLocalStorage), or on the binding itself outside a request (the
 * scheduled job). Because the routed object never changes, the drizzle handle
 * and the prepared queries below are built once per isolate, not once per
 * session: rebuilding them per request cost more than half of a GET's
 * throughput (measured, docs/benchmarks.md).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = DrizzleD1Database<typeof schema>;

const sessions = new AsyncLocalStorage<D1DatabaseSession>();

/** The bookmark of the current request's session so far: what its reads have seen, at least. */
export function currentBookmark(): string | null {
  return sessions.getStore()?.getBookmark() ?? null;
}

/** Runs `fn` (and everything it awaits) with its queries in `session`. */
export function runInSession<T>(session: D1DatabaseSession, fn: () => T): T {
  return sessions.run(session, fn);
}

/**
 * A statement that is prepared where it runs: binding it (or running it
 * unbound) prepares it in the current session, which costs D1 no round trip.
 */
class RoutedStatement {
  constructor(
    readonly query: string,
    private readonly target: () => D1Database | D1DatabaseSession,
  ) {}
  private here = () => this.target().prepare(this.query);
  bind = (...values: unknown[]) => this.here().bind(...values);
  first = (column?: string) => (column === undefined ? this.here().first() : this.here().first(column));
  run = () => this.here().run();
  all = () => this.here().all();
  raw = (options?: { columnNames?: boolean }) =>
    options?.columnNames ? this.here().raw({ columnNames: true }) : this.here().raw();
}

const routedBindings = new WeakMap<D1Database, D1Database>();

/** The binding, with its statements and batches run in the current request's session. */
export function routed(binding: D1Database): D1Database {
  let db = routedBindings.get(binding);
  if (!db) {
    const target = () => sessions.getStore() ?? binding;
    db = {
      // D1's statement classes cannot be constructed by user code; RoutedStatement has their members.
      prepare: (query) => new RoutedStatement(query, target) as unknown as D1PreparedStatement,
      batch: (statements) =>
        target().batch(
          statements.map((s) => (s instanceof RoutedStatement ? target().prepare(s.query) : s) as D1PreparedStatement),
        ),
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
