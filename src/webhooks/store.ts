/**
 * Webhooks in D1: create, get, page, replace, delete and rotate, each scoped
 * to the caller's account, and a webhook's recent deliveries. Secrets are
 * stored sealed (sealed-secrets.ts). A new webhook
 * starts at its account's newest outbox row, read in the same statement that
 * inserts it, so it is sent every write committed after it exists (from that
 * statement on, the outbox triggers see it: migrations/0015_webhook_outbox.sql).
 */
import { and, eq, sql } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import { clock } from "../core/clock";
import type { SealingKeys } from "../core/sealed";
import { database } from "../db/client";
import { keyset, type Bound } from "../db/keyset";
import { ownedOr404, throwMissingOrForbidden } from "../db/ownership";
import { webhookDeliveries, webhooks, type Webhook, type WebhookDelivery } from "../db/schema";
import type { WebhookCreate, WebhookUpdate } from "./schemas";
import { prunePassedOutbox } from "./outbox";
import { sealSecret } from "./sealed-secrets";
import { generateWebhookSecret } from "./signing";

const WHAT = "webhook";
/** How long a rotated-out secret still signs deliveries. */
export const PREVIOUS_SECRET_MS = 24 * 60 * 60 * 1000;
/** The reason a webhook turned off with PUT `"enabled": false` shows. */
const DISABLED_BY_OWNER = "Disabled by its owner (PUT with enabled false)";

/** The enabled state a write asks for, as columns: re-enabling clears the failure record. */
function enabledColumns(enabled: boolean, now: number) {
  return enabled
    ? { disabled_at: null, disabled_reason: null, failures: 0, failing_since: null, next_attempt_at: null }
    : { disabled_at: new Date(now), disabled_reason: DISABLED_BY_OWNER };
}

/** Creates a webhook; returns it with its secret, shown only now (and stored sealed). */
export async function createWebhook(
  d1: D1Database,
  keys: SealingKeys,
  accountId: number,
  values: WebhookCreate,
  apiOrigin: string,
): Promise<{ row: Webhook; secret: string }> {
  const secret = generateWebhookSecret();
  const row = await database(d1)
    .insert(webhooks)
    .values({
      account_id: accountId,
      url: values.url,
      description: values.description,
      events: values.events,
      secret: await sealSecret(keys, accountId, secret),
      position: sql`(SELECT coalesce(max(id), 0) FROM webhook_outbox WHERE account_id = ${accountId})`,
      api_origin: apiOrigin,
      ...(values.enabled ? {} : enabledColumns(false, clock.now())),
    })
    .returning()
    .get();
  return { row, secret };
}

/** The account's webhook; 404 if there is none, 403 if it is another account's. */
export async function getWebhook(d1: D1Database, accountId: number, id: number): Promise<Webhook> {
  const row = await database(d1).select().from(webhooks).where(eq(webhooks.id, id)).get();
  return ownedOr404(row, accountId, WHAT, { table: webhooks, id });
}

/** One keyset page of the account's webhooks, over the `(account_id, id)` index. */
export async function pageWebhooks(d1: D1Database, accountId: number, bound: Bound, take: number): Promise<Webhook[]> {
  const { where, orderBy } = keyset([webhooks.id], bound);
  return database(d1)
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.account_id, accountId), where))
    .orderBy(...orderBy)
    .limit(take);
}

/** Scoped to the account: no row means missing or another account's, which the caller then explains. */
async function updateOwned(
  d1: D1Database,
  accountId: number,
  id: number,
  values: SQLiteUpdateSetSource<typeof webhooks>,
): Promise<Webhook> {
  const row = await database(d1)
    .update(webhooks)
    .set({ ...values, updated_at: new Date(clock.now()) })
    .where(and(eq(webhooks.id, id), eq(webhooks.account_id, accountId)))
    .returning()
    .get();
  return row ?? throwMissingOrForbidden(d1, webhooks, id, accountId, WHAT);
}

/**
 * Changes the fields given. Enabling a disabled webhook resumes its
 * deliveries where they stopped (its position is kept), at once: a retry
 * waiting for its time is due now.
 */
export async function updateWebhook(
  d1: D1Database,
  accountId: number,
  id: number,
  { enabled, ...values }: WebhookUpdate,
): Promise<Webhook> {
  const current = await getWebhook(d1, accountId, id);
  const toggled = enabled !== undefined && enabled !== (current.disabled_at === null);
  return updateOwned(d1, accountId, id, { ...values, ...(toggled ? enabledColumns(enabled, clock.now()) : {}) });
}

/** Deletes a webhook and its delivery record, and the outbox rows only it still waited for. */
export async function deleteWebhook(d1: D1Database, accountId: number, id: number): Promise<void> {
  const deleted = await database(d1)
    .delete(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.account_id, accountId)))
    .returning({ id: webhooks.id })
    .get();
  if (!deleted) await throwMissingOrForbidden(d1, webhooks, id, accountId, WHAT);
  await prunePassedOutbox(d1, accountId);
}

/**
 * A new signing secret (stored sealed); the current one keeps signing too for a day (one
 * previous secret: rotating again within the day drops the older one).
 */
export async function rotateSecret(
  d1: D1Database,
  keys: SealingKeys,
  accountId: number,
  id: number,
): Promise<{ secret: string; previousExpiresAt: Date }> {
  const secret = generateWebhookSecret();
  const previousExpiresAt = new Date(clock.now() + PREVIOUS_SECRET_MS);
  await updateOwned(d1, accountId, id, {
    secret: await sealSecret(keys, accountId, secret),
    previous_secret: sql`${webhooks.secret}`,
    previous_secret_expires_at: previousExpiresAt,
  });
  return { secret, previousExpiresAt };
}

/** One keyset page of a webhook's delivery attempts, newest first. */
export async function pageDeliveries(
  d1: D1Database,
  webhookId: number,
  bound: Bound,
  take: number,
): Promise<WebhookDelivery[]> {
  const { where, orderBy } = keyset([{ by: webhookDeliveries.id, descending: true }], bound);
  return database(d1)
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.webhook_id, webhookId), where))
    .orderBy(...orderBy)
    .limit(take);
}
