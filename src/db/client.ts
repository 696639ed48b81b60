/** The drizzle handle over a D1 binding, made once per binding. */
import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = DrizzleD1Database<typeof schema>;

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
