/**
 * The one source of truth for stored data. Migrations in `migrations/` are
 * generated from this file by drizzle-kit and applied by wrangler; zod schemas
 * and response mappers derive from these tables.
 *
 * Property names are the column names, which are the API's field names, so
 * drizzle-zod can derive request schemas from these tables. The exceptions:
 * `category` (column `category_id`) and an event's `pinpoint` (`pinpoint_id`),
 * named as the API names them.
 *
 * Every content table carries `account_id` and an `(account_id, id)` index:
 * collection reads are keyset scans over that index, so page N costs the same
 * as page 1 and another account's rows are never touched.
 *
 * Media keys (`media_key`, `image_key`) have partial indexes so the media
 * sweep (src/media/sweep.ts) checks a batch of R2 keys with index probes
 * instead of scanning every row.
 */
import { isNotNull, sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Milliseconds since the epoch, filled by SQLite so batch inserts need no clock. */
const createdAt = () =>
  integer({ mode: "timestamp_ms" })
    .notNull()
    .default(sql`(cast(unixepoch('subsec') * 1000 as integer))`);
const updatedAt = () =>
  integer({ mode: "timestamp_ms" })
    .notNull()
    .default(sql`(cast(unixepoch('subsec') * 1000 as integer))`);

/** Owner of content; several API clients (applications) may share one account. */
export const accounts = sqliteTable("accounts", {
  id: integer().primaryKey({ autoIncrement: true }),
  name: text().notNull().unique(),
  created_at: createdAt(),
});

/**
 * OAuth2 clients. Only a SHA-256 hash of the (high-entropy, service-generated)
 * secret is stored. `secretVersion` is copied into every token; rotating the
 * secret bumps it, which invalidates tokens issued before the rotation.
 */
export const clients = sqliteTable(
  "clients",
  {
    id: text().primaryKey(),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text().notNull(),
    secret_hash: text().notNull(),
    secret_version: integer().notNull().default(1),
    scope: text().notNull(),
    revoked_at: integer({ mode: "timestamp_ms" }),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [index("clients_account_idx").on(t.account_id)],
);

/**
 * Shared icons. `accountId` null marks a built-in category (id 1), readable and
 * usable by everyone and changeable by no one.
 */
export const categories = sqliteTable(
  "categories",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer().references(() => accounts.id, { onDelete: "restrict" }),
    name: text().notNull(),
    image_key: text(),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [
    index("categories_account_idx").on(t.account_id, t.id),
    index("categories_image_idx").on(t.image_key).where(isNotNull(t.image_key)),
  ],
);

export const pinpoints = sqliteTable(
  "pinpoints",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text().notNull(),
    address: text(),
    altitude: real(),
    category: integer("category_id").references(() => categories.id, { onDelete: "restrict" }),
    description: text(),
    /** The description's text without markup, for the search index (src/db/search.ts). */
    description_text: text(),
    latitude: real().notNull(),
    longitude: real().notNull(),
    media_key: text(),
    media_credits: text(),
    tags: text({ mode: "json" })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [
    index("pinpoints_account_idx").on(t.account_id, t.id),
    index("pinpoints_category_idx").on(t.category),
    index("pinpoints_media_idx").on(t.media_key).where(isNotNull(t.media_key)),
  ],
);

export const lists = sqliteTable(
  "lists",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text().notNull(),
    description: text(),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [index("lists_account_idx").on(t.account_id, t.id)],
);

/** List membership; the primary key doubles as the keyset index for `?list=ID`. */
export const listPinpoints = sqliteTable(
  "list_pinpoints",
  {
    list_id: integer()
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    pinpoint_id: integer()
      .notNull()
      .references(() => pinpoints.id, { onDelete: "cascade" }),
    created_at: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.list_id, t.pinpoint_id] }), index("list_pinpoints_pinpoint_idx").on(t.pinpoint_id)],
);

/** One occurrence of an event, in epoch milliseconds (UTC). */
export type EventDate = { start: number; end: number };

export const events = sqliteTable(
  "events",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    pinpoint: integer("pinpoint_id")
      .notNull()
      .references(() => pinpoints.id, { onDelete: "cascade" }),
    name: text().notNull(),
    description: text(),
    dates: text({ mode: "json" }).$type<EventDate[]>().notNull(),
    /** The description's text without markup, for the search index (src/db/search.ts). */
    description_text: text(),
    media_key: text(),
    media_credits: text(),
    tags: text({ mode: "json" })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [
    index("events_account_idx").on(t.account_id, t.id),
    index("events_pinpoint_idx").on(t.pinpoint, t.id),
    index("events_media_idx").on(t.media_key).where(isNotNull(t.media_key)),
  ],
);

/**
 * One row per occurrence of an event, so `from`/`to` read an index instead of
 * parsing every event's `dates`. Kept in step with `events.dates` by triggers
 * (migrations/0003_query_indexes.sql); the `dates` column stays the source of truth.
 */
export const eventOccurrences = sqliteTable(
  "event_occurrences",
  {
    event_id: integer()
      .notNull()
      .references(() => events.id, { onDelete: "cascade" }),
    account_id: integer().notNull(),
    start: integer().notNull(),
    end: integer().notNull(),
  },
  (t) => [
    index("event_occurrences_start_idx").on(t.account_id, t.start, t.event_id),
    index("event_occurrences_event_idx").on(t.event_id, t.start),
    // The longest occurrence bounds how far before `from` an overlapping one can start.
    index("event_occurrences_length_idx").on(t.account_id, sql`${t.end} - ${t.start}`),
  ],
);

export type Pinpoint = typeof pinpoints.$inferSelect;
export type List = typeof lists.$inferSelect;
export type Category = typeof categories.$inferSelect;
export type Event = typeof events.$inferSelect;
export type Client = typeof clients.$inferSelect;
