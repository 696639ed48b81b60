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
 *
 * What drizzle cannot declare is defined only in migrations/, as SQL that
 * drizzle-kit leaves alone, and kept in step with these tables by triggers:
 * - the search indexes, read by src/db/search/ (whose search-sql.ts names
 *   each object and trigger): the R*Tree `pinpoints_rtree`
 *   (migrations/0004_query_indexes.sql, migrations/0007_rtree_account_width.sql),
 *   the FTS5 tables `pinpoints_fts` and `events_fts` (0004,
 *   migrations/0009_fts_prefix_indexes.sql, migrations/0012_search_forms.sql),
 *   and `tile_cells`, the per-cell counts vector tiles read, a WITHOUT ROWID
 *   table (migrations/0011_tile_cells.sql);
 * - the triggers that write the change log: a list's membership ones in
 *   migrations/0008_membership_batches.sql, the content tables' ones first in
 *   migrations/0006_change_log.sql, as migrations/0015_webhook_outbox.sql
 *   redefines them to write the webhook outbox too, as
 *   migrations/0018_account_positions.sql redefines them to number each
 *   account's changes, with pinpoints' and events' update ones firing only
 *   for the columns a client sees since migrations/0019_data_fills.sql, and
 *   as migrations/0022_change_actors.sql redefines them all to keep each
 *   change's actor (lists' and categories' update ones too firing only for
 *   the columns a client sees);
 * - the triggers that refuse an account's writes on a shard it is being
 *   switched away from or has left (`account_fences`, migrations/0014_shards.sql,
 *   and for a membership's position migrations/0023_list_order.sql);
 * - the trigger that counts a change of a list's order as a change of the
 *   list, as its membership ones do (migrations/0023_list_order.sql).
 */
import { isNotNull, sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { MIDDLE_POSITION } from "./list-positions";

/** Milliseconds since the epoch, filled by SQLite so batch inserts need no clock. */
const createdAt = () =>
  integer({ mode: "timestamp_ms" })
    .notNull()
    .default(sql`(cast(unixepoch('subsec') * 1000 as integer))`);
const updatedAt = () =>
  integer({ mode: "timestamp_ms" })
    .notNull()
    .default(sql`(cast(unixepoch('subsec') * 1000 as integer))`);
/**
 * Counts the changes of a row as a client sees it: every update sets it to
 * `version + 1` (a list's also when its membership changes, by trigger), so it
 * is the row's strong ETag and what a conditional write checks in its WHERE.
 */
const version = () => integer().notNull().default(1);
/**
 * Who wrote a row (src/auth/actor.ts): `person:<id>` or `client:<id>`; null
 * for rows written before the service recorded it.
 */
const actor = () => text();

/**
 * Owner of content; several API clients (applications) may share one account.
 * In the directory database, `shard` names the D1 binding that holds the
 * account's content (src/db/shards.ts); each shard keeps a copy of the row of
 * every account it holds, which its content rows reference (docs/scaling.md).
 */
export const accounts = sqliteTable("accounts", {
  id: integer().primaryKey({ autoIncrement: true }),
  name: text().notNull().unique(),
  created_at: createdAt(),
  shard: text().notNull().default("DB"),
});

/**
 * An account this shard must not write (src/db/move.ts): `paused` while a move
 * copies it here or switches it away (until `until`, epoch ms, if set: a
 * crashed move's pause ends by itself), `gone` once it has left, `mover` only
 * inside the move's own batches. Triggers of the `shards` migration refuse
 * every content write of a paused or gone account; the Worker answers 503.
 */
export const accountFences = sqliteTable("account_fences", {
  account_id: integer().primaryKey(),
  state: text({ enum: ["paused", "gone", "mover"] }).notNull(),
  until: integer(),
});

/**
 * The id ranges handed out, in the directory (src/db/id-ranges.ts,
 * docs/scaling.md "Identifiers"): each range of ID_RANGE numbers from `start`
 * belongs to one `holder`, a shard (its binding name: every table of it
 * allocates from there) or the directory's own counter of category ids, whose
 * next id is `next_id` (null for a shard's range, which its `sqlite_sequence`
 * counts). Range 0 is the directory's, where a new database allocates from.
 */
export const idRanges = sqliteTable("id_ranges", {
  start: integer().primaryKey(),
  holder: text().notNull(),
  claimed_at: integer().notNull(),
  next_id: integer(),
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
 * People who sign in (docs/people-and-roles.md), in the directory. `email` as
 * given; `email_key`, its lower-cased NFC form, is what makes an address
 * unique and what sign-in looks up. `password_hash` is null for a person who
 * signs in with passkeys only; `totp_secret` is sealed (src/core/sealed.ts),
 * and the second factor is on once `totp_enabled_at` is set.
 */
export const people = sqliteTable("people", {
  id: integer().primaryKey({ autoIncrement: true }),
  email: text().notNull(),
  email_key: text().notNull().unique(),
  name: text().notNull(),
  password_hash: text(),
  totp_secret: text(),
  totp_enabled_at: integer({ mode: "timestamp_ms" }),
  created_at: createdAt(),
  updated_at: updatedAt(),
});

/** A person's WebAuthn credentials; `id` is the credential id, base64url. */
export const passkeys = sqliteTable(
  "passkeys",
  {
    id: text().primaryKey(),
    person_id: integer()
      .notNull()
      .references(() => people.id, { onDelete: "cascade" }),
    name: text().notNull(),
    public_key: text().notNull(),
    counter: integer().notNull().default(0),
    transports: text({ mode: "json" }).$type<string[]>(),
    created_at: createdAt(),
    last_used_at: integer({ mode: "timestamp_ms" }),
  },
  (t) => [index("passkeys_person_idx").on(t.person_id)],
);

/** Single-use codes that stand in for the second factor; only their SHA-256 hashes are kept. */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    person_id: integer()
      .notNull()
      .references(() => people.id, { onDelete: "cascade" }),
    code_hash: text().notNull(),
    used_at: integer({ mode: "timestamp_ms" }),
  },
  (t) => [primaryKey({ columns: [t.person_id, t.code_hash] })],
);

/**
 * Signed-in browsers. `id` is the SHA-256 hash of the cookie's secret, so
 * the table alone signs nobody in. `account_id` is the account the person
 * acts in; `second_factor` is `pending` between the password and the TOTP
 * code. A session ends at `expires_at`, the earliest of its deadlines (idle
 * since `last_seen_at`, absolute since sign-in, ten minutes while pending:
 * src/people/sessions.ts), or when `revoked_at` is set.
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text().primaryKey(),
    person_id: integer()
      .notNull()
      .references(() => people.id, { onDelete: "cascade" }),
    account_id: integer().references(() => accounts.id, { onDelete: "set null" }),
    second_factor: text({ enum: ["pending", "done", "none"] }).notNull(),
    user_agent: text(),
    created_at: createdAt(),
    last_seen_at: integer({ mode: "timestamp_ms" }).notNull(),
    expires_at: integer({ mode: "timestamp_ms" }).notNull(),
    revoked_at: integer({ mode: "timestamp_ms" }),
  },
  (t) => [index("sessions_person_idx").on(t.person_id)],
);

/**
 * An account's members and their roles (src/auth/roles.ts). `version`
 * grows at every change of the role and is copied into the person's access
 * tokens, so a token minted before a change is refused at its next request.
 */
export const members = sqliteTable(
  "members",
  {
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    person_id: integer()
      .notNull()
      .references(() => people.id, { onDelete: "cascade" }),
    role: text({ enum: ["owner", "admin", "editor", "contributor", "viewer"] }).notNull(),
    version: integer().notNull().default(1),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.account_id, t.person_id] }), index("members_person_idx").on(t.person_id)],
);

