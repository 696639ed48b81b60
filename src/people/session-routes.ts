/**
 * /v3.0/auth: what a signed-in page needs of its session, and the passkeys
 * (./passkeys-routes.ts), behind the request body rules (src/http/body.ts).
 * GET /v3.0/auth/session gives the session's CSRF token, for the writes the
 * page makes with the cookie (./csrf.ts); POST /v3.0/auth/token mints a
 * person's access token for an account the session's person is in, with
 * which the page calls every other /v3.0 operation as a client would
 * (src/auth/person-token.ts).
 */
import { Hono, type Context } from "hono";
import * as z from "zod";
import { personStanding } from "../auth/person-status";
import { mintPersonToken } from "../auth/person-token";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError, fieldError } from "../core/problem";
import { signingKeys } from "../core/signing";
import * as field from "../fields/schemas";
import { jsonBody } from "../http/body";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { csrfToken } from "./csrf";
import { passkeyRoutes } from "./passkeys-routes";
import { requireSession } from "./sessions";

const sessionJson = z
  .object({
    person: z
      .object({ id: z.int(), email: z.string(), name: z.string() })
      .nullable()
      .meta({ description: "Null while the second factor is pending" }),
    csrf_token: z.string().meta({ description: "Send it as `X-CSRF-Token` with every write made with the cookie" }),
  })
  .meta({ id: "SignedInSession" });

const tokenBody = z
  .object({
    account: field.id
      .optional()
      .meta({ description: "The account to act in; absent, the session's, or your only one" }),
  })
  .meta({ id: "PersonTokenRequest" });

const personTokenJson = z
  .object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.int().meta({ description: "Seconds; mint a new one from the session before then" }),
    scope: z.string(),
    account: z.int().meta({ description: "The account the token acts in" }),
  })
  .meta({ id: "PersonToken" });

const operations = {
  session: operation({
    summary: "Your signed-in session",
    description: "With the session cookie: who is signed in, and the CSRF token writes with the cookie carry.",
    operationId: "getSession",
    tags: ["people"],
    responses: { 200: sessionJson },
    errors: [401],
  }),
  token: operation({
    summary: "Mint an access token from your session",
    description:
      "With the session cookie and `X-CSRF-Token`: a short-lived access token for one of your accounts, for " +
      "`Authorization: Bearer` on every other operation, narrowed by your role there.",
    operationId: "mintPersonToken",
    tags: ["people"],
    examples: { "application/json": {} },
    responses: { 200: personTokenJson },
    errors: [401, 403],
  }),
};

/** The account a token is asked for: the one named, the session's, or the person's only one. */
async function tokenAccount(c: Context<AppEnv>, named: number | undefined): Promise<number> {
  const chosen = named ?? c.var.session.accountId;
  if (chosen !== null) return chosen;
  const { results } = await c.env.DB.prepare("SELECT account_id FROM members WHERE person_id = ?")
    .bind(c.var.session.personId)
    .all<{ account_id: number }>();
  if (results.length === 1) return results[0]!.account_id;
  throw fieldError("/account", results.length === 0 ? "you are in no account yet" : "name the account to act in");
}

export const sessionRoutes = new Hono<AppEnv>()
  .use(jsonBody())
  .get(
    "/session",
    ...operations.session(requireSession({ allowPending: true }), async (c) => {
      const { session } = c.var;
      const person =
        session.secondFactor === "pending"
          ? null
          : await c.env.DB.prepare("SELECT id, email, name FROM people WHERE id = ?")
              .bind(session.personId)
              .first<{ id: number; email: string; name: string }>();
      c.header("Cache-Control", "no-store");
      return c.json({ person, csrf_token: await csrfToken(c.env, session.id) });
    }),
  )
  .post(
    "/token",
    ...operations.token(requireSession(), validate("json", tokenBody), async (c) => {
      const { session } = c.var;
      const accountId = await tokenAccount(c, c.req.valid("json").account);
      const standing = await personStanding(c.env.DB, session.personId, session.id, accountId, clock.now());
      if (!standing) throw new ApiError("forbidden", `You are not in account ${accountId}.`);
      const { token, expiresIn } = await mintPersonToken((await signingKeys(c.env)).current, {
        personId: session.personId,
        sessionId: session.id,
        accountId,
        scope: "read write",
      });
      c.header("Cache-Control", "no-store");
      return c.json({
        access_token: token,
        token_type: "Bearer" as const,
        expires_in: expiresIn,
        scope: "read write",
        account: accountId,
      });
    }),
  )
  .route("/passkeys", passkeyRoutes);
