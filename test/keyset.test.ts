/**
 * The keyset query (src/db/keyset.ts) over orders other than the id, as the
 * query features need them: composite keys with ties, ascending, descending
 * and mixed, read forward and backward, exclusive and inclusive bounds. Every
 * walk is checked against the same rows sorted in the test.
 */
import { env } from "cloudflare:workers";
import { sql, type SQL } from "drizzle-orm";
import { integer, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { beforeAll, describe, expect, it } from "vitest";
import { database } from "../src/db/client";
import { keyset, type Bound, type SortKey } from "../src/db/keyset";

const items = sqliteTable("keyset_items", {
  id: integer().primaryKey(),
  score: real().notNull(),
  tag: text().notNull(),
});
type Item = typeof items.$inferSelect;

// Few distinct scores and tags, so most rows tie on the leading keys.
const rows: Item[] = Array.from({ length: 120 }, (_, i) => ({
  id: i + 1,
  score: [0.5, 1.25, -3, 7][(i * 7) % 4]!,
  tag: ["b", "a", "c"][(i * 5) % 3]!,
}));

beforeAll(async () => {
  await env.DB.exec("CREATE TABLE keyset_items (id INTEGER PRIMARY KEY, score REAL NOT NULL, tag TEXT NOT NULL)");
  // One JSON parameter, as D1 binds at most 100.
  await env.DB.prepare(
    "INSERT INTO keyset_items SELECT value ->> 'id', value ->> 'score', value ->> 'tag' FROM json_each(?)",
  )
    .bind(JSON.stringify(rows))
    .run();
});

type Field = "score" | "tag" | "id" | "twice";
type Order = { field: Field; descending?: boolean }[];

/** `twice` is a computed key (score * 2), as a distance or a rank is. */
const expression = (field: Field): SQL | (typeof items)[Exclude<Field, "twice">] =>
  field === "twice" ? sql`(${items.score} * 2)` : items[field];
const valueOf = (row: Item, field: Field) => (field === "twice" ? row.score * 2 : row[field]);
const keyOf = (order: Order, row: Item) => order.map(({ field }) => valueOf(row, field));

function sorted(order: Order): Item[] {
  return [...rows].sort((x, y) => {
    for (const { field, descending } of order) {
      const [a, b] = [valueOf(x, field), valueOf(y, field)];
      if (a !== b) return (a < b ? -1 : 1) * (descending ? -1 : 1);
    }
    return 0;
  });
}

async function read(order: Order, bound: Bound, take: number): Promise<Item[]> {
  const sortKeys: SortKey[] = order.map(({ field, descending }) =>
    descending ? { by: expression(field), descending: true } : expression(field),
  );
  const { where, orderBy } = keyset(sortKeys, bound);
  const page = await database(env.DB)
    .select()
    .from(items)
    .where(where)
    .orderBy(...orderBy)
    .limit(take);
  return bound?.direction === "before" ? page.reverse() : page;
}

const orders: Record<string, Order> = {
  "(id)": [{ field: "id" }],
  "(id desc)": [{ field: "id", descending: true }],
  "(score, id)": [{ field: "score" }, { field: "id" }],
  "(score desc, id desc)": [
    { field: "score", descending: true },
    { field: "id", descending: true },
  ],
  "(score desc, id)": [{ field: "score", descending: true }, { field: "id" }],
  "(tag, score desc, id)": [{ field: "tag" }, { field: "score", descending: true }, { field: "id" }],
  "(score * 2, tag, id)": [{ field: "twice" }, { field: "tag" }, { field: "id" }],
};

describe.each(Object.entries(orders))("keyset over %s", (_, order) => {
  const expected = () => sorted(order).map((r) => r.id);

  it("walks forward page by page, each row once, in order", async () => {
    const seen: number[] = [];
    let bound: Bound = null;
    for (;;) {
      const page = await read(order, bound, 7);
      seen.push(...page.map((r) => r.id));
      if (page.length < 7) break;
      bound = { direction: "after", key: keyOf(order, page.at(-1)!) };
    }
    expect(seen).toEqual(expected());
  });

  it("walks backward from the end, each row once, in order", async () => {
    const all = sorted(order);
    const seen: number[] = [];
    let bound: Bound = { direction: "after", key: keyOf(order, all.at(-1)!), inclusive: true };
    let page = await read(order, bound, 1);
    seen.unshift(...page.map((r) => r.id));
    for (;;) {
      bound = { direction: "before", key: keyOf(order, page[0]!) };
      page = await read(order, bound, 11);
      seen.unshift(...page.map((r) => r.id));
      if (page.length < 11) break;
    }
    expect(seen).toEqual(expected());
  });

  it("takes the row at an inclusive bound and leaves it out of an exclusive one", async () => {
    const all = sorted(order);
    const at = all[50]!;
    const key = keyOf(order, at);
    expect((await read(order, { direction: "after", key, inclusive: true }, 3)).map((r) => r.id)).toEqual(
      all.slice(50, 53).map((r) => r.id),
    );
    expect((await read(order, { direction: "after", key }, 3)).map((r) => r.id)).toEqual(
      all.slice(51, 54).map((r) => r.id),
    );
    expect((await read(order, { direction: "before", key, inclusive: true }, 3)).map((r) => r.id)).toEqual(
      all.slice(48, 51).map((r) => r.id),
    );
    expect((await read(order, { direction: "before", key }, 3)).map((r) => r.id)).toEqual(
      all.slice(47, 50).map((r) => r.id),
    );
  });
});

it("refuses a bound whose key does not match the order", () => {
  expect(() => keyset([items.score, items.id], { direction: "after", key: [1] })).toThrow(/one value per sort key/);
});
