/**
 * The webhook outbox (src/db/schema.ts `webhook_outbox`): one row per write
 * of an account with a webhook subscribed to it, written by the change-log
 * triggers (migrations/0015_webhook_outbox.sql) in the write's own statement.
 * Here: reading a webhook's rows after its position, and deleting the rows no
 * webhook needs any more. Every query is scoped by `account_id`, so an
 * account's rows move with it.
 */
import { and, asc, eq, gt } from "drizzle-orm";
import { database } from "../db/client";
import { rowMapper } from "../db/search/raw-rows";
import { categories, events, lists, pinpoints, webhookOutbox, type WebhookOutboxRow } from "../db/schema";
import type { ObjectRows } from "../changes/store";

/** An outbox row's object as the table's row type, as drizzle would read it from the table itself. */
export const outboxObject: { [K in WebhookOutboxRow["type"]]: (raw: Record<string, unknown>) => ObjectRows[K] } = {
  pinpoint: rowMapper(pinpoints),
  list: rowMapper(lists),
  category: rowMapper(categories),
  event: rowMapper(events),
};

/** Up to `take` of the account's rows after `afterId`, in commit order. */
export async function readOutbox(
  d1: D1Database,
  accountId: number,
  afterId: number,
  take: number,
): Promise<WebhookOutboxRow[]> {
  return database(d1)
    .select()
    .from(webhookOutbox)
    .where(and(eq(webhookOutbox.account_id, accountId), gt(webhookOutbox.id, afterId)))
    .orderBy(asc(webhookOutbox.id))
    .limit(take);
}

/** Whether the account has rows after `afterId`. */
export async function hasOutboxAfter(d1: D1Database, accountId: number, afterId: number): Promise<boolean> {
  const row = await d1
    .prepare("SELECT 1 AS pending FROM webhook_outbox WHERE account_id = ? AND id > ? LIMIT 1")
    .bind(accountId, afterId)
    .first();
  return row !== null;
}

/**
 * Deletes the account's rows that every one of its webhooks has passed (all
 * of them once it has none): after each delivery pass and each deletion of a
 * webhook. A disabled webhook keeps its rows until the retention window ends
 * (pruneExpiredOutbox), so re-enabled it resumes where it stopped.
 */
export async function prunePassedOutbox(d1: D1Database, accountId: number): Promise<number> {
  const result = await d1
    .prepare(
      `DELETE FROM webhook_outbox WHERE account_id = ?1
        AND id <= coalesce((SELECT min(position) FROM webhooks WHERE account_id = ?1), 9223372036854775807)`,
    )
    .bind(accountId)
    .run();
  return result.meta.changes;
}

/**
 * Deletes rows written before `before` (epoch ms), whoever still waits for
 * them: the scheduled job's bound on a webhook that stays disabled or fails.
 * Ids follow commit order, so the rows to delete are the ones before the
 * first row written since `before`, found walking the primary key from its
 * start: no index on `created_at`, which every outbox write would pay for.
 */
export async function pruneExpiredOutbox(d1: D1Database, before: number): Promise<number> {
  const result = await d1
    .prepare(
      `DELETE FROM webhook_outbox WHERE id < coalesce(
        (SELECT id FROM webhook_outbox WHERE created_at >= ?1 ORDER BY id LIMIT 1),
        (SELECT coalesce(max(id), 0) + 1 FROM webhook_outbox))`,
    )
    .bind(before)
    .run();
  return result.meta.changes;
}
