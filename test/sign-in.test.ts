/**
 * Signing in with an email and password (src/people/): the session cookie and its attributes, answers that
 * never tell whether an email exists, sign-in limits that no stranger can turn into a lockout, the stored
 * password hash and the password policy, changing a password and resetting it with a link.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { parseConfig } from "../src/core/config";
import { passwordProblem } from "../src/people/password-policy";
import { PBKDF2_ITERATIONS, verifyPassword } from "../src/people/passwords";
import { issueResetTicket } from "../src/people/reset-tickets";
import { sessionIdOf } from "../src/people/sessions";
import {
  Browser,
  PASSWORD,
  createPerson,
  expectProblem,
  nextAddress,
  personWithPassword,
  signedIn,
  smallLimits,
  windowWithRoom,
} from "./helpers";

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** A browser holding a session of `personId` made directly in D1, as a passkey sign-in makes one. */
async function browserSignedInAs(personId: number): Promise<Browser> {
  const secret = crypto.randomUUID();
  const now = Date.now();
  await env.DB.prepare(
    "INSERT INTO sessions (id, person_id, second_factor, last_seen_at, expires_at) VALUES (?, ?, 'none', ?, ?)",
  )
    .bind(await sessionIdOf(secret), personId, now, now + 3_600_000)
    .run();
  const browser = new Browser();
  browser.cookies.set("__Host-poi_session", secret);
  expect((await browser.get("/v3.0/auth/session")).status).toBe(200);
  return browser;
}

const storedHash = async (personId: number) =>
  (await env.DB.prepare("SELECT password_hash FROM people WHERE id = ?").bind(personId).first<{
    password_hash: string | null;
  }>())!.password_hash;

