/**
 * Idempotency keys on POST (the IETF `Idempotency-Key` draft, with Stripe's
 * semantics). The first request with a key runs and its response (status,
 * the headers that matter, body) is kept for 24 hours per account; the same
 * key with the same request replays that response, marked
 * `Idempotent-Replayed: true`, without running again; with a different
 * request (method, path or body) it is a 422, and while the first is still
 * running a 409. A response of 500 or above is not kept: the key is freed so
 * the retry runs. Mounted after the token check (keys belong to the caller's
 * account) and the body rules (the body is read once, and fingerprinted here).
 *
 * A kept body is stored sealed (src/db/idempotency.ts): an answer may carry a
 * secret. A replay repeats the first answer's `Cache-Control`, so an answer
 * that carries a secret (`no-store`) is never stored by a cache when replayed
 * either. One sealed under a signing key the Worker no longer has (removed
 * before the scheduled job sealed it again under the new one) cannot be
 * replayed: 410, and the request is not run again.
 */
import { createMiddleware } from "hono/factory";
import { base64urlEncode, utf8 } from "../../core/crypto";
import { clock } from "../../core/clock";
import type { AppEnv } from "../../core/env";
import { ApiError } from "../../core/problem";
import { sealingKeys } from "../../core/sealed";
import { claimKey, finishKey, releaseKey } from "../../db/idempotency";

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A key held this long by a request that never finished (its Worker died) may be claimed again. */
const ABANDONED_AFTER_MS = 60 * 1000;
/** Response headers a replay repeats; the rest (request id, CORS) belong to the replaying request. */
const KEPT_HEADERS = ["content-type", "location", "etag", "preference-applied", "cache-control"];

/** A key as sent: a token or a quoted string (RFC 8941 sf-string), 1 to 255 visible ASCII characters. */
function parseKey(header: string): string {
  const value = header.trim().replace(/^"(.*)"$/, "$1");
  if (!/^[\x21-\x7e]{1,255}$/.test(value)) {
    const detail = "must be 1 to 255 visible ASCII characters, e.g. a UUID";
    throw new ApiError("bad_request", `Idempotency-Key ${detail}.`, {
      errors: [{ parameter: "Idempotency-Key", detail }],
    });
  }
  return value;
}

async function fingerprint(method: string, path: string, body: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", utf8.encode(`${method} ${path}\n${body}`));
  return base64urlEncode(new Uint8Array(digest));
}

export const idempotency = () =>
  createMiddleware<AppEnv>(async function idempotency(c, next) {
    const header = c.req.method === "POST" ? c.req.header("Idempotency-Key") : undefined;
    if (header === undefined) return next();
    const key = {
      accountId: c.var.principal.accountId,
      key: parseKey(header),
      fingerprint: await fingerprint(c.req.method, c.req.path, await c.req.text()),
    };
    const now = clock.now();
    const keys = await sealingKeys(c.env);
    const claim = await claimKey(c.env.DB, keys, key, {
      now,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
      abandonedBefore: now - ABANDONED_AFTER_MS,
    });
    switch (claim.outcome) {
      case "reused":
        throw new ApiError(
          "idempotency_key_reused",
          "This Idempotency-Key was used for a different request in the last 24 hours; send a new key with a new request.",
        );
      case "in_flight":
        throw new ApiError(
          "idempotency_key_in_use",
          "The first request with this Idempotency-Key is still being processed; retry shortly to get its response.",
          { headers: { "Retry-After": "1" } },
        );
      case "unreadable":
        throw new ApiError(
          "idempotency_answer_unreadable",
          "The first request with this Idempotency-Key was processed, but its answer was stored under a signing " +
            "key this service no longer has; it is not run again. Check with a GET whether it took effect.",
        );
      case "replay": {
        const { status, headers, body } = claim.response;
        const replay = new Response(body === "" ? null : body, { status, headers });
        replay.headers.set("Idempotent-Replayed", "true");
        return replay;
      }
    }
    try {
      await next();
    } catch (error) {
      await releaseKey(c.env.DB, key);
      throw error;
    }
    const response = c.res;
    if (response.status >= 500) return releaseKey(c.env.DB, key);
    const headers = KEPT_HEADERS.flatMap((name): [string, string][] => {
      const value = response.headers.get(name);
      return value === null ? [] : [[name, value]];
    });
    await finishKey(c.env.DB, keys, key, { status: response.status, headers, body: await response.clone().text() });
  });
