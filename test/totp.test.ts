/**
 * The TOTP second factor (RFC 6238) and recovery codes: codes are computed here by an implementation of
 * our own (node:crypto's HMAC, not the service's Web Crypto one), checked first against RFC 6238's test
 * vectors, then used to turn TOTP on, sign in with it, refuse a code used twice, and turn it off.
 */
import { createHmac } from "node:crypto";
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { parseConfig } from "../src/core/config";
import { sealedPrefix, sealingKeys } from "../src/core/sealed";
import worker from "../src/index";
import { sealTotp } from "../src/people/second-factor";
import { hotp, totpStep } from "../src/people/totp";
import { Browser, PASSWORD, expectProblem, nextAddress, signedIn, smallLimits } from "./helpers";

/** RFC 4648 base32, decoded independently of the service's. */
function base32(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bits = [...text.toUpperCase()].map((c) => alphabet.indexOf(c).toString(2).padStart(5, "0")).join("");
  return Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
}

/** RFC 6238 TOTP with HMAC-SHA-1: the code of `seconds` for `secret`. */
function totp(secret: Buffer, seconds: number, digits = 6): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(seconds / 30)));
  const mac = createHmac("sha1", secret).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  const value = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(value % 10 ** digits).padStart(digits, "0");
}

/** RFC 6238 Appendix B, SHA-1 rows: the seed is the ASCII of "12345678901234567890", 8 digits. */
const VECTORS: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

const realNow = clock.now;
let now = 0;
beforeEach(() => {
  // The service's clock, held at the start of a 30-second step, moved by the tests below.
  now = Math.floor(realNow() / 30_000) * 30_000 + 1000;
  clock.now = () => now;
});
afterEach(() => {
  clock.now = realNow;
});

/** A person signed in with TOTP turned on: their secret and recovery codes. */
async function withTotp() {
  const person = await signedIn("editor");
  const { browser } = person;
  const begun = await browser.send("POST", "/v3.0/auth/totp");
  expect(begun.status).toBe(200);
  const { secret, otpauth_uri } = await begun.json<{ secret: string; otpauth_uri: string }>();
  const confirmed = await browser.send("POST", "/v3.0/auth/totp/confirm", { code: totp(base32(secret), now / 1000) });
  expect(confirmed.status).toBe(200);
  const { recovery_codes } = await confirmed.json<{ recovery_codes: string[] }>();
  return { ...person, secret: base32(secret), otpauthUri: otpauth_uri, recoveryCodes: recovery_codes };
}

/** A new browser through the password step: its session waits for the second factor. */
async function pending(email: string, bindings: Record<string, unknown> = {}) {
  const browser = new Browser(nextAddress(), undefined, bindings);
  const response = await browser.signIn(email, PASSWORD);
  expect(response.status).toBe(200);
  return { browser, body: await response.json<Record<string, any>>() };
}

describe("codes", () => {
  it("match RFC 6238's test vectors, here and in the service", async () => {
    const seed = Buffer.from("12345678901234567890", "ascii");
    for (const [seconds, code] of VECTORS) {
      expect(totp(seed, seconds, 8), String(seconds)).toBe(code);
      expect(await hotp(new Uint8Array(seed), totpStep(seconds * 1000), 8), String(seconds)).toBe(code);
    }
  });
});

