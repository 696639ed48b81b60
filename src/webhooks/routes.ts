/**
 * /v3.0/webhooks: where an account's changes are POSTed as they commit,
 * signed per Standard Webhooks (docs/webhooks.md). Managed with an access
 * token; another account's webhook is 403, a missing one 404. Delivery itself
 * is in deliver.ts.
 */
import type { Context, MiddlewareHandler } from "hono";
import { resourceApp } from "../auth/resource-app";
import type { AppEnv } from "../core/env";
import { fieldError } from "../core/problem";
import { sealingKeys } from "../core/sealed";
import { ID, pathId } from "../http/path";
import { pageOf, paginate, pageQuery } from "../http/pagination";
import { created } from "../http/responses";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { nudgeAccount, webhookChanged } from "./deliver";
import { deliveryToJson, webhookToJson } from "./json";
import {
  createdWebhookJson,
  deliveryJson,
  rotatedSecretJson,
  webhookCreate,
  webhookJson,
  webhookUpdate,
} from "./schemas";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  pageDeliveries,
  pageWebhooks,
  rotateSecret,
  updateWebhook,
} from "./store";
import { isLoopbackOrigin, targetProblem } from "./targets";

const WHAT = "webhook";

const WRITE_DESCRIPTION =
  "`url` must be https on a public host (never a private, loopback or link-local address). " +
  "Each write of the account's pinpoints, lists, categories and events is POSTed to it, one event per write " +
  "with the object as that write left it, in commit order per object, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), " +
  "retried with backoff for about a day; a webhook failing for a day is disabled and says why.";

const operations = {
  list: operation({
    summary: "List your webhooks",
    operationId: "listWebhooks",
    tags: ["webhooks"],
    responses: { 200: pageOf(webhookJson) },
  }),
  create: operation({
    summary: "Create a webhook",
    description: `${WRITE_DESCRIPTION} The signing \`secret\` is in the answer once.`,
    operationId: "createWebhook",
    tags: ["webhooks"],
    examples: {
      "application/json": { url: "https://hooks.example.com/poi", events: ["pinpoint.created", "pinpoint.updated"] },
    },
    responses: { 201: createdWebhookJson },
  }),
  get: operation({
    summary: "Get a webhook",
    description: "Without its secret, which is shown only when it is created or rotated.",
    operationId: "getWebhook",
    tags: ["webhooks"],
    responses: { 200: webhookJson },
  }),
  update: operation({
    summary: "Change a webhook",
    description:
      `Only the fields sent change. ${WRITE_DESCRIPTION} ` +
      '`"enabled": true` re-enables a disabled webhook: it resumes where it stopped.',
    operationId: "updateWebhook",
    tags: ["webhooks"],
    examples: { "application/json": { enabled: true } },
    responses: { 200: webhookJson },
  }),
  delete: operation({
    summary: "Delete a webhook",
    operationId: "deleteWebhook",
    tags: ["webhooks"],
    responses: { 204: { description: "Deleted" } },
  }),
  rotate: operation({
    summary: "Rotate a webhook's signing secret",
    description:
      "A new secret, shown once. For 24 hours deliveries carry a signature with the old secret as well, " +
      "so receivers can switch without losing one.",
    operationId: "rotateWebhookSecret",
    tags: ["webhooks"],
    responses: { 200: rotatedSecretJson },
  }),
  deliveries: operation({
    summary: "Recent delivery attempts of a webhook",
    description:
      "Newest first, kept for 7 days: the event, the receiver's status code and the start of its answer, the " +
      "time taken, and when a failed attempt is retried.",
    operationId: "listWebhookDeliveries",
    tags: ["webhooks"],
    responses: { 200: pageOf(deliveryJson) },
  }),
};

/** 400 unless the URL is a target webhooks may deliver to (targets.ts), from this API's origin. */
function assertTarget(c: Context<AppEnv>, url: string | undefined): void {
  if (url === undefined) return;
  const origin = new URL(c.req.url).origin;
  const problem = targetProblem(url, c.var.config.webhooksAllowLoopback && isLoopbackOrigin(origin));
  if (problem) throw fieldError("/url", problem);
}