/**
 * People given one list (and the pinpoints in it) without being members of
 * its account. The list lives on the account's shard; this row lives in the
 * directory beside the members, where every request's standing is read.
 */
export const listCollaborators = sqliteTable(
  "list_collaborators",
  {
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    list_id: integer().notNull(),
    person_id: integer()
      .notNull()
      .references(() => people.id, { onDelete: "cascade" }),
    role: text({ enum: ["editor", "viewer"] }).notNull(),
    version: integer().notNull().default(1),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.list_id, t.person_id] }),
    index("list_collaborators_person_idx").on(t.person_id, t.account_id),
  ],
);

/**
 * Invitations to an account (with a role) or to one list (`list_id`, with a
 * list role). Only the SHA-256 hash of the link's secret is kept; a link is
 * good once, until `expires_at`, unless `revoked_at` is set.
 */
export const invitations = sqliteTable(
  "invitations",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    email: text().notNull(),
    email_key: text().notNull(),
    role: text({ enum: ["owner", "admin", "editor", "contributor", "viewer"] }).notNull(),
    list_id: integer(),
    token_hash: text().notNull().unique(),
    invited_by: text().notNull(),
    expires_at: integer({ mode: "timestamp_ms" }).notNull(),
    accepted_at: integer({ mode: "timestamp_ms" }),
    accepted_by: integer().references(() => people.id, { onDelete: "set null" }),
    revoked_at: integer({ mode: "timestamp_ms" }),
    created_at: createdAt(),
  },
  (t) => [index("invitations_account_idx").on(t.account_id, t.id)],
);