describe("turning TOTP on", () => {
  it("gives a secret and an otpauth URI, then takes a code from it and returns 10 recovery codes once", async () => {
    const { browser, email, personId, secret, otpauthUri, recoveryCodes } = await withTotp();
    const uri = new URL(otpauthUri);
    expect(`${uri.protocol}//${uri.host}`).toBe("otpauth://totp");
    expect(decodeURIComponent(uri.pathname)).toBe(`/api.example.test:${email}`);
    expect(Object.fromEntries(uri.searchParams)).toEqual({
      secret: uri.searchParams.get("secret"),
      issuer: "api.example.test",
      algorithm: "SHA1",
      digits: "6",
      period: "30",
    });
    expect(base32(uri.searchParams.get("secret")!)).toEqual(secret);
    expect(secret.byteLength).toBe(20);

    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z2-7]{5}-[a-z2-7]{5}$/);
    // At rest: the secret sealed, the codes hashed.
    const row = await env.DB.prepare("SELECT totp_secret FROM people WHERE id = ?")
      .bind(personId)
      .first<{ totp_secret: string }>();
    expect(row!.totp_secret).toMatch(/^sealed:v1:/);
    expect(row!.totp_secret).not.toContain(uri.searchParams.get("secret"));
    const stored = await env.DB.prepare("SELECT code_hash FROM recovery_codes WHERE person_id = ?")
      .bind(personId)
      .all<{ code_hash: string }>();
    expect(stored.results).toHaveLength(10);
    for (const { code_hash } of stored.results) expect(recoveryCodes.join()).not.toContain(code_hash);

    const me = await (await browser.get("/v3.0/me")).json<{ totp: boolean }>();
    expect(me.totp).toBe(true);
    const session = await (await browser.get("/v3.0/auth/session")).json<Record<string, any>>();
    expect(session.session.second_factor).toBe("done");
  });

  it("rotates the session when TOTP goes on", async () => {
    const { browser } = await signedIn();
    const begun = await (await browser.send("POST", "/v3.0/auth/totp")).json<{ secret: string }>();
    const before = browser.cookies.get("__Host-poi_session");
    const old = new Browser();
    old.cookies.set("__Host-poi_session", before!);
    expect(
      (await browser.send("POST", "/v3.0/auth/totp/confirm", { code: totp(base32(begun.secret), now / 1000) })).status,
    ).toBe(200);
    expect(browser.cookies.get("__Host-poi_session")).not.toBe(before);
    await expectProblem(await old.get("/v3.0/auth/session"), 401);
  });

  it("refuses a wrong code, a confirmation without a beginning, and beginning twice", async () => {
    const { browser } = await signedIn();
    await expectProblem(await browser.send("POST", "/v3.0/auth/totp/confirm", { code: "123456" }), 409, {
      code: "conflict",
    });
    const begun = await (await browser.send("POST", "/v3.0/auth/totp")).json<{ secret: string }>();
    const right = totp(base32(begun.secret), now / 1000);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, "0");
    await expectProblem(await browser.send("POST", "/v3.0/auth/totp/confirm", { code: wrong }), 400, {
      code: "invalid_credentials",
      pointers: ["/code"],
    });
    await expectProblem(await browser.send("POST", "/v3.0/auth/totp/confirm", { code: "12 34" }), 400);
    expect((await browser.send("POST", "/v3.0/auth/totp/confirm", { code: right })).status).toBe(200);
    await expectProblem(await browser.send("POST", "/v3.0/auth/totp"), 409, { code: "conflict" });
  });

  it("turns on once among parallel confirmations, whose recovery codes are the ones kept", async () => {
    const { browser, personId } = await signedIn();
    const begun = await (await browser.send("POST", "/v3.0/auth/totp")).json<{ secret: string }>();
    const code = totp(base32(begun.secret), now / 1000);
    const csrf = browser.csrf!;
    const cookie = browser.cookies.get("__Host-poi_session")!;
    const attempts = await Promise.all(
      Array.from({ length: 8 }, () => {
        const copy = new Browser();
        copy.cookies.set("__Host-poi_session", cookie);
        copy.csrf = csrf;
        return copy.send("POST", "/v3.0/auth/totp/confirm", { code });
      }),
    );
    const ok = attempts.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    for (const response of attempts) if (response.status !== 200) await expectProblem(response, response.status);
    const { recovery_codes } = await ok[0]!.json<{ recovery_codes: string[] }>();
    // The codes that work are the winner's: one of them passes a sign-in.
    const { browser: next } = await pending(
      (await env.DB.prepare("SELECT email FROM people WHERE id = ?").bind(personId).first<{ email: string }>())!.email,
    );
    expect((await next.send("POST", "/v3.0/auth/second-factor", { recovery_code: recovery_codes[3] })).status).toBe(
      200,
    );
  });
});