export const webhookRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", pageQuery), async (c) =>
      c.json(
        await paginate(c, {
          collection: "webhooks",
          query: c.req.valid("query"),
          fetch: (bound, take) => pageWebhooks(c.env.DB, c.var.principal.accountId, bound, take),
          toJson: webhookToJson,
        }),
      ),
    ),
  )
  .post(
    "/",
    ...operations.create(validate("json", webhookCreate), async (c) => {
      const body = c.req.valid("json");
      assertTarget(c, body.url);
      const origin = new URL(c.req.url).origin;
      const { accountId } = c.var.principal;
      const { row, secret } = await createWebhook(c.env.DB, await sealingKeys(c.env), accountId, body, origin);
      await afterResponse(c, webhookChanged(c.env, accountId, row.disabled_at === null ? row.id : null));
      c.header("Cache-Control", "no-store");
      return created(c, `/v3.0/webhooks/${row.id}`, { ...webhookToJson(row), secret });
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(async (c) =>
      c.json(webhookToJson(await getWebhook(c.env.DB, c.var.principal.accountId, pathId(c, WHAT)))),
    ),
  )
  .put(
    `/${ID}`,
    ...operations.update(validate("json", webhookUpdate), async (c) => {
      const body = c.req.valid("json");
      assertTarget(c, body.url);
      const { accountId } = c.var.principal;
      const row = await updateWebhook(c.env.DB, accountId, pathId(c, WHAT), body);
      // Re-enabled, or pointed elsewhere: deliver what waits now rather than at the next write or cron.
      await afterResponse(c, webhookChanged(c.env, accountId, row.disabled_at === null ? row.id : null));
      return c.json(webhookToJson(row));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.delete(async (c) => {
      const { accountId } = c.var.principal;
      await deleteWebhook(c.env.DB, accountId, pathId(c, WHAT));
      await afterResponse(c, webhookChanged(c.env, accountId, null));
      return c.body(null, 204);
    }),
  )
  .post(
    `/${ID}/rotate`,
    ...operations.rotate(async (c) => {
      const keys = await sealingKeys(c.env);
      const { secret, previousExpiresAt } = await rotateSecret(
        c.env.DB,
        keys,
        c.var.principal.accountId,
        pathId(c, WHAT),
      );
      c.header("Cache-Control", "no-store");
      return c.json({ secret, previous_secret_expires_at: previousExpiresAt.toISOString() });
    }),
  )
  .get(
    `/${ID}/deliveries`,
    ...operations.deliveries(validate("query", pageQuery), async (c) => {
      const id = pathId(c, WHAT);
      await getWebhook(c.env.DB, c.var.principal.accountId, id);
      return c.json(
        await paginate(c, {
          collection: `webhooks/${id}/deliveries`,
          query: c.req.valid("query"),
          fetch: (bound, take) => pageDeliveries(c.env.DB, id, bound, take),
          toJson: deliveryToJson,
        }),
      );
    }),
  );

/**
 * Lets `work` finish after the response when the runtime gives a context to
 * wait on; without one (the app called directly, as some tests do) waits for
 * it. A failure is logged, never the request's: what `work` sends, the cron
 * sends again (deliver.ts).
 */
async function afterResponse(c: Context<AppEnv>, work: Promise<void>): Promise<void> {
  work = work.catch((error: unknown) =>
    console.error(JSON.stringify({ level: "error", message: "webhook message failed", error: String(error) })),
  );
  let context: ExecutionContext | undefined;
  try {
    context = c.executionCtx as ExecutionContext;
  } catch {
    context = undefined;
  }
  if (context) context.waitUntil(work);
  else await work;
}

/**
 * After a successful write with an access token (a client's or a person's: any 2xx answer to a method other than
 * GET, HEAD or OPTIONS), a message for each of its account's enabled
 * webhooks, sent after the response: the write is delivered within seconds.
 * Which webhooks those are is read at most once per NUDGE_CACHE_MS per
 * isolate (deliver.ts). A message lost here is made up for by the cron, so
 * nothing waits on it.
 */
export const nudgeWebhooks: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const method = c.req.method;
  if (method === "GET" || method === "HEAD" || method === "OPTIONS" || c.res.status >= 300) return;
  const principal = c.get("principal") as AppEnv["Variables"]["principal"] | undefined;
  if (principal === undefined || principal.kind === "key") return;
  await afterResponse(c, nudgeAccount(c.env, principal.accountId));
};
