/**
 * /v3.0/auth/session and /v3.0/auth/token: what a signed-in page needs of
 * its session. The session's CSRF token, for the writes it makes with the
 * cookie (./sessions.ts), and a person's access token for the account the
 * session acts in, with which the page calls every other /v3.0 operation as
 * a client would (src/auth/person-token.ts).
 */
import { Hono } from "hono";
import * as z from "zod";
import { personStanding } from "../auth/person-status";
import { mintPersonToken } from "../auth/person-token";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { signingKeys } from "../core/signing";
import { operation } from "../http/route-metadata";
import { csrfTokenOf, requireSession } from "./sessions";

const sessionJson = z
  .object({
    person_id: z.int(),
    account_id: z.int().nullable().meta({ description: "The account the session acts in; null: none yet" }),
    second_factor: z.enum(["none", "pending", "done"]),
    created_at: z.iso.datetime(),
    csrf_token: z.string().meta({ description: "Send it as `X-CSRF-Token` with every write made with the cookie" }),
  })
  .meta({ id: "Session" });

const personTokenJson = z
  .object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.int().meta({ description: "Seconds until the token expires; mint another before" }),
    scope: z.string(),
  })
  .meta({ id: "PersonToken" });

const SESSION_ERRORS = [401, 403];

const operations = {
  session: operation({
    summary: "Your signed-in session",
    description: "With the session cookie. Gives the CSRF token that writes made with the cookie must carry.",
    operationId: "getSession",
    tags: ["auth"],
    responses: { 200: sessionJson },
    errors: SESSION_ERRORS,
  }),
  token: operation({
    summary: "Mint an access token from your session",
    description:
      "With the session cookie and `X-CSRF-Token`: a short-lived access token for the account the session acts " +
      "in, for `Authorization: Bearer` on every other operation, narrowed by your role there.",
    operationId: "mintPersonToken",
    tags: ["auth"],
    responses: { 200: personTokenJson },
    errors: SESSION_ERRORS,
  }),
};

// No body rules here: neither route reads a body, and they would apply to /v3.0/auth/passkeys too.
export const sessionRoutes = new Hono<AppEnv>()
  .get(
    "/session",
    ...operations.session(requireSession({ allowPending: true }), async (c) => {
      const { session } = c.var;
      c.header("Cache-Control", "no-store");
      return c.json({
        person_id: session.personId,
        account_id: session.accountId,
        second_factor: session.secondFactor,
        created_at: new Date(session.createdAt).toISOString(),
        csrf_token: await csrfTokenOf(c.env, session.id),
      });
    }),
  )
  .post(
    "/token",
    ...operations.token(requireSession(), async (c) => {
      const { session } = c.var;
      const standing =
        session.accountId === null
          ? null
          : await personStanding(c.env.DB, session.personId, session.id, session.accountId, clock.now());
      if (session.accountId === null || standing === null) {
        throw new ApiError("forbidden", "You are not a member of an account, nor a collaborator on one of its lists.");
      }
      const { token, expiresIn } = await mintPersonToken((await signingKeys(c.env)).current, {
        personId: session.personId,
        sessionId: session.id,
        accountId: session.accountId,
        scope: "read write",
      });
      c.header("Cache-Control", "no-store");
      return c.json({ access_token: token, token_type: "Bearer" as const, expires_in: expiresIn, scope: "read write" });
    }),
  );
