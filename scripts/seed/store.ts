/**
 * Writes a generated guide into an account through D1 and R2 bindings: the
 * local ones from wrangler's platform proxy (scripts/seed.ts), or the test
 * bindings in workerd. Icons go to R2 first and the rows follow in one D1
 * batch, which is all or nothing; if it fails the icons are deleted again,
 * as the upload protocol does (src/media/upload.ts).
 */
import { searchForm } from "../../src/core/search-form.ts";
import { descriptionText, tagsSearch } from "../../src/fields/search-columns.ts";
import { iconPng } from "./icons.ts";
import type { Guide } from "./guide.ts";

/** The part of a D1 binding the seed uses (structural, so Node and workerd types both fit). */
export interface SeedStatement {
  bind(...values: unknown[]): SeedStatement;
  first<T = Record<string, unknown>>(): Promise<T | null>;
  run(): Promise<unknown>;
}
export interface SeedDatabase {
  prepare(query: string): SeedStatement;
  batch(statements: SeedStatement[]): Promise<unknown[]>;
}
/** The part of an R2 binding the seed uses. */
export interface SeedBucket {
  put(
    key: string,
    value: Uint8Array,
    options: { httpMetadata: { contentType: string }; customMetadata: Record<string, string> },
  ): Promise<unknown>;
  delete(keys: string[]): Promise<void>;
}
export type SeedBindings = { DB: SeedDatabase; MEDIA: SeedBucket };

export type AccountContent = {
  accountId: number | null;
  pinpoints: number;
  lists: number;
  events: number;
  categories: number;
};

/** What the named account already holds; `accountId` is null if there is no such account. */
export async function accountContent(db: SeedDatabase, account: string): Promise<AccountContent> {
  const row = await db
    .prepare(
      `SELECT a.id AS id,
         (SELECT count(*) FROM pinpoints WHERE account_id = a.id) AS pinpoints,
         (SELECT count(*) FROM lists WHERE account_id = a.id) AS lists,
         (SELECT count(*) FROM events WHERE account_id = a.id) AS events,
         (SELECT count(*) FROM categories WHERE account_id = a.id) AS categories
       FROM accounts AS a WHERE a.name = ?`,
    )
    .bind(account)
    .first<{ id: number; pinpoints: number; lists: number; events: number; categories: number }>();
  return row
    ? { accountId: row.id, pinpoints: row.pinpoints, lists: row.lists, events: row.events, categories: row.categories }
    : { accountId: null, pinpoints: 0, lists: 0, events: 0, categories: 0 };
}

export const isEmpty = (c: AccountContent) => c.pinpoints + c.lists + c.events + c.categories === 0;

/** The same key shape as uploads (src/media/upload.ts): 128 random bits as hex, then the extension. */
function mediaKey(): string {
  const random = crypto.getRandomValues(new Uint8Array(16));
  return `m/${Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("")}.png`;
}

/** D1 binds at most 100 parameters per statement. */
const MAX_PARAMS = 100;

/** Multi-row INSERTs of `rows`, each row written as `rowSql` (one `?` per value), in as few statements as D1 allows. */
function inserts(db: SeedDatabase, head: string, rowSql: string, rows: unknown[][]): SeedStatement[] {
  const width = rowSql.split("?").length - 1;
  const perStatement = Math.floor(MAX_PARAMS / width);
  const statements: SeedStatement[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    statements.push(db.prepare(`${head} VALUES ${chunk.map(() => rowSql).join(", ")}`).bind(...chunk.flat()));
  }
  return statements;
}

export type SeedResult = {
  accountId: number;
  categories: number;
  pinpoints: number;
  lists: number;
  members: number;
  events: number;
  dates: number;
};

/**
 * Fills `account` (created if missing) with `guide`. Refuses, changing
 * nothing, if the account already has content: seeding adds to an empty
 * account only, so running it twice cannot duplicate anything.
 */
