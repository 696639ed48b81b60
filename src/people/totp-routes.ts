/**
 * /v3.0/auth/totp: turning the TOTP second factor on (a secret, then a code
 * from it, which also yields 10 recovery codes) and off (with a current code
 * or the password).
 */
import { Hono } from "hono";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { limitSignInAttempt, signInRatePolicy } from "../http/middleware/rate-limit";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { sessionToJson } from "./json";
import { verifyPassword } from "./passwords";
import { totpBeginJson, totpConfirmBody, totpConfirmedJson, totpOffBody } from "./schemas";
import { acceptTotpCode, newRecoveryCodes, replaceRecoveryCodes, sealTotp } from "./second-factor";
import { requireSession, rotateSession, sessionPerson } from "./sessions";
import { base32Encode, newTotpSecret, otpauthUri } from "./totp";

const operations = {
  begin: operation({
    summary: "Begin turning TOTP on",
    description:
      "A new secret for an authenticator app, as text and as an `otpauth://` URI for a QR code. TOTP is on " +
      "once POST /v3.0/auth/totp/confirm gets a code from it.",
    operationId: "beginTotp",
    tags: ["people"],
    responses: {
      200: { schema: totpBeginJson, headers: { "Cache-Control": { description: "`no-store`" } } },
      409: { description: "`conflict`: TOTP is on already" },
    },
  }),
  confirm: operation({
    summary: "Turn TOTP on",
    description:
      "With a code from the secret POST /v3.0/auth/totp gave. The answer holds 10 recovery codes, shown " +
      "only now; the session is replaced by a new one (new cookie and CSRF token).",
    operationId: "confirmTotp",
    tags: ["people"],
    examples: { "application/json": { code: "123456" } },
    responses: {
      200: { schema: totpConfirmedJson, headers: { "Cache-Control": { description: "`no-store`" } } },
      400: { description: "`invalid_credentials`: the code does not match; or `validation_failed`" },
      409: { description: "`conflict`: TOTP is on already, or was not begun" },
    },
    errors: [429],
  }),
  off: operation({
    summary: "Turn TOTP off",
    description: "With a current code or your password. The recovery codes go with it.",
    operationId: "deleteTotp",
    tags: ["people"],
    examples: { "application/json": { code: "123456" } },
    responses: {
      204: { description: "TOTP is off" },
      400: { description: "`invalid_credentials`: the code or password does not match; or `validation_failed`" },
      409: { description: "`conflict`: TOTP is off" },
    },
    errors: [429],
  }),
};

const mismatch = (pointer: string) =>
  new ApiError("invalid_credentials", "The code or password does not match.", {
    errors: [{ pointer, detail: "does not match" }],
  });

export const totpRoutes = new Hono<AppEnv>()
  .post(
    "/totp",
    ...operations.begin(requireSession(), async (c) => {
      const person = await sessionPerson(c);
      if (person.totp_enabled_at !== null) {
        throw new ApiError("conflict", "TOTP is on already; to start again, turn it off first.");
      }
      const secret = newTotpSecret();
      await c.env.DB.prepare("UPDATE people SET totp_secret = ? WHERE id = ? AND totp_enabled_at IS NULL")
        .bind(await sealTotp(c.env, person.id, secret, null), person.id)
        .run();
      const issuer = new URL(c.var.config.publicOrigin ?? c.req.url).host;
      c.header("Cache-Control", "no-store");
      return c.json({
        secret: base32Encode(secret),
        otpauth_uri: otpauthUri(issuer, person.email, secret),
      });
    }),
  )
  .post(
    "/totp/confirm",
    signInRatePolicy(),
    ...operations.confirm(requireSession(), validate("json", totpConfirmBody), async (c) => {
      const person = await sessionPerson(c);
      const stored = person.totp_secret;
      if (person.totp_enabled_at !== null) throw new ApiError("conflict", "TOTP is on already.");
      if (stored === null) throw new ApiError("conflict", "Begin with POST /v3.0/auth/totp, which gives the secret.");
      await limitSignInAttempt(c, `person:${person.id}`);
      const next = await acceptTotpCode(c.env, person.id, stored, c.req.valid("json").code);
      if (next === null) throw mismatch("/code");
      const db = c.env.DB;
      const codes = newRecoveryCodes();
      // The codes are replaced only by the request whose write turned TOTP on (its sealed value is unique).
      const [enabled] = await db.batch([
        db
          .prepare(
            `UPDATE people SET totp_secret = ?, totp_enabled_at = ?
              WHERE id = ? AND totp_secret = ? AND totp_enabled_at IS NULL RETURNING id`,
          )
          .bind(next, clock.now(), person.id, stored),
        ...(await replaceRecoveryCodes(db, person.id, codes, next)),
      ]);
      if (enabled!.results.length === 0) throw new ApiError("conflict", "TOTP was turned on or begun again meanwhile.");
      await rotateSession(c, { secondFactor: "done" });
      c.header("Cache-Control", "no-store");
      return c.json({ ...(await sessionToJson(c)), recovery_codes: codes });
    }),
  )
  .delete(
    "/totp",
    signInRatePolicy(),
    ...operations.off(requireSession(), validate("json", totpOffBody), async (c) => {
      const person = await sessionPerson(c);
      const stored = person.totp_secret;
      if (person.totp_enabled_at === null || stored === null) throw new ApiError("conflict", "TOTP is off.");
      await limitSignInAttempt(c, `person:${person.id}`);
      const { code, password } = c.req.valid("json");
      if (code !== undefined) {
        if ((await acceptTotpCode(c.env, person.id, stored, code)) === null) throw mismatch("/code");
      } else if (!(await verifyPassword(password!, person.password_hash)).matches) {
        throw mismatch("/password");
      }
      const db = c.env.DB;
      // Conditional on the secret checked: a code used meanwhile (it writes a new value) wins.
      const [off] = await db.batch([
        db
          .prepare("UPDATE people SET totp_secret = NULL, totp_enabled_at = NULL WHERE id = ? AND totp_secret = ?")
          .bind(person.id, stored),
        db.prepare("DELETE FROM recovery_codes WHERE person_id = ? AND changes() = 1").bind(person.id),
      ]);
      if (off!.meta.changes !== 1) throw mismatch(code !== undefined ? "/code" : "/password");
      return c.body(null, 204);
    }),
  );