describe("signing in with TOTP on", () => {
  it("waits for the second factor, shows nothing until it is passed, then rotates the session", async () => {
    const { email, personId, secret } = await withTotp();
    const { browser, body } = await pending(email);
    expect(body).toMatchObject({ person: null, accounts: [], session: { second_factor: "pending" } });
    await expectProblem(await browser.get("/v3.0/me"), 401, { code: "unauthorized" });
    await expectProblem(await browser.send("POST", "/v3.0/auth/token", {}), 401, { code: "unauthorized" });
    expect((await browser.get("/v3.0/auth/session")).status).toBe(200);

    // The code confirmed TOTP in this step: it is not accepted again.
    const used = totp(secret, now / 1000);
    await expectProblem(await browser.send("POST", "/v3.0/auth/second-factor", { code: used }), 400, {
      code: "invalid_credentials",
      pointers: ["/code"],
    });
    now += 30_000;
    const before = browser.cookies.get("__Host-poi_session");
    const passed = await browser.send("POST", "/v3.0/auth/second-factor", { code: totp(secret, now / 1000) });
    expect(passed.status).toBe(200);
    expect(await passed.json()).toMatchObject({ person: { id: personId }, session: { second_factor: "done" } });
    expect(browser.cookies.get("__Host-poi_session")).not.toBe(before);
    expect((await browser.get("/v3.0/me")).status).toBe(200);
    await expectProblem(await browser.send("POST", "/v3.0/auth/second-factor", { code: "000000" }), 409, {
      code: "conflict",
    });
  });

  it("accepts the previous and the next step's code, not one two steps away, and never a code twice", async () => {
    const { email, secret } = await withTotp();
    now += 5 * 30_000;
    const attempt = async (code: string) => {
      const { browser } = await pending(email);
      return browser.send("POST", "/v3.0/auth/second-factor", { code });
    };
    await expectProblem(await attempt(totp(secret, now / 1000 - 60)), 400);
    await expectProblem(await attempt(totp(secret, now / 1000 + 60)), 400);
    expect((await attempt(totp(secret, now / 1000 - 30))).status).toBe(200);
    // Steps are accepted in order: the previous step's is older than the one just used, and the
    // current one twice is a replay.
    expect((await attempt(totp(secret, now / 1000))).status).toBe(200);
    await expectProblem(await attempt(totp(secret, now / 1000)), 400);
    await expectProblem(await attempt(totp(secret, now / 1000 - 30)), 400);
    expect((await attempt(totp(secret, now / 1000 + 30))).status).toBe(200);
  });

  it("accepts a code once among many parallel sign-ins", async () => {
    const { email, secret } = await withTotp();
    now += 30_000;
    const browsers = await Promise.all(Array.from({ length: 8 }, () => pending(email)));
    const code = totp(secret, now / 1000);
    const answers = await Promise.all(
      browsers.map(({ browser }) => browser.send("POST", "/v3.0/auth/second-factor", { code })),
    );
    const statuses = answers.map((r) => r.status);
    await Promise.all(answers.map((r) => r.body?.cancel()));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(browsers.length - 1);
  });

  it("takes each recovery code once, however it is typed", async () => {
    const { email, recoveryCodes, personId } = await withTotp();
    const typed = recoveryCodes[0]!.toUpperCase().replace("-", " ");
    const first = await pending(email);
    expect((await first.browser.send("POST", "/v3.0/auth/second-factor", { recovery_code: typed })).status).toBe(200);
    const second = await pending(email);
    await expectProblem(
      await second.browser.send("POST", "/v3.0/auth/second-factor", { recovery_code: recoveryCodes[0] }),
      400,
      { code: "invalid_credentials", pointers: ["/recovery_code"] },
    );
    await expectProblem(
      await second.browser.send("POST", "/v3.0/auth/second-factor", { code: "123456", recovery_code: "x" }),
      400,
      { code: "validation_failed" },
    );
    const used = await env.DB.prepare(
      "SELECT count(*) AS n FROM recovery_codes WHERE person_id = ? AND used_at IS NOT NULL",
    )
      .bind(personId)
      .first<{ n: number }>();
    expect(used!.n).toBe(1);
  });

  it("limits second-factor attempts per person", async () => {
    const SMALL = smallLimits();
    const limits = parseConfig(SMALL).rateLimits;
    const { email } = await withTotp();
    const period = limits.signInEmail.period * 1000;
    await new Promise((resolve) => setTimeout(resolve, period - (Date.now() % period) + 50));
    const { browser } = await pending(email, SMALL);
    const statuses = [];
    for (let i = 0; i < limits.signInEmail.limit + 1; i++) {
      const response = await browser.send("POST", "/v3.0/auth/second-factor", { code: "000000" });
      statuses.push(response.status);
      if (response.status === 429) {
        expect(response.headers.get("RateLimit")).toBe(`sign-in-email;r=0;t=${limits.signInEmail.period}`);
      }
      await response.body?.cancel();
    }
    expect(statuses).toEqual([...Array(limits.signInEmail.limit).fill(400), 429]);
  });
});

