/**
 * Delivery of webhooks, driven from the outbox (src/webhooks/outbox.ts): one
 * row per write, with the object's state after that write, so every write is
 * delivered, however many follow it before its delivery. Each webhook keeps a
 * position (the last outbox `id` it was sent or skipped); a queue message
 * only says "deliver webhook N" (of account A: its database), and whoever handles
 * it sends the webhook's
 * rows after its position, oldest first, and moves the position past each
 * one its receiver acknowledged (2xx). A message that is lost (an isolate
 * ending between a commit and the enqueue) therefore loses nothing: the next
 * message for the webhook, or the hourly cron (src/index.ts), picks up from
 * the position. See docs/webhooks.md and docs/operations.md "Webhooks".
 *
 * Order: one consumer at a time delivers a webhook (a lease in its row), in
 * log order, and a failing change holds back the webhook's later ones: the
 * order per object holds, and a receiver that is down fails for every object
 * alike, so holding back only that object's changes would buy little.
 * At least once: the position moves only after the receiver's 2xx, so a
 * crash between its answer and the write sends that change again (the same
 * `webhook-id`, for receivers to deduplicate on).
 *
 * Failures: the message is retried with exponential backoff (30 s doubling to
 * an hour) for about a day; then the webhook is disabled with the reason,
 * here or by the dead-letter queue's consumer, whichever sees it first.
 */
import { actorsFor, type Actors } from "../auth/actor";
import { clock } from "../core/clock";
import { configFor } from "../core/config";
import { sealingKeys, type SealingKeys } from "../core/sealed";
import type { ChangeType, ObjectRows } from "../changes/store";
import { asAccount } from "../db/client";
import { rowMapper } from "../db/search/raw-rows";
import { webhooks, type Webhook, type WebhookOutboxRow } from "../db/schema";
import { mediaUrlsOn, type MediaUrl } from "../media/url";
import { subscribes, type EventType } from "./events";
import { hasOutboxAfter, outboxObject, prunePassedOutbox, pruneExpiredOutbox, readOutbox } from "./outbox";
import { openSecret } from "./sealed-secrets";
import { signedHeaders } from "./signing";
import { isLoopbackOrigin, resolvedTargetProblem, targetProblem } from "./targets";

/** What a queue message asks: deliver this webhook (of this account) from its position. */
export type WebhookMessage = { webhook: number; account: number };

/** How upserted objects are shown in payloads: as each resource's GET shows them (wired in src/app.ts). */
export type ObjectsJson = (
  mediaUrl: MediaUrl,
  actors: Actors,
) => { [K in ChangeType]: (row: ObjectRows[K]) => unknown };

/** The dead-letter queue's name in wrangler.toml: its batches disable webhooks instead of delivering. */
export const DEAD_LETTER_QUEUE = "poi-webhooks-dead";

/** Each attempt's limit: a receiver should answer at once and do its work later. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** No new attempt starts after this much of a pass; the rest goes to a new message. */
const PASS_MS = 30_000;
/** The lease outlasts a pass and its last attempt, so two consumers never deliver one webhook at once. */
const LEASE_MS = PASS_MS + ATTEMPT_TIMEOUT_MS + 20_000;
/** A retried message may arrive this much before its webhook's next attempt is due and still run it. */
const EARLY_MS = 10_000;
const READ_BATCH = 50;
const EXCERPT_CHARACTERS = 200;
const RETRY_BASE_SECONDS = 30;
const RETRY_MAX_SECONDS = 60 * 60;
/** A webhook failing this long is disabled. */
export const DISABLE_AFTER_MS = 24 * 60 * 60 * 1000;
/** Delivery attempts older than this are deleted by the cron. */
export const DELIVERY_HISTORY_MS = 7 * 24 * 60 * 60 * 1000;

/** The delay before retry number `failures` (1, 2, ...): 30 s doubling, at most an hour. */
export function backoffSeconds(failures: number): number {
  return Math.min(RETRY_BASE_SECONDS * 2 ** Math.max(0, failures - 1), RETRY_MAX_SECONDS);
}

const toWebhook = rowMapper(webhooks);

type Attempt = {
  succeeded: boolean;
  status: number | null;
  excerpt: string | null;
  error: string | null;
  latencyMs: number;
};

/**
 * The write's position among its account's changes (src/db/schema.ts `changes`): 1, 2, 3… for each
 * account alone, so no other account's writes show in it. A row written before positions existed has
 * the change log's sequence number, which the account's positions go on above.
 */