/**
 * Short-lived single-use secrets of the sign-in flows: a password reset link
 * (`reset`), a WebAuthn challenge (`passkey`). Only the SHA-256 hash of the
 * secret is kept; `person_id` is null for a challenge issued before anyone
 * is known (a passkey sign-in).
 */
export const authTickets = sqliteTable(
  "auth_tickets",
  {
    id: text().primaryKey(),
    kind: text({ enum: ["reset", "passkey"] }).notNull(),
    person_id: integer().references(() => people.id, { onDelete: "cascade" }),
    payload: text(),
    expires_at: integer({ mode: "timestamp_ms" }).notNull(),
    used_at: integer({ mode: "timestamp_ms" }),
    created_at: createdAt(),
  },
  (t) => [index("auth_tickets_expiry_idx").on(t.expires_at)],
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
    version: version(),
    created_by: actor(),
    updated_by: actor(),
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
    /** The description's text without markup in its search form, for the full-text index (migrations/0004_query_indexes.sql). */
    description_text: text(),
    /** The search forms of name, address and tags (src/core/search-form.ts); null where it is the text itself. */
    name_search: text(),
    address_search: text(),
    tags_search: text(),
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
    version: version(),
    created_by: actor(),
    updated_by: actor(),
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
    version: version(),
    created_by: actor(),
    updated_by: actor(),
  },
  (t) => [index("lists_account_idx").on(t.account_id, t.id)],
);

/**
 * List membership; the primary key doubles as the keyset index for `?list=ID`. `position` is the
 * member's place in the owner's order of the list, which is `(position, pinpoint_id)`, read by
 * `list_pinpoints_order_idx` for `?list=ID&order=position` (./list-positions.ts says how positions are
 * chosen; memberships older than them share the default, so they keep their order by pinpoint id).
 */
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
    position: integer().notNull().default(MIDDLE_POSITION),
  },
  (t) => [
    primaryKey({ columns: [t.list_id, t.pinpoint_id] }),
    index("list_pinpoints_pinpoint_idx").on(t.pinpoint_id),
    index("list_pinpoints_order_idx").on(t.list_id, t.position, t.pinpoint_id),
  ],
);

/**
 * A membership batch in progress (src/lists/membership.ts): a row exists only
 * inside the D1 batch that writes the list's memberships. While it does, the
 * membership triggers only set `changed` instead of bumping the list's version
 * per row, and deleting the row bumps the version once if anything changed
 * (migrations/0008_membership_batches.sql). Outside a batch (a pinpoint's
 * deletion cascading, any other writer) every membership row bumps it.
 */
export const listBatches = sqliteTable("list_batches", {
  list_id: integer().primaryKey(),
  changed: integer().notNull().default(0),
});

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
    /** The description's text without markup in its search form, for the full-text index (migrations/0004_query_indexes.sql). */
    description_text: text(),
    /** The search forms of name and tags (src/core/search-form.ts); null where it is the text itself. */
    name_search: text(),
    tags_search: text(),
    media_key: text(),
    media_credits: text(),
    tags: text({ mode: "json" })
      .$type<string[]>()
      .notNull()
      .default(sql`'[]'`),
    created_at: createdAt(),
    updated_at: updatedAt(),
    version: version(),
    created_by: actor(),
    updated_by: actor(),
  },
  (t) => [
    index("events_account_idx").on(t.account_id, t.id),
    index("events_pinpoint_idx").on(t.pinpoint, t.id),
    index("events_media_idx").on(t.media_key).where(isNotNull(t.media_key)),
  ],
);

/**
 * Publishable keys (`pk_…`): read-only credentials for public maps, safe to
 * put in a web page. Only a SHA-256 hash of the key is stored, as for client
 * secrets; `key_prefix` lets an owner recognise a key in a listing.
 * `every_list` means every list of the account, now and later; otherwise the
 * key reads the lists in `publishable_key_lists` (a deleted list leaves it).
 * `origins` (JSON, null for any) restricts the web pages that may use it.
 */
export const publishableKeys = sqliteTable(
  "publishable_keys",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    name: text().notNull(),
    key_hash: text().notNull().unique(),
    key_prefix: text().notNull(),
    every_list: integer({ mode: "boolean" }).notNull(),
    origins: text({ mode: "json" }).$type<string[]>(),
    expires_at: integer({ mode: "timestamp_ms" }),
    created_at: createdAt(),
  },
  (t) => [index("publishable_keys_account_idx").on(t.account_id, t.id)],
);

