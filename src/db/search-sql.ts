/** Small SQL helpers the search queries of pinpoints and events share. */
import { sql, type SQL } from "drizzle-orm";
import { keyset, type Bound } from "./keyset";

export const and = (conditions: SQL[]) => sql.join(conditions, sql` AND `);

/** The keyset condition (a list, empty on the first page) and order over `columns`. */
export function keysetSql(columns: SQL[], bound: Bound): { where: SQL[]; order: SQL } {
  const { where, orderBy } = keyset(columns, bound);
  return { where: where ? [where] : [], order: sql.join(orderBy, sql`, `) };
}

/** `column IN (ids…)`, or the empty condition. */
export const inList = (column: SQL, ids: readonly number[]) =>
  sql`${column} IN (${sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  )})`;

/** One condition per tag: the JSON array in `column` holds every one of them. */
export const hasTags = (column: SQL, tags: readonly string[]) =>
  tags.map((tag) => sql`EXISTS (SELECT 1 FROM json_each(${column}) WHERE value = ${tag})`);

/**
 * The reads of a relevance-ordered page: from the bound's tier onward (or
 * backward), the bound's own tier starting after (before) the bound's id.
 */
export function tierReads(tierCount: number, bound: Bound, idColumn: SQL): { tier: number; id?: SQL }[] {
  const backwards = bound?.direction === "before";
  const start = bound ? Number(bound.key[0]) : 1;
  const reads: { tier: number; id?: SQL }[] = [];
  for (let tier = start; tier >= 1 && tier <= tierCount; tier += backwards ? -1 : 1) {
    if (!bound || tier !== start) reads.push({ tier });
    else {
      const op = (backwards ? "<" : ">") + (bound.inclusive ? "=" : "");
      reads.push({ tier, id: sql`${idColumn} ${sql.raw(op)} ${Number(bound.key[1])}` });
    }
  }
  return reads;
}