const positionOf = (entry: WebhookOutboxRow) => entry.position ?? entry.seq;

/**
 * The body of one event: Standard Webhooks' `type`, `timestamp` and `data`, with the write's `position`
 * and who made it (`actor`, src/auth/actor.ts).
 */
function payload(entry: WebhookOutboxRow, object: unknown, actors: Actors): string {
  return JSON.stringify({
    type: entry.event,
    timestamp: entry.created_at.toISOString(),
    data: {
      type: entry.type,
      id: entry.object_id,
      version: entry.version,
      deleted: entry.op === "delete",
      position: positionOf(entry),
      actor: actors.actor(entry.actor),
      object: object ?? null,
    },
  });
}

/**
 * The Standard Webhooks message id of one write to one webhook, the same at every attempt: of its
 * position (`p`, so it never equals an id of the earlier form), not of the outbox row, whose id every
 * account's writes move. A row written before positions existed keeps the id its attempts had.
 */
const messageIdOf = (hook: Webhook, entry: WebhookOutboxRow) =>
  entry.position === null ? `msg_${hook.id}_${entry.id}` : `msg_${hook.id}_p${entry.position}`;

/** Reads at most `limit` characters of a response body, so a huge answer costs nothing. */
async function excerpt(response: Response, limit: number): Promise<string | null> {
  if (!response.body) return null;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (text.length < limit) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel().catch(() => undefined);
  return text.slice(0, limit);
}

/** A webhook's secrets as opened (sealed-secrets.ts): null where one cannot be read. */
type Secrets = { secret: string | null; previous: string | null };

const unreadableSecret = (hook: Webhook) =>
  "The webhook's signing secret cannot be read: it was sealed under a TOKEN_SIGNING_KEY this service no " +
  `longer has. Rotate it (POST /v3.0/webhooks/${hook.id}/rotate) and give the receiver the new one.`;

async function openSecrets(keys: SealingKeys, hook: Webhook): Promise<Secrets> {
  const [secret, previous] = await Promise.all([
    openSecret(keys, hook.account_id, hook.secret),
    hook.previous_secret === null ? null : openSecret(keys, hook.account_id, hook.previous_secret),
  ]);
  return { secret, previous };
}

/**
 * The secrets a delivery is signed with now: the current one, and the previous one for its day (left
 * out if it cannot be read); null if the current one cannot be read.
 */
function secretsOf(hook: Webhook, secrets: Secrets, now: number): string[] | null {
  if (secrets.secret === null) return null;
  const previousValid = secrets.previous !== null && (hook.previous_secret_expires_at?.getTime() ?? 0) > now;
  return previousValid ? [secrets.secret, secrets.previous!] : [secrets.secret];
}

/** POSTs one event, checking its target first; never throws. */
async function attempt(
  env: Cloudflare.Env,
  hook: Webhook,
  secrets: Secrets,
  id: string,
  body: string,
): Promise<Attempt> {
  const started = clock.now();
  const failed = (error: string): Attempt => ({
    succeeded: false,
    status: null,
    excerpt: null,
    error,
    latencyMs: clock.now() - started,
  });
  const allowLoopback = configFor(env).webhooksAllowLoopback && isLoopbackOrigin(hook.api_origin);
  const refused = targetProblem(hook.url, allowLoopback);
  if (refused) return failed(`The URL ${refused}`);
  const signing = secretsOf(hook, secrets, started);
  if (!signing) return failed(unreadableSecret(hook));
  try {
    const resolved = await resolvedTargetProblem(new URL(hook.url).hostname);
    if (resolved) return failed(resolved);
    const headers = await signedHeaders(signing, id, Math.floor(started / 1000), body);
    const response = await fetch(hook.url, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json", "User-Agent": "poi-content-api-webhooks" },
      body,
      // A redirect could lead anywhere, a private address included: it is a failure, not followed.
      redirect: "manual",
      signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
    });
    const text = await excerpt(response, EXCERPT_CHARACTERS).catch(() => null);
    return {
      succeeded: response.status >= 200 && response.status < 300,
      status: response.status,
      excerpt: text,
      error: response.status >= 300 && response.status < 400 ? "Redirects are not followed" : null,
      latencyMs: clock.now() - started,
    };
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === "TimeoutError";
    return failed(timedOut ? `No answer within ${ATTEMPT_TIMEOUT_MS / 1000} s` : `Request failed: ${String(error)}`);
  }
}