/**
 * The lists a publishable key reads, unless it reads every list. In the
 * directory, while the lists live in the account's shard: no foreign key to
 * `lists`, and a deleted list's grant matches nothing (src/keys/store.ts).
 */
export const publishableKeyLists = sqliteTable(
  "publishable_key_lists",
  {
    key_id: integer()
      .notNull()
      .references(() => publishableKeys.id, { onDelete: "cascade" }),
    list_id: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.key_id, t.list_id] }), index("publishable_key_lists_list_idx").on(t.list_id)],
);

/**
 * Webhooks: where an account's changes are POSTed, signed (Standard Webhooks)
 * with `secret`, and with `previous_secret` too until `previous_secret_expires_at`
 * after a rotation. Signing needs the secrets back, so they are stored
 * sealed (src/webhooks/sealed-secrets.ts), not hashed. `position` is the last
 * change-log `seq` delivered or skipped: delivery is driven from the log
 * (src/webhooks/deliver.ts), so a lost queue message loses nothing.
 * `lease_until` lets one consumer at a time deliver a webhook, which keeps its
 * changes in commit order; `failures`, `failing_since` and `next_attempt_at`
 * schedule retries; `disabled_at` and `disabled_reason` say why it stopped.
 * `api_origin` is the origin the webhook was created at: the one media URLs
 * in its payloads are built on when PUBLIC_ORIGIN is not set.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    url: text().notNull(),
    description: text(),
    events: text({ mode: "json" }).$type<string[]>().notNull(),
    secret: text().notNull(),
    previous_secret: text(),
    previous_secret_expires_at: integer({ mode: "timestamp_ms" }),
    position: integer().notNull(),
    api_origin: text().notNull(),
    lease_until: integer(),
    failures: integer().notNull().default(0),
    failing_since: integer({ mode: "timestamp_ms" }),
    next_attempt_at: integer({ mode: "timestamp_ms" }),
    disabled_at: integer({ mode: "timestamp_ms" }),
    disabled_reason: text(),
    created_at: createdAt(),
    updated_at: updatedAt(),
  },
  (t) => [index("webhooks_account_idx").on(t.account_id, t.id)],
);

/**
 * Recent delivery attempts of a webhook, for GET /v3.0/webhooks/{id}/deliveries:
 * only a short excerpt of the receiver's answer is kept, and the scheduled job
 * deletes attempts older than a week. `seq` is the write's `position` as its
 * payload showed it (the outbox row's, see below).
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    webhook_id: integer()
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    message_id: text().notNull(),
    seq: integer().notNull(),
    event: text().notNull(),
    object_id: integer().notNull(),
    attempt: integer().notNull(),
    succeeded: integer({ mode: "boolean" }).notNull(),
    response_status: integer(),
    response_excerpt: text(),
    error: text(),
    latency_ms: integer().notNull(),
    next_retry_at: integer({ mode: "timestamp_ms" }),
    created_at: createdAt(),
  },
  (t) => [
    index("webhook_deliveries_webhook_idx").on(t.webhook_id, t.id),
    index("webhook_deliveries_created_idx").on(t.created_at),
  ],
);

/**
 * The webhook outbox: one row per write of an object (insert, update, delete)
 * of an account that has a webhook subscribed to the write's event, holding
 * the object's row as it was right after that write (`object`, JSON of its
 * columns; null for a tombstone), the change-log `seq` the write took and the
 * account's `position` it took (see `changes`; null in rows written before
 * migrations/0018_account_positions.sql, whose position is their `seq`).
 * Written only by the change-log triggers of migrations/0015_webhook_outbox.sql,
 * in the statement of the write itself, so a write and its row commit together
 * or not at all; an account without webhooks writes none (the triggers' one
 * index probe on `webhooks_account_idx` finds nothing). `id` grows in commit
 * order; each webhook's `position` is the last `id` it delivered or skipped
 * (src/webhooks/deliver.ts). Rows every webhook of the account has passed are
 * deleted after each delivery pass, and any older than the change feed's
 * retention window by the scheduled job.
 */
export const webhookOutbox = sqliteTable(
  "webhook_outbox",
  {
    id: integer().primaryKey({ autoIncrement: true }),
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    type: text({ enum: ["pinpoint", "list", "category", "event"] }).notNull(),
    object_id: integer().notNull(),
    op: text({ enum: ["upsert", "delete"] }).notNull(),
    event: text().notNull(),
    version: integer().notNull(),
    seq: integer().notNull(),
    position: integer(),
    object: text({ mode: "json" }).$type<Record<string, unknown>>(),
    created_at: createdAt(),
    /** Who made the write (see `changes.actor`). */
    actor: actor(),
  },
  (t) => [index("webhook_outbox_account_idx").on(t.account_id, t.id)],
);