export async function seedAccount(env: SeedBindings, account: string, guide: Guide): Promise<SeedResult> {
  await env.DB.prepare("INSERT INTO accounts (name) VALUES (?) ON CONFLICT (name) DO NOTHING").bind(account).run();
  const content = await accountContent(env.DB, account);
  if (content.accountId === null) throw new Error(`The account "${account}" could not be created.`);
  if (!isEmpty(content)) throw new SeedRefused(account, content);
  const accountId = content.accountId;

  const icons = await Promise.all(
    guide.categories.map(async (category) => ({
      category,
      key: mediaKey(),
      png: await iconPng(category.glyph, category.color),
    })),
  );
  await Promise.all(
    icons.map(({ category, key, png }) =>
      env.MEDIA.put(key, png, {
        httpMetadata: { contentType: "image/png" },
        customMetadata: { name: `${category.glyph}.png`, account: String(accountId) },
      }),
    ),
  );

  const db = env.DB;
  // Rows name each other by name (unique within the seed, and the account was empty), so one batch holds everything.
  const categoryId = `(SELECT id FROM categories WHERE account_id = ${accountId} AND name = ?)`;
  const pinpointId = `(SELECT id FROM pinpoints WHERE account_id = ${accountId} AND name = ?)`;
  const statements = [
    ...inserts(
      db,
      "INSERT INTO categories (account_id, name, image_key)",
      `(${accountId}, ?, ?)`,
      icons.map(({ category, key }) => [category.name, key]),
    ),
    ...inserts(
      db,
      "INSERT INTO pinpoints (account_id, name, address, altitude, category_id, description, description_text, latitude, longitude, tags, name_search, address_search, tags_search)",
      `(${accountId}, ?, ?, ?, ${categoryId}, ?, ?, ?, ?, ?, ?, ?, ?)`,
      guide.pinpoints.map((p) => [
        p.name,
        p.address,
        p.altitude,
        p.category,
        p.description,
        descriptionText(p.description),
        p.latitude,
        p.longitude,
        JSON.stringify(p.tags),
        searchForm(p.name),
        searchForm(p.address),
        tagsSearch(p.tags),
      ]),
    ),
    ...inserts(
      db,
      "INSERT INTO lists (account_id, name, description)",
      `(${accountId}, ?, ?)`,
      guide.lists.map((l) => [l.name, l.description]),
    ),
    ...guide.lists
      .filter((l) => l.members.length > 0)
      .map((l) =>
        db
          .prepare(
            `INSERT INTO list_pinpoints (list_id, pinpoint_id)
             SELECT (SELECT id FROM lists WHERE account_id = ${accountId} AND name = ?), p.id
             FROM pinpoints AS p WHERE p.account_id = ${accountId} AND p.name IN (SELECT value FROM json_each(?))`,
          )
          .bind(l.name, JSON.stringify(l.members)),
      ),
    ...inserts(
      db,
      "INSERT INTO events (account_id, pinpoint_id, name, description, description_text, dates, tags, name_search, tags_search)",
      `(${accountId}, ${pinpointId}, ?, ?, ?, ?, ?, ?, ?)`,
      guide.events.map((e) => [
        e.pinpoint,
        e.name,
        e.description,
        descriptionText(e.description),
        JSON.stringify(e.dates),
        JSON.stringify(e.tags),
        searchForm(e.name),
        tagsSearch(e.tags),
      ]),
    ),
  ];
  try {
    await db.batch(statements);
  } catch (error) {
    await env.MEDIA.delete(icons.map((i) => i.key)).catch(() => {});
    throw error;
  }
  return {
    accountId,
    categories: guide.categories.length,
    pinpoints: guide.pinpoints.length,
    lists: guide.lists.length,
    members: guide.lists.reduce((n, l) => n + l.members.length, 0),
    events: guide.events.length,
    dates: guide.events.reduce((n, e) => n + e.dates.length, 0),
  };
}

/** The account already has content; nothing was changed. */
export class SeedRefused extends Error {
  override name = "SeedRefused";
  readonly content: AccountContent;

  constructor(account: string, content: AccountContent) {
    super(
      `The account "${account}" already has content (${content.pinpoints} pinpoints, ${content.lists} lists, ` +
        `${content.events} events, ${content.categories} categories); the sample guide only fills an empty account.`,
    );
    this.content = content;
  }
}