function describe(result: Attempt): string {
  return result.status === null ? result.error! : `HTTP ${result.status}`;
}

/**
 * One pass over a webhook: takes its lease, sends its pending outbox rows in
 * commit order until one fails, none is left or the pass has run long
 * enough, then deletes the rows every webhook of the account has passed.
 * Returns the seconds until the failed write is retried, or null.
 */
export async function deliverWebhook(
  env: Cloudflare.Env,
  objectsJson: ObjectsJson,
  webhookId: number,
): Promise<{ retryInSeconds: number | null }> {
  const now = clock.now();
  const leased = await env.DB.prepare(
    `UPDATE webhooks SET lease_until = ?1 WHERE id = ?2 AND disabled_at IS NULL
      AND (lease_until IS NULL OR lease_until < ?3) AND (next_attempt_at IS NULL OR next_attempt_at <= ?4)
      RETURNING *`,
  )
    .bind(now + LEASE_MS, webhookId, now, now + EARLY_MS)
    .first<Record<string, unknown>>();
  // Deleted, disabled, another consumer's, or waiting for its retry: that one carries on.
  if (!leased) return { retryInSeconds: null };
  const hook = toWebhook(leased);
  const secrets = await openSecrets(await sealingKeys(env), hook);
  const config = configFor(env);
  const mediaUrl = mediaUrlsOn(config.publicOrigin ?? hook.api_origin, config.mediaPublicBaseUrl);
  let position = hook.position;
  let failure: { entry: WebhookOutboxRow; result: Attempt } | null = null;
  let more = false;
  // The first write sent is the one that failed before, if any: its attempt number goes on.
  let attemptNumber = hook.failures + 1;
  try {
    pass: for (;;) {
      const entries = await readOutbox(env.DB, hook.account_id, position, READ_BATCH);
      // The objects of a read as their GET shows them; who wrote them and each write: one directory query.
      const rows = new Map(
        entries.map((entry) => [entry, entry.object ? outboxObject[entry.type](entry.object) : null]),
      );
      const actors = await actorsFor(
        env.DB,
        hook.account_id,
        [...rows.values()].filter((row) => row !== null),
        entries.map((entry) => entry.actor),
      );
      const toJson = objectsJson(mediaUrl, actors);
      for (const entry of entries) {
        if (clock.now() - now > PASS_MS) {
          more = true;
          break pass;
        }
        if (subscribes(hook.events, entry.event as EventType)) {
          const row = rows.get(entry);
          const object = row ? (toJson[entry.type] as (row: unknown) => unknown)(row) : null;
          const result = await attempt(env, hook, secrets, messageIdOf(hook, entry), payload(entry, object, actors));
          if (!result.succeeded) {
            failure = { entry, result };
            break pass;
          }
          await recordAttempt(env.DB, hook, entry, result, attemptNumber, null, entry.id);
          attemptNumber = 1;
        }
        position = entry.id;
      }
      if (entries.length < READ_BATCH) break;
    }
  } finally {
    if (!failure) {
      await env.DB.prepare(
        `UPDATE webhooks SET position = max(position, ?1), lease_until = NULL, failures = 0, failing_since = NULL,
          next_attempt_at = NULL WHERE id = ?2`,
      )
        .bind(position, hook.id)
        .run();
    }
  }
  const retryInSeconds = failure ? await recordFailure(env.DB, hook, position, failure, now) : null;
  if (position > hook.position) await prunePassedOutbox(env.DB, hook.account_id);
  if (failure) return { retryInSeconds };
  if (more || (await hasOutboxAfter(env.DB, hook.account_id, position))) {
    // Writes committed during the pass, whose messages found the lease taken and were dropped.
    await env.WEBHOOK_QUEUE.send({ webhook: hook.id, account: hook.account_id } satisfies WebhookMessage);
  }
  return { retryInSeconds: null };
}

