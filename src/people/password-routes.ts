/**
 * /v3.0/auth/password: changing one's password (with the current one), and
 * setting a new one with a reset link (./reset-tickets.ts). Either way every
 * other session of the person ends: whoever knew the old password is out.
 */
import { Hono } from "hono";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError, fieldError } from "../core/problem";
import { limitSignInAttempt, signInRatePolicy } from "../http/middleware/rate-limit";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { assertSameOrigin } from "./csrf";
import { sessionToJson } from "./json";
import { passwordProblem } from "./password-policy";
import { hashPassword, verifyPassword } from "./passwords";
import { passwordChangeBody, passwordResetBody, sessionJson } from "./schemas";
import { requireSession, rotateSession, sessionPerson } from "./sessions";
import { ticketIdOf } from "./tickets";

/** A reset link's secret as a path segment: 32 bytes, base64url. */
const TOKEN = ":token{[A-Za-z0-9_-]{43}}";

const operations = {
  change: operation({
    summary: "Change your password",
    description:
      "Needs the current password (unless you have none yet: then this sets one). Every other session of " +
      "yours ends, and this one is replaced by a new one (new cookie and CSRF token).",
    operationId: "changePassword",
    tags: ["people"],
    examples: {
      "application/json": {
        current_password: "a long phrase only you know",
        new_password: "a new phrase only you know",
      },
    },
    responses: {
      200: sessionJson,
      400: { description: "`invalid_credentials`: the current password is wrong; or `validation_failed`" },
    },
    errors: [429],
  }),
  reset: operation({
    summary: "Set a new password with a reset link",
    description:
      "The link's secret (an administrator issues it: `npm run people -- reset`) is good once, for 24 " +
      "hours. Every session of the person ends; sign in with the new password.",
    operationId: "resetPassword",
    tags: ["people"],
    pathParams: {
      token: { description: "The secret of the reset link", example: "KITe1rK5yG_5EB15zJU-oSMZWGERamGeHY7B5CyMwnw" },
    },
    examples: { "application/json": { password: "a new phrase only you know" } },
    responses: { 204: { description: "The password is set" } },
    errors: [403, 429],
  }),
};

export const passwordRoutes = new Hono<AppEnv>()
  .put(
    "/password",
    signInRatePolicy(),
    ...operations.change(requireSession(), validate("json", passwordChangeBody), async (c) => {
      const body = c.req.valid("json");
      const person = await sessionPerson(c);
      const problem = passwordProblem(body.new_password, person.email);
      if (problem) throw fieldError("/new_password", problem);
      if (person.password_hash !== null) {
        if (body.current_password === undefined) throw fieldError("/current_password", "is required");
        await limitSignInAttempt(c, `person:${person.id}`);
        if (!(await verifyPassword(body.current_password, person.password_hash)).matches) {
          throw new ApiError("invalid_credentials", "The current password is wrong.", {
            errors: [{ pointer: "/current_password", detail: "does not match" }],
          });
        }
      }
      const hash = await hashPassword(body.new_password);
      const db = c.env.DB;
      const now = clock.now();
      await rotateSession(c, {}, [
        db.prepare("UPDATE people SET password_hash = ?, updated_at = ? WHERE id = ?").bind(hash, now, person.id),
        db
          .prepare("UPDATE sessions SET revoked_at = ? WHERE person_id = ? AND revoked_at IS NULL AND id <> ?")
          .bind(now, person.id, c.var.session.id),
      ]);
      c.header("Cache-Control", "no-store");
      return c.json(await sessionToJson(c));
    }),
  )
  .post(
    `/password-reset/${TOKEN}`,
    signInRatePolicy(),
    ...operations.reset(validate("json", passwordResetBody), async (c) => {
      assertSameOrigin(c);
      await limitSignInAttempt(c, null);
      const db = c.env.DB;
      const id = await ticketIdOf(c.req.param("token")!);
      const now = clock.now();
      const ticket = await db
        .prepare(
          `SELECT t.person_id, p.email FROM auth_tickets t JOIN people p ON p.id = t.person_id
            WHERE t.id = ? AND t.kind = 'reset' AND t.used_at IS NULL AND t.expires_at > ?`,
        )
        .bind(id, now)
        .first<{ person_id: number; email: string }>();
      const unusable = () =>
        new ApiError("not_found", "This reset link is unknown, was used, or has expired; ask for a new one.");
      if (!ticket) throw unusable();
      const { password } = c.req.valid("json");
      const problem = passwordProblem(password, ticket.email);
      if (problem) throw fieldError("/password", problem);
      const hash = await hashPassword(password);
      // One transaction; each write only if the one before it changed its row (`changes()`), so of two
      // requests with one link, only the first sets a password.
      const [used] = await db.batch([
        db
          .prepare("UPDATE auth_tickets SET used_at = ?1 WHERE id = ?2 AND used_at IS NULL AND expires_at > ?1")
          .bind(now, id),
        db
          .prepare("UPDATE people SET password_hash = ?, updated_at = ? WHERE id = ? AND changes() = 1")
          .bind(hash, now, ticket.person_id),
        db
          .prepare("UPDATE sessions SET revoked_at = ? WHERE person_id = ? AND revoked_at IS NULL AND changes() = 1")
          .bind(now, ticket.person_id),
      ]);
      if (used!.meta.changes !== 1) throw unusable();
      return c.body(null, 204);
    }),
  );