describe("turning TOTP off", () => {
  it("takes the password or a current code, and takes the recovery codes with it", async () => {
    const { browser, email, personId, secret } = await withTotp();
    await expectProblem(await browser.send("DELETE", "/v3.0/auth/totp", { password: "not my password" }), 400, {
      code: "invalid_credentials",
      pointers: ["/password"],
    });
    await expectProblem(await browser.send("DELETE", "/v3.0/auth/totp", {}), 400, { code: "validation_failed" });
    await expectProblem(await browser.send("DELETE", "/v3.0/auth/totp", { code: totp(secret, now / 1000) }), 400, {
      pointers: ["/code"],
    });
    expect((await browser.send("DELETE", "/v3.0/auth/totp", { password: PASSWORD })).status).toBe(204);
    expect((await (await browser.get("/v3.0/me")).json<{ totp: boolean }>()).totp).toBe(false);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM recovery_codes WHERE person_id = ?")
      .bind(personId)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
    const { body } = await pending(email);
    expect(body.session.second_factor).toBe("none");
    await expectProblem(await browser.send("DELETE", "/v3.0/auth/totp", { password: PASSWORD }), 409);

    const again = await withTotp();
    now += 30_000;
    expect(
      (await again.browser.send("DELETE", "/v3.0/auth/totp", { code: totp(again.secret, now / 1000) })).status,
    ).toBe(204);
  });
});

describe("after a rotation of the signing key", () => {
  it("the scheduled job seals every TOTP secret again under the new key, and codes keep working", async () => {
    const { email, personId, secret } = await withTotp();
    const OLD = "the signing key before the rotation, 0123456789abcdef";
    const oldEnv = { ...env, TOKEN_SIGNING_KEY: OLD };
    // Stored as a secret sealed under the old key would be.
    await env.DB.prepare("UPDATE people SET totp_secret = ? WHERE id = ?")
      .bind(await sealTotp(oldEnv, personId, new Uint8Array(secret), null), personId)
      .run();
    const rotated = { ...env, TOKEN_SIGNING_KEY_PREVIOUS: OLD };
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), rotated);
    const row = await env.DB.prepare("SELECT totp_secret FROM people WHERE id = ?")
      .bind(personId)
      .first<{ totp_secret: string }>();
    expect(row!.totp_secret.startsWith(sealedPrefix((await sealingKeys(env)).current))).toBe(true);
    // Without the previous key now, the secret still opens: a code signs in.
    now += 30_000;
    const { browser } = await pending(email);
    expect((await browser.send("POST", "/v3.0/auth/second-factor", { code: totp(secret, now / 1000) })).status).toBe(
      200,
    );
  });
});