/**
 * One row per occurrence of an event, so `from`/`to` read an index instead of
 * parsing every event's `dates`. Kept in step with `events.dates` by triggers
 * (migrations/0004_query_indexes.sql); the `dates` column stays the source of truth.
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

/**
 * The change log behind GET /v3.0/changes: one row per object (the latest
 * change of it), written only by the triggers of the `change_log` migration
 * on every insert, update and delete of pinpoints, lists, categories and
 * events, cascaded deletions and list membership included. `seq` is
 * AUTOINCREMENT, so it grows in commit order (D1 has one writer) and is never
 * reused; replacing an object's row gives it a new `seq`. Tombstones
 * (`op = 'delete'`) are pruned by the scheduled job after the retention window,
 * all but each account's newest entry.
 *
 * `seq` is the shard's, shared by every account on it, so it is never shown
 * (feed cursors are encrypted: src/http/cursor.ts). `position` numbers the
 * changes of one account alone, 1, 2, 3…, each one above the account's newest
 * entry (`changes_account_idx` finds it): what webhook payloads show. Null in
 * entries written before migrations/0018_account_positions.sql, whose
 * position is their `seq`, so an account's positions continue above them.
 */
export const changes = sqliteTable(
  "changes",
  {
    seq: integer().primaryKey({ autoIncrement: true }),
    account_id: integer().notNull(),
    type: text({ enum: ["pinpoint", "list", "category", "event"] }).notNull(),
    object_id: integer().notNull(),
    op: text({ enum: ["upsert", "delete"] }).notNull(),
    version: integer().notNull(),
    changed_at: createdAt(),
    position: integer(),
    /**
     * Who made the change: an upsert's is the row's `updated_by`; a delete's, the `updated_by` the
     * deleting request stamped on the row just before (src/db/owned.ts). Null before it was recorded.
     */
    actor: actor(),
  },
  (t) => [
    uniqueIndex("changes_object_idx").on(t.type, t.object_id),
    index("changes_account_idx").on(t.account_id, t.seq),
    index("changes_tombstone_idx")
      .on(t.changed_at)
      .where(sql`${t.op} = 'delete'`),
  ],
);

/**
 * Idempotency keys (the IETF Idempotency-Key draft, Stripe's semantics): per
 * account, the fingerprint of the first request and, once it finished, its
 * response, the body sealed (src/core/sealed.ts). `status` null means the
 * first request is still running. `idempotency_keys_plain_idx` holds the rows
 * whose body was stored before bodies were sealed, for the scheduled job that
 * seals them (src/db/idempotency.ts); none are added since.
 */
export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    account_id: integer()
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    key: text().notNull(),
    fingerprint: text().notNull(),
    status: integer(),
    headers: text({ mode: "json" }).$type<[string, string][]>(),
    body: text(),
    created_at: integer().notNull(),
    expires_at: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.account_id, t.key] }),
    index("idempotency_keys_expiry_idx").on(t.expires_at),
    index("idempotency_keys_plain_idx")
      .on(t.account_id, t.key)
      .where(sql`substr(${t.body}, 1, 10) <> 'sealed:v1:'`),
  ],
);
/**
 * Data fills: values a migration needs computed for the rows already there, computed by
 * src/db/fills.ts in batches of rows in id order, each batch one transaction well inside
 * D1's 30-second limit per statement, instead of by the migration in one statement
 * (docs/development.md, "Writing migrations"). The migration registers the fill's row; the
 * scheduled job and `npm run fill` run it. `cursor` is the last id done; `last` the highest id
 * the fill covers, fixed by its first batch (rows written after that are written whole by the
 * code of the same deploy); `done_at` is set by the batch that reaches `last`. While a fill
 * that `blocks` text search is not done, searches with `q=` answer 503 `text_index_filling`.
 */
export const dataFills = sqliteTable("data_fills", {
  name: text().primaryKey(),
  blocks: text({ enum: ["text_search"] }),
  cursor: integer().notNull().default(0),
  last: integer(),
  done_at: integer(),
});

export type Pinpoint = typeof pinpoints.$inferSelect;
export type List = typeof lists.$inferSelect;
export type Category = typeof categories.$inferSelect;
export type Event = typeof events.$inferSelect;
export type Client = typeof clients.$inferSelect;
export type PublishableKey = typeof publishableKeys.$inferSelect;
export type Webhook = typeof webhooks.$inferSelect;
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;
export type WebhookOutboxRow = typeof webhookOutbox.$inferSelect;
