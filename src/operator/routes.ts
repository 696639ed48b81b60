/**
 * /operator: what `npm run accounts -- move` calls (docs/operations.md,
 * "Shards"), authenticated by the operator secret (./auth.ts) and kept out of
 * the API reference. Mounted before the request's D1 sessions, so `c.env.DB`
 * is the directory's own binding, read at the primary.
 *
 *   GET    /operator/shards                  the shards of this deployment
 *   GET    /operator/accounts/{account}      an account and the shard holding it
 *   POST   /operator/accounts/{account}/move {"to": SHARD}: the move, as NDJSON lines (./account-move.ts)
 *   DELETE /operator/accounts/{account}/move stops a running move at its next check
 *
 * `{account}` is an account's id, or its name (URL-encoded) when it is not all digits.
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import type { AppEnv, Bindings } from "../core/env";
import { ApiError, fieldError } from "../core/problem";
import { DIRECTORY, shardNames } from "../db/shard-plan";
import { jsonBody } from "../http/body";
import { hidden } from "../http/route-metadata";
import { validate } from "../http/validation";
import type { MovedAccount } from "./account-move";
import { requireOperator } from "./auth";

const moveBody = z.object({ to: z.string().min(1, "must name a shard") });

/** The account `{account}` names, from the directory; 404 when there is none. */
async function accountNamed(env: Bindings, named: string): Promise<MovedAccount> {
  const byId = /^[0-9]+$/.test(named);
  const row = await env.DB.prepare(`SELECT id, name, shard FROM accounts WHERE ${byId ? "id" : "name"} = ?`)
    .bind(byId ? Number(named) : named)
    .first<MovedAccount>();
  if (!row) throw new ApiError("not_found", `There is no account ${JSON.stringify(named)}.`);
  return row;
}

const moverOf = (env: Bindings, account: MovedAccount) => env.ACCOUNT_MOVES.getByName(String(account.id));

type AccountPath = "/accounts/:account";
type MovePath = "/accounts/:account/move";
type MoveInput = { in: { json: z.input<typeof moveBody> }; out: { json: z.output<typeof moveBody> } };

/** The move's lines, or 409 while another move of the account runs. */
async function startMove(c: Context<AppEnv, MovePath, MoveInput>): Promise<Response> {
  const { to } = c.req.valid("json");
  const shards = shardNames(c.env.SHARDS);
  if (!shards.includes(to)) throw fieldError("/to", `must be one of the shards: ${shards.join(", ")}`);
  const account = await accountNamed(c.env, c.req.param("account"));
  const move = await moverOf(c.env, account).start(account, to);
  if (!move.started) {
    throw new ApiError(
      "conflict",
      `A move of account ${account.id} to ${move.to} has been running since ${move.since}; ` +
        `wait for it, or stop it with DELETE ${c.req.path}.`,
    );
  }
  return c.body(move.lines, 200, {
    "Content-Type": "application/x-ndjson; charset=utf-8",
    // Lines must reach the client as they are written: no cache, and no proxy that compresses (buffers) them.
    "Cache-Control": "no-store, no-transform",
  });
}

/** 202 once the running move was told to stop; 404 when none runs. */
async function stopMove(c: Context<AppEnv, MovePath>): Promise<Response> {
  const account = await accountNamed(c.env, c.req.param("account"));
  if (!(await moverOf(c.env, account).cancel())) {
    throw new ApiError("not_found", `No move of account ${account.id} is running.`);
  }
  return c.json({ account: account.id, stopping: true }, 202);
}

export const operatorRoutes = new Hono<AppEnv>()
  .use(requireOperator, jsonBody())
  .get(
    "/shards",
    hidden(async (c: Context<AppEnv>) => c.json({ directory: DIRECTORY, shards: shardNames(c.env.SHARDS) })),
  )
  .get(
    "/accounts/:account",
    hidden(async (c: Context<AppEnv, AccountPath>) => c.json(await accountNamed(c.env, c.req.param("account")))),
  )
  .post("/accounts/:account/move", hidden(validate("json", moveBody)), hidden(startMove))
  .delete("/accounts/:account/move", hidden(stopMove));