/** Records an attempt at `entry` and, in the same batch, moves the webhook's position to `position`. */
async function recordAttempt(
  d1: D1Database,
  hook: Webhook,
  entry: WebhookOutboxRow,
  result: Attempt,
  attemptNumber: number,
  nextRetryAt: number | null,
  position: number,
): Promise<void> {
  await d1.batch([
    d1
      .prepare(
        `INSERT INTO webhook_deliveries (webhook_id, message_id, seq, event, object_id, attempt, succeeded,
          response_status, response_excerpt, error, latency_ms, next_retry_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        hook.id,
        messageIdOf(hook, entry),
        positionOf(entry),
        entry.event,
        entry.object_id,
        attemptNumber,
        result.succeeded ? 1 : 0,
        result.status,
        result.excerpt,
        result.error,
        result.latencyMs,
        nextRetryAt,
      ),
    d1.prepare("UPDATE webhooks SET position = max(position, ?1) WHERE id = ?2").bind(position, hook.id),
  ]);
}

/**
 * Records a failed attempt and schedules the next one; after a day of
 * failures disables the webhook instead. Returns the retry delay, or null
 * when disabled.
 */
async function recordFailure(
  d1: D1Database,
  hook: Webhook,
  position: number,
  { entry, result }: { entry: WebhookOutboxRow; result: Attempt },
  now: number,
): Promise<number | null> {
  const failures = hook.failures + 1;
  const failingSince = hook.failing_since?.getTime() ?? now;
  const disable = now - failingSince >= DISABLE_AFTER_MS;
  const delay = backoffSeconds(failures);
  const nextAttempt = disable ? null : now + delay * 1000;
  await recordAttempt(d1, hook, entry, result, failures, nextAttempt, position);
  const reason = disable
    ? `Deliveries failed for a day (since ${new Date(failingSince).toISOString()}, ${failures} attempts); ` +
      `the last: ${describe(result)}`
    : null;
  await d1
    .prepare(
      `UPDATE webhooks SET lease_until = NULL, failures = ?1, failing_since = ?2, next_attempt_at = ?3,
        disabled_at = CASE WHEN ?4 IS NULL THEN disabled_at ELSE ?5 END, disabled_reason = coalesce(?4, disabled_reason)
        WHERE id = ?6`,
    )
    .bind(failures, failingSince, nextAttempt, reason, now, hook.id)
    .run();
  return disable ? null : delay;
}

/**
 * The dead-letter queue's consumer: a message whose retries ran out. A
 * webhook still failing is disabled with the reason; one that recovered
 * meanwhile (its message died for another cause) is left alone, and the
 * cron resumes it.
 */
export async function disableDeadLettered(env: Cloudflare.Env, webhookId: number): Promise<void> {
  const now = clock.now();
  const last = await env.DB.prepare(
    `SELECT response_status, error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT 1`,
  )
    .bind(webhookId)
    .first<{ response_status: number | null; error: string | null }>();
  const lastText = last ? (last.response_status === null ? last.error : `HTTP ${last.response_status}`) : "unknown";
  await env.DB.prepare(
    `UPDATE webhooks SET disabled_at = ?1, next_attempt_at = NULL, lease_until = NULL,
      disabled_reason = 'Deliveries failed for a day (since ' || strftime('%Y-%m-%dT%H:%M:%fZ', failing_since / 1000.0, 'unixepoch')
        || ', ' || failures || ' attempts); the retries ran out (dead-lettered); the last: ' || ?2
      WHERE id = ?3 AND disabled_at IS NULL AND failing_since IS NOT NULL`,
  )
    .bind(now, lastText, webhookId)
    .run();
}

type Named = { id: number; account_id: number };

/** Sends one message per webhook named, in batches of the Queues limit (100). */
export async function enqueue(env: Cloudflare.Env, hooks: readonly Named[]): Promise<void> {
  for (let i = 0; i < hooks.length; i += 100) {
    await env.WEBHOOK_QUEUE.sendBatch(
      hooks
        .slice(i, i + 100)
        .map((hook) => ({ body: { webhook: hook.id, account: hook.account_id } satisfies WebhookMessage })),
    );
  }
}

/**
 * How long an isolate trusts what it read of an account's enabled webhooks
 * before nudging them after a write (docs/webhooks.md). Within it a write
 * reads nothing more: an account without webhooks pays one read per isolate
 * and period, not one per write. A webhook created or re-enabled elsewhere in
 * the meantime misses nothing: its rows are in the outbox, and the message
 * sent for it one period later (webhookChanged) delivers them.
 */
export const NUDGE_CACHE_MS = 30_000;
/** Accounts remembered per isolate; the least recently read is forgotten first. */
const NUDGE_CACHE_ACCOUNTS = 10_000;
const enabledWebhooks = new Map<number, { hooks: Named[]; until: number }>();

/** After a write: a message for each enabled webhook of the account, so its write goes out at once. */
export async function nudgeAccount(env: Cloudflare.Env, accountId: number): Promise<void> {
  const now = clock.now();
  let known = enabledWebhooks.get(accountId);
  if (!known || known.until <= now) {
    const { results } = await env.DB.prepare(
      "SELECT id, account_id FROM webhooks WHERE account_id = ? AND disabled_at IS NULL",
    )
      .bind(accountId)
      .all<Named>();
    known = { hooks: results, until: now + NUDGE_CACHE_MS };
    enabledWebhooks.delete(accountId);
    enabledWebhooks.set(accountId, known);
    if (enabledWebhooks.size > NUDGE_CACHE_ACCOUNTS) enabledWebhooks.delete(enabledWebhooks.keys().next().value!);
  }
  await enqueue(env, known.hooks);
}

/**
 * After a webhook was created, changed or deleted: this isolate reads the
 * account's webhooks again at its next write; a webhook that can deliver now
 * is sent a message at once, for what waits already, and one more after
 * every isolate's cache has expired, for writes whose isolates did not know it.
 */
export async function webhookChanged(env: Cloudflare.Env, accountId: number, enabledId: number | null): Promise<void> {
  enabledWebhooks.delete(accountId);
  if (enabledId === null) return;
  const body = { webhook: enabledId, account: accountId } satisfies WebhookMessage;
  await env.WEBHOOK_QUEUE.sendBatch([{ body }, { body, delaySeconds: NUDGE_CACHE_MS / 1000 + 5 }]);
}

/**
 * The cron's recovery: a message for every enabled webhook with writes past
 * its position whose retry (if any) is due, in case a message was lost;
 * deletion of delivery attempts older than a week, and of outbox rows older
 * than `outboxRetentionMs` that a disabled or failing webhook still holds. On
 * the database `env.DB` names: the cron runs it on each one that holds
 * content (src/index.ts).
 */
export async function resumeWebhooks(
  env: Cloudflare.Env,
  now: number,
  outboxRetentionMs: number,
): Promise<{ resumed: number; pruned: number; outboxPruned: number }> {
  const { results } = await env.DB.prepare(
    `SELECT id, account_id FROM webhooks w WHERE disabled_at IS NULL AND (next_attempt_at IS NULL OR next_attempt_at <= ?1)
      AND EXISTS (SELECT 1 FROM webhook_outbox o WHERE o.account_id = w.account_id AND o.id > w.position)`,
  )
    .bind(now)
    .all<Named>();
  await enqueue(env, results);
  const pruned = await env.DB.prepare("DELETE FROM webhook_deliveries WHERE created_at < ?")
    .bind(now - DELIVERY_HISTORY_MS)
    .run();
  const outboxPruned = await pruneExpiredOutbox(env.DB, now - outboxRetentionMs);
  return { resumed: results.length, pruned: pruned.meta.changes, outboxPruned };
}

/**
 * The Worker's queue handler: delivers (or, on the dead-letter queue, disables) each webhook named
 * once, on the database that holds its account's content.
 */
export async function handleWebhookBatch(
  batch: MessageBatch<WebhookMessage>,
  env: Cloudflare.Env,
  objectsJson: ObjectsJson,
  waitUntil: (promise: Promise<unknown>) => void,
): Promise<void> {
  const seen = new Set<number>();
  for (const message of batch.messages) {
    const { webhook: id, account } = message.body;
    if (batch.queue === DEAD_LETTER_QUEUE) {
      await asAccount(env, account, waitUntil, (accountEnv) => disableDeadLettered(accountEnv, id));
      message.ack();
      continue;
    }
    // Several messages for one webhook in a batch: the first one's pass sends everything.
    if (seen.has(id)) {
      message.ack();
      continue;
    }
    seen.add(id);
    try {
      const { retryInSeconds } = await asAccount(env, account, waitUntil, (accountEnv) =>
        deliverWebhook(accountEnv, objectsJson, id),
      );
      if (retryInSeconds === null) message.ack();
      else message.retry({ delaySeconds: retryInSeconds });
    } catch (error) {
      // This message alone, once a lease it may hold has run out (the account paused by a move, a
      // database error): the batch's other webhooks are not sent again.
      console.error(
        JSON.stringify({ level: "error", message: "webhook delivery failed", webhook: id, error: String(error) }),
      );
      message.retry({ delaySeconds: Math.ceil(LEASE_MS / 1000) });
    }
  }
}