describe("signing in", () => {
  it("starts a session: an HttpOnly, Secure, SameSite=Lax __Host- cookie over https, and the session's answer", async () => {
    const { browser, email, personId, accountId } = await signedIn("admin");
    const cookie = [...browser.cookies.keys()];
    expect(cookie).toContain("__Host-poi_session");
    const session = await browser.get("/v3.0/auth/session");
    expect(session.status).toBe(200);
    expect(session.headers.get("Cache-Control")).toBe("no-store");
    const body = await session.json<Record<string, any>>();
    expect(body.person).toEqual({ id: personId, email, name: expect.any(String) });
    expect(body.accounts).toEqual([{ id: accountId, name: expect.any(String), role: "admin" }]);
    expect(body.session).toMatchObject({ current: true, second_factor: "none", account: null });
    expect(body.csrf_token).toBe(browser.csrf);

    const fresh = new Browser();
    const response = await fresh.signIn(email, PASSWORD);
    const line = response.headers.getSetCookie().find((l) => l.startsWith("__Host-poi_session="))!;
    expect(line).toMatch(/^__Host-poi_session=[A-Za-z0-9_-]{43};/);
    for (const attribute of ["Path=/", "HttpOnly", "Secure", "SameSite=Lax", "Max-Age=604800"]) {
      expect(line.split("; ")).toContain(attribute);
    }
    // Only the SHA-256 of the cookie's secret is stored.
    const secret = fresh.cookies.get("__Host-poi_session")!;
    expect(await env.DB.prepare("SELECT 1 FROM sessions WHERE id = ?").bind(secret).first()).toBeNull();
  });

  it("uses the bare cookie name without Secure over plain http, as in local development", async () => {
    const { email } = await personWithPassword();
    const browser = new Browser(nextAddress(), "http://localhost:8787");
    const response = await browser.signIn(email, PASSWORD);
    expect(response.status).toBe(200);
    const line = response.headers.getSetCookie().find((l) => l.startsWith("poi_session="))!;
    expect(line.split("; ")).not.toContain("Secure");
    expect((await browser.get("/v3.0/auth/session")).status).toBe(200);
  });

  it("finds the email whatever its case or Unicode composition", async () => {
    const { email } = await personWithPassword(PASSWORD, `Zoë-${crypto.randomUUID()}@Example.test`);
    const decomposed = email.normalize("NFD").toUpperCase();
    expect(decomposed).not.toBe(email);
    expect((await new Browser().signIn(decomposed, PASSWORD)).status).toBe(200);
  });

  it("refuses a wrong password with invalid_credentials and sets no session", async () => {
    const { email } = await personWithPassword();
    const browser = new Browser();
    await expectProblem(await browser.signIn(email, `${PASSWORD}!`), 400, { code: "invalid_credentials" });
    expect(browser.cookies.has("__Host-poi_session")).toBe(false);
    await expectProblem(await browser.get("/v3.0/auth/session"), 401, { code: "unauthorized" });
  });

  it("answers an unknown email, a wrong password and a person without a password alike, byte for byte", async () => {
    const withPassword = await personWithPassword();
    const passkeysOnly = await createPerson();
    const attempts = [
      [`nobody-${crypto.randomUUID()}@example.test`, PASSWORD],
      [withPassword.email, "not the password at all"],
      [passkeysOnly.email, PASSWORD],
    ];
    const answers = [];
    for (const [email, password] of attempts) {
      const response = await new Browser().signIn(email!, password!);
      const headers = [...response.headers].filter(([name]) => name !== "x-request-id");
      answers.push({ status: response.status, headers, body: await response.text() });
    }
    expect(answers[0]!.status).toBe(400);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it("stores PBKDF2-SHA-256 at the Workers runtime's 100,000 iterations, and upgrades an older hash at sign-in", async () => {
    const person = await personWithPassword();
    expect(PBKDF2_ITERATIONS).toBeLessThanOrEqual(100_000);
    expect(await storedHash(person.personId)).toMatch(
      /^\$pbkdf2-sha256\$i=100000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/,
    );

    // The same password under 1,000 iterations, as a hash made with older parameters would be stored.
    const salt = crypto.getRandomValues(new Uint8Array(16));
    const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(PASSWORD), "PBKDF2", false, [
      "deriveBits",
    ]);
    const bits = new Uint8Array(
      await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations: 1000 }, key, 256),
    );
    const old = `$pbkdf2-sha256$i=1000$${salt.toBase64({ omitPadding: true })}$${bits.toBase64({ omitPadding: true })}`;
    expect(await verifyPassword(PASSWORD, old)).toEqual({ matches: true, rehash: true });
    await env.DB.prepare("UPDATE people SET password_hash = ? WHERE id = ?").bind(old, person.personId).run();
    expect((await new Browser().signIn(person.email, PASSWORD)).status).toBe(200);
    const upgraded = await storedHash(person.personId);
    expect(upgraded).toMatch(/^\$pbkdf2-sha256\$i=100000\$/);
    expect(await verifyPassword(PASSWORD, upgraded)).toEqual({ matches: true, rehash: false });
  });

  it("matches nothing with a stored hash it cannot have written or could not compute when deployed", async () => {
    for (const stored of [
      "",
      "plain",
      "$pbkdf2-sha256$i=600000$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ]) {
      expect(await verifyPassword("anything", stored)).toEqual({ matches: false, rehash: false });
    }
  });

  it("refuses a sign-in sent from another site (login CSRF), before the password is checked", async () => {
    const { email } = await personWithPassword();
    const browser = new Browser();
    for (const headers of [{ "Sec-Fetch-Site": "cross-site" }, { "Sec-Fetch-Site": "same-site" }]) {
      await expectProblem(
        await browser.send("POST", "/v3.0/auth/sign-in", { email, password: PASSWORD }, headers),
        403,
        { code: "csrf_failed" },
      );
    }
    const fromElsewhere = await browser.fetch("/v3.0/auth/sign-in", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "https://evil.example" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    await expectProblem(fromElsewhere, 403, { code: "csrf_failed" });
    expect(browser.cookies.size).toBe(0);
  });

  it("validates the body: an email address, a password", async () => {
    await expectProblem(await new Browser().signIn("not an email", PASSWORD), 400, { pointers: ["/email"] });
    await expectProblem(await new Browser().send("POST", "/v3.0/auth/sign-in", { email: "a@example.test" }), 400, {
      pointers: ["/password"],
    });
  });
});

describe("the password policy", () => {
  it("asks 12 to 128 characters and nothing else, refusing the commonest passwords, repeats and the email", () => {
    expect(passwordProblem("short", null)).toMatch(/at least 12/);
    expect(passwordProblem("x".repeat(10) + "é", null)).toMatch(/at least 12/);
    expect(passwordProblem("ab".repeat(65), null)).toMatch(/at most 128/);
    expect(passwordProblem("Password1234", null)).toMatch(/most common/);
    expect(passwordProblem("QWERTYUIOPAS", null)).toMatch(/most common/);
    expect(passwordProblem("zzzzzzzzzzzzzz", null)).toMatch(/repeated/);
    expect(passwordProblem("Ana.Lima@Example.test", "ana.lima@example.test")).toMatch(/email/);
    expect(passwordProblem("ana.lima.example", "ana.lima.example@example.test")).toMatch(/email/);
    // No composition rules: lower-case words alone, or any script, are fine.
    expect(passwordProblem("purple elephants dance", "ana@example.test")).toBeNull();
    expect(passwordProblem("パスワードは長いほうがいい", null)).toBeNull();
  });
});

describe("limits", () => {
  const SMALL = smallLimits();
  const limits = parseConfig(SMALL).rateLimits;

  it("limits attempts per source address with 429 problem details, Retry-After and the policy", async () => {
    await windowWithRoom(5000, limits.signInAddress.period);
    const { email } = await personWithPassword();
    const browser = new Browser(nextAddress(), undefined, SMALL);
    const statuses = [];
    for (let i = 0; i < limits.signInAddress.limit + 2; i++) {
      // Each attempt names another email, so only the address's allowance runs out.
      const response = await browser.signIn(
        i === 0 ? email : `other-${i}-${crypto.randomUUID()}@example.test`,
        "wrong password",
      );
      statuses.push(response.status);
      if (response.status === 429) {
        expect(response.headers.get("Retry-After")).toBe(String(limits.signInAddress.period));
        expect(response.headers.get("RateLimit")).toBe(`sign-in-address;r=0;t=${limits.signInAddress.period}`);
        await expectProblem(response, 429, { code: "too_many_requests" });
      } else await response.body?.cancel();
      expect(response.headers.get("RateLimit-Policy")).toBe(
        `sign-in-address;q=${limits.signInAddress.limit};w=10, sign-in-email;q=${limits.signInEmail.limit};w=10`,
      );
    }
    expect(statuses.slice(0, limits.signInAddress.limit).every((s) => s === 400)).toBe(true);
    expect(statuses.slice(limits.signInAddress.limit)).toEqual([429, 429]);
  });

  it("limits guesses at one email from many addresses, but never the browsers its person signed in with", async () => {
    const { email } = await personWithPassword();
    const someoneElse = await personWithPassword();
    // The person signed in on this browser before; the other browser is someone else's (its device cookie
    // is for their own email).
    const own = new Browser(nextAddress(), undefined, SMALL);
    const othersBrowser = new Browser(nextAddress(), undefined, SMALL);
    expect((await own.signIn(email, PASSWORD)).status).toBe(200);
    expect((await othersBrowser.signIn(someoneElse.email, PASSWORD)).status).toBe(200);
    // From the start of a fresh window: strangers, each from an address of their own (well within the
    // per-address limit), guess in parallel.
    const period = limits.signInEmail.period * 1000;
    await new Promise((resolve) => setTimeout(resolve, period - (Date.now() % period) + 50));
    const guesses = await Promise.all(
      Array.from({ length: limits.signInEmail.limit * 3 }, () =>
        new Browser(nextAddress(), undefined, SMALL).signIn(email, "a wrong guess here"),
      ),
    );
    const statuses = guesses.map((r) => r.status);
    await Promise.all(guesses.map((r) => r.body?.cancel()));
    expect(statuses.filter((s) => s === 400)).toHaveLength(limits.signInEmail.limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(limits.signInEmail.limit * 2);
    // A new browser with the right password waits too (the email's allowance is spent), and so does a
    // browser whose device cookie is for another email...
    await expectProblem(await new Browser(nextAddress(), undefined, SMALL).signIn(email, PASSWORD), 429, {
      code: "too_many_requests",
    });
    await expectProblem(await othersBrowser.signIn(email, PASSWORD), 429, { code: "too_many_requests" });
    // ...but the person's own browser signs in, however many strangers guessed.
    expect((await own.signIn(email, PASSWORD)).status).toBe(200);
  });

  it("counts a device cookie only for the email it was issued for", async () => {
    const first = await personWithPassword();
    const second = await personWithPassword();
    const browser = new Browser();
    expect((await browser.signIn(first.email, PASSWORD)).status).toBe(200);
    const device = browser.cookies.get("__Host-poi_device")!;
    expect(device).toMatch(/^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/);
    // Another person signing in on the same browser replaces it with their own.
    expect((await browser.signIn(second.email, PASSWORD)).status).toBe(200);
    expect(browser.cookies.get("__Host-poi_device")).not.toBe(device);
  });
});

describe("changing the password", () => {
  it("needs the current password, ends every other session, and rotates this one", async () => {
    const { browser, email } = await signedIn();
    const other = new Browser();
    expect((await other.signIn(email, PASSWORD)).status).toBe(200);
    const before = browser.cookies.get("__Host-poi_session");

    await expectProblem(
      await browser.send("PUT", "/v3.0/auth/password", {
        current_password: "wrong one",
        new_password: "a new long phrase",
      }),
      400,
      { code: "invalid_credentials", pointers: ["/current_password"] },
    );
    await expectProblem(await browser.send("PUT", "/v3.0/auth/password", { new_password: "a new long phrase" }), 400, {
      code: "validation_failed",
      pointers: ["/current_password"],
    });
    await expectProblem(
      await browser.send("PUT", "/v3.0/auth/password", { current_password: PASSWORD, new_password: "password1234" }),
      400,
      { code: "validation_failed", pointers: ["/new_password"] },
    );
    const changed = await browser.send("PUT", "/v3.0/auth/password", {
      current_password: PASSWORD,
      new_password: "a new long phrase",
    });
    expect(changed.status).toBe(200);
    expect(browser.cookies.get("__Host-poi_session")).not.toBe(before);
    expect((await browser.get("/v3.0/auth/session")).status).toBe(200);
    await expectProblem(await other.get("/v3.0/auth/session"), 401, { code: "unauthorized" });

    await expectProblem(await new Browser().signIn(email, PASSWORD), 400, { code: "invalid_credentials" });
    expect((await new Browser().signIn(email, "a new long phrase")).status).toBe(200);
  });

  it("sets a first password without the current one for a person who has none (passkeys only)", async () => {
    const person = await createPerson();
    const browser = await browserSignedInAs(person.personId);
    const set = await browser.send("PUT", "/v3.0/auth/password", { new_password: "first long phrase" });
    expect(set.status).toBe(200);
    expect((await new Browser().signIn(person.email, "first long phrase")).status).toBe(200);
  });
});

describe("resetting the password with a link", () => {
  it("sets the password once, ends every session, and refuses the link after", async () => {
    const { browser, email, personId } = await signedIn();
    const link = await issueResetTicket(env.DB, personId);
    const stranger = new Browser();
    await expectProblem(await stranger.send("POST", `/v3.0/auth/password-reset/${link}`, { password: "short" }), 400, {
      pointers: ["/password"],
    });
    await expectProblem(await stranger.send("POST", `/v3.0/auth/password-reset/${link}`, { password: email }), 400, {
      pointers: ["/password"],
    });
    expect(
      (await stranger.send("POST", `/v3.0/auth/password-reset/${link}`, { password: "reset long phrase" })).status,
    ).toBe(204);
    await expectProblem(await browser.get("/v3.0/auth/session"), 401, { code: "unauthorized" });
    expect((await new Browser().signIn(email, "reset long phrase")).status).toBe(200);
    await expectProblem(
      await stranger.send("POST", `/v3.0/auth/password-reset/${link}`, { password: "another long phrase" }),
      404,
      { code: "not_found" },
    );
    await expectProblem(await new Browser().signIn(email, "another long phrase"), 400, { code: "invalid_credentials" });
  });

  it("works once among many parallel requests with the same link", async () => {
    const { personId, email } = await personWithPassword();
    const link = await issueResetTicket(env.DB, personId);
    const passwords = Array.from({ length: 12 }, (_, i) => `parallel long phrase ${i}`);
    const responses = await Promise.all(
      passwords.map((password) => new Browser().send("POST", `/v3.0/auth/password-reset/${link}`, { password })),
    );
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 404)).toHaveLength(passwords.length - 1);
    const winner = passwords[statuses.indexOf(204)]!;
    const matching = [];
    for (const password of passwords) {
      if ((await verifyPassword(password, await storedHash(personId))).matches) matching.push(password);
    }
    expect(matching).toEqual([winner]);
    expect((await new Browser().signIn(email, winner)).status).toBe(200);
  });

  it("expires after 24 hours, and only the newest link of a person works", async () => {
    const { personId } = await personWithPassword();
    const older = await issueResetTicket(env.DB, personId);
    const newer = await issueResetTicket(env.DB, personId);
    await expectProblem(
      await new Browser().send("POST", `/v3.0/auth/password-reset/${older}`, { password: "older long phrase" }),
      404,
    );
    const start = realNow();
    clock.now = () => start + 24 * 3600 * 1000 + 1;
    await expectProblem(
      await new Browser().send("POST", `/v3.0/auth/password-reset/${newer}`, { password: "newer long phrase" }),
      404,
    );
  });
});
