/**
 * Passkeys (src/people/passkeys-*.ts) with a software authenticator
 * (test/software-authenticator.ts): both ceremonies end to end in the Worker,
 * every way an answer may be wrong (another origin or RP ID, no user
 * verification, a used or expired challenge, a counter gone back, another
 * key, another person's user handle), the rules that must hold under
 * parallel requests (one answer per challenge, at most 20 passkeys, never
 * the last way in), and that a failed sign-in says nothing of why.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { base64urlEncode, utf8 } from "../src/core/crypto";
import { answerExamples } from "../src/people/passkeys-schemas";
import { MAX_PASSKEYS } from "../src/people/passkeys-store";
import { deleteExpiredTickets } from "../src/people/tickets";
import { parseConfig } from "../src/core/config";
import {
  BASE,
  Browser,
  call,
  expectProblem,
  nextAddress,
  signedIn as signedInWithPassword,
  smallLimits,
  windowWithRoom,
} from "./helpers";
import { SoftwareAuthenticator, type CreationOptions, type RequestOptions } from "./software-authenticator";

const ORIGIN = BASE;
const RP_ID = new URL(BASE).hostname;
const COOKIE = "__Host-poi_session";

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

type Json = Record<string, any>;

/**
 * A person signed in with their password on a browser of their own (test/helpers.ts), a member of an
 * account; unless `password` is true, one who then has no password, as a person who signs in with passkeys
 * only. `bindings` replace the Worker's.
 */
async function signedIn(options: { password?: boolean; bindings?: Record<string, unknown> } = {}) {
  const person = await signedInWithPassword("editor", options.bindings);
  if (!options.password) {
    await env.DB.prepare("UPDATE people SET password_hash = NULL WHERE id = ?").bind(person.personId).run();
  }
  const session = await person.browser.send("GET", "/v3.0/auth/session");
  const sessionId = (await session.json<{ session: { id: string } }>()).session.id;
  return { ...person, sessionId };
}

async function registrationOptions(browser: Browser): Promise<CreationOptions & Json> {
  const response = await browser.send("POST", "/v3.0/auth/passkeys/registration/options");
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

/** Sign-in options, asked from a browser of their own unless one is given (each asking is an attempt counted). */
async function signInOptions(browser = new Browser()): Promise<RequestOptions & Json> {
  const response = await browser.send("POST", "/v3.0/auth/passkeys/sign-in/options");
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

/** Registers a passkey of `authenticator` for the browser's person. */
async function register(browser: Browser, authenticator: SoftwareAuthenticator, name = "Laptop") {
  const { passkey, response } = await authenticator.create(await registrationOptions(browser));
  const created = await browser.send("POST", "/v3.0/auth/passkeys", { name, response });
  expect(created.status, await created.clone().text()).toBe(201);
  return { passkey, json: await created.json<Json>() };
}

const passkeyRow = (id: string) =>
  env.DB.prepare("SELECT * FROM passkeys WHERE id = ?").bind(id).first<Record<string, unknown>>();

describe("registration", () => {
  it("gives options for a discoverable, user-verified passkey for this service, and stores what it answers", async () => {
    const { browser, email, personId } = await signedIn();
    const options = await registrationOptions(browser);
    expect(options).toMatchObject({
      rp: { id: RP_ID, name: RP_ID },
      user: { id: base64urlEncode(utf8.encode(`person:${personId}`)), name: email, displayName: expect.any(String) },
      attestation: "none",
      timeout: 300_000,
      authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
      excludeCredentials: [],
    });
    expect(options.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual([-8, -7, -257]);
    expect(options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey, response } = await authenticator.create(options);
    const created = await browser.send("POST", "/v3.0/auth/passkeys", { name: "  Laptop  ", response });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(created.headers.get("Location")).toBe(`${BASE}/v3.0/auth/passkeys/${passkey.id}`);
    const json = await created.json<Json>();
    expect(json).toEqual({
      id: passkey.id,
      name: "Laptop",
      transports: ["internal", "hybrid"],
      created_at: expect.any(String),
      last_used_at: null,
    });
    const row = await passkeyRow(passkey.id);
    expect(row).toMatchObject({ person_id: personId, counter: 0, name: "Laptop" });
    // The COSE key the authenticator made: kty 2, alg -7, crv 1 (the map's first entries, in CBOR).
    expect(Array.from(Uint8Array.fromBase64(row!.public_key as string, { alphabet: "base64url" }).slice(0, 7))).toEqual(
      [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01],
    );

    // The next registration excludes it, so the authenticator does not make a second one.
    const again = await registrationOptions(browser);
    expect(again.excludeCredentials).toEqual([
      { id: passkey.id, type: "public-key", transports: ["internal", "hybrid"] },
    ]);
    const list = await browser.send("GET", "/v3.0/auth/passkeys");
    expect(await list.json()).toEqual({ results: [json], next: null, previous: null });
  });

  it("names a passkey Passkey when no name is given, and refuses a blank one", async () => {
    const { browser } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const unnamed = await authenticator.create(await registrationOptions(browser));
    const created = await browser.send("POST", "/v3.0/auth/passkeys", { response: unnamed.response });
    expect((await created.json<Json>()).name).toBe("Passkey");
    const blank = await authenticator.create(await registrationOptions(browser));
    await expectProblem(
      await browser.send("POST", "/v3.0/auth/passkeys", { name: " ", response: blank.response }),
      400,
      {
        code: "validation_failed",
        pointers: ["/name"],
      },
    );
  });

  it("needs a session, and its CSRF token from this service's own pages", async () => {
    await expectProblem(await new Browser().send("POST", "/v3.0/auth/passkeys/registration/options"), 401, {
      code: "unauthorized",
    });
    const { browser } = await signedIn();
    const token = browser.csrf;
    browser.csrf = null;
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys/registration/options"), 403, {
      code: "csrf_failed",
    });
    browser.csrf = `${token!.slice(0, -2)}AA`;
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys/registration/options"), 403, {
      code: "csrf_failed",
    });
    browser.csrf = token;
    for (const headers of [{ "Sec-Fetch-Site": "cross-site" }, { "Sec-Fetch-Site": "same-site" }]) {
      await expectProblem(
        await browser.send("POST", "/v3.0/auth/passkeys/registration/options", undefined, headers),
        403,
        { code: "csrf_failed" },
      );
    }
    // A browser that sends no Fetch Metadata: its Origin decides.
    const fromElsewhere = await browser.fetch("/v3.0/auth/passkeys/registration/options", {
      method: "POST",
      headers: { Origin: "https://evil.example", "X-CSRF-Token": token! },
    });
    await expectProblem(fromElsewhere, 403, { code: "csrf_failed" });
    expect((await browser.send("POST", "/v3.0/auth/passkeys/registration/options")).status).toBe(200);
  });

  it("refuses an answer made for another origin or RP ID, or without user verification", async () => {
    const { browser, personId } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const cases = [
      [{ origin: "https://evil.example" }, /origin/],
      [{ origin: "http://api.example.test" }, /origin/],
      [{ rpId: "evil.example" }, /RP ID/],
      [{ rpId: "example.test" }, /RP ID/],
      [{ userVerified: false }, /verif/i],
    ] as const;
    for (const [tampering, reason] of cases) {
      const { response } = await authenticator.create(await registrationOptions(browser), tampering);
      const problem = await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response }), 400, {
        code: "passkey_not_accepted",
      });
      expect(problem.detail, JSON.stringify(tampering)).toMatch(reason);
    }
    const count = await env.DB.prepare("SELECT count(*) AS n FROM passkeys WHERE person_id = ?")
      .bind(personId)
      .first<{ n: number }>();
    expect(count!.n).toBe(0);
  });

  it("takes one answer per challenge, from the session it was given to, within 5 minutes", async () => {
    const { browser } = await signedIn();
    const other = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);

    // Another session's challenge, even of the same person's, is not this one's.
    const foreign = await authenticator.create(await registrationOptions(other.browser));
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response: foreign.response }), 400, {
      code: "passkey_not_accepted",
    });

    // A challenge never issued.
    const options = await registrationOptions(browser);
    const made = await authenticator.create(options, { challenge: base64urlEncode(new Uint8Array(32)) });
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response: made.response }), 400, {
      code: "passkey_not_accepted",
    });

    // Answered at 4:59, accepted; the same challenge again, refused.
    const issuedAt = Date.now();
    const timely = await registrationOptions(browser);
    const answer = await authenticator.create(timely);
    clock.now = () => issuedAt + 299_000;
    expect((await browser.send("POST", "/v3.0/auth/passkeys", { response: answer.response })).status).toBe(201);
    const second = await authenticator.create(timely);
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response: second.response }), 400, {
      code: "passkey_not_accepted",
    });

    // Answered after 5 minutes, refused.
    clock.now = realNow;
    const late = await registrationOptions(browser);
    const lateAnswer = await authenticator.create(late);
    clock.now = () => Date.now() + 300_001;
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response: lateAnswer.response }), 400, {
      code: "passkey_not_accepted",
    });
  });

  it("refuses a passkey registered already, and a twenty-first, even when they are sent at once", async () => {
    const { browser, personId } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);
    // The same credential again (the browser would not, with excludeCredentials; a script may).
    const options = await registrationOptions(browser);
    const copy = await authenticator.create(options);
    copy.response.id = passkey.id;
    copy.response.rawId = passkey.id;
    const attestation = Uint8Array.fromBase64(copy.response.response.attestationObject, { alphabet: "base64url" });
    // The credential id sits in authData right after rpIdHash, flags, counter, AAGUID and its length.
    const at = indexOf(attestation, Uint8Array.fromBase64(copy.passkey.id, { alphabet: "base64url" }));
    attestation.set(Uint8Array.fromBase64(passkey.id, { alphabet: "base64url" }), at);
    copy.response.response.attestationObject = base64urlEncode(attestation);
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response: copy.response }), 409, {
      code: "conflict",
    });

    const have = 1;
    const room = MAX_PASSKEYS - have;
    // room + 6 registrations at once: exactly `room` are stored.
    const answers = await Promise.all(
      Array.from({ length: room + 6 }, async () => authenticator.create(await registrationOptions(browser))),
    );
    const results = await Promise.all(
      answers.map(({ response }) => browser.send("POST", "/v3.0/auth/passkeys", { response })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(room);
    expect(statuses.filter((s) => s === 409)).toHaveLength(6);
    for (const r of results.filter((r) => r.status === 409)) {
      expect((await r.json<Json>()).detail).toContain(`${MAX_PASSKEYS} passkeys`);
    }
    const stored = await env.DB.prepare("SELECT count(*) AS n FROM passkeys WHERE person_id = ?")
      .bind(personId)
      .first<{ n: number }>();
    expect(stored!.n).toBe(MAX_PASSKEYS);
  });

  it("takes credential ids of 16 to 1,023 bytes, and only those in paths", async () => {
    const { browser } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const short = await authenticator.create(await registrationOptions(browser), { idLength: 15 });
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response: short.response }), 400, {
      code: "validation_failed",
      pointers: ["/response/id", "/response/rawId"],
    });
    // The id the browser reports padded to 16 bytes, the authenticator's own still 15: the stored one counts.
    const padded = await authenticator.create(await registrationOptions(browser), { idLength: 15 });
    padded.response.id = padded.response.rawId = `${padded.response.id}AA`;
    const problem = await expectProblem(
      await browser.send("POST", "/v3.0/auth/passkeys", { response: padded.response }),
      400,
      { code: "passkey_not_accepted" },
    );
    expect(problem.detail).toContain("16 bytes");
    const longest = await authenticator.create(await registrationOptions(browser), { idLength: 1023 });
    const stored = await browser.send("POST", "/v3.0/auth/passkeys", { response: longest.response });
    expect(stored.status, await stored.clone().text()).toBe(201);
    expect((await browser.send("PATCH", `/v3.0/auth/passkeys/${longest.passkey.id}`, { name: "Long" })).status).toBe(
      200,
    );
    // The ceremonies' own paths are no passkey's: PATCH on them is a 405, not a lookup.
    const notAnId = await browser.send("PATCH", "/v3.0/auth/passkeys/sign-in", { name: "x" });
    expect(notAnId.status).toBe(405);
    expect(notAnId.headers.get("Allow")).toBe("POST, OPTIONS");
  });

  it("refuses bodies that are no WebAuthn answer, field by field", async () => {
    const { browser } = await signedIn();
    await expectProblem(
      await browser.send("POST", "/v3.0/auth/passkeys", {
        name: 7,
        response: {
          id: "not base64url, nor anything!",
          rawId: "",
          type: "password",
          response: { clientDataJSON: "x" },
        },
      }),
      400,
      {
        code: "validation_failed",
        pointers: [
          "/name",
          "/response/id",
          "/response/rawId",
          "/response/type",
          "/response/response/attestationObject",
        ],
      },
    );
  });
});

function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error("not found");
}

describe("sign-in", () => {
  it("signs in with a discoverable passkey, no email asked, into a new session whose token works", async () => {
    const { browser, personId, accountId, email } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);

    const stranger = new Browser();
    const options = await signInOptions(stranger);
    expect(options).toMatchObject({ rpId: RP_ID, userVerification: "required", timeout: 300_000 });
    expect(options.allowCredentials ?? []).toEqual([]);
    const before = Date.now();
    const signedInResponse = await stranger.send("POST", "/v3.0/auth/passkeys/sign-in", {
      response: await authenticator.get(passkey, options),
    });
    expect(signedInResponse.status, await signedInResponse.clone().text()).toBe(200);
    expect(signedInResponse.headers.get("Cache-Control")).toBe("no-store");
    // The answer of a password sign-in: the person, the session, its CSRF token, the accounts.
    expect(await signedInResponse.json()).toEqual({
      person: { id: personId, email, name: expect.any(String) },
      session: expect.objectContaining({ current: true, second_factor: "none", account: null }),
      csrf_token: stranger.csrf,
      accounts: [{ id: accountId, name: expect.any(String), role: "editor" }],
    });
    const cookies = signedInResponse.headers.getSetCookie();
    const [cookie, ...attributes] = cookies.find((line) => line.startsWith(`${COOKIE}=`))!.split("; ");
    expect(cookie).toMatch(new RegExp(`^${COOKIE}=[A-Za-z0-9_-]{43}$`));
    expect(attributes).toEqual(expect.arrayContaining(["Path=/", "HttpOnly", "Secure", "SameSite=Lax"]));
    // As after a password sign-in, this browser is one the person uses (src/people/devices.ts).
    expect(stranger.cookies.has("__Host-poi_device")).toBe(true);

    const session = await env.DB.prepare(
      "SELECT person_id, second_factor FROM sessions WHERE person_id = ? AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1",
    )
      .bind(personId)
      .first();
    // A passkey with user verification is two factors by itself.
    expect(session).toEqual({ person_id: personId, second_factor: "none" });
    const row = await passkeyRow(passkey.id);
    expect(row!.counter).toBe(1);
    expect(row!.last_used_at as number).toBeGreaterThanOrEqual(before);

    const token = await stranger.send("POST", "/v3.0/auth/token", {});
    expect(token.status, await token.clone().text()).toBe(200);
    const { access_token, account } = await token.json<{ access_token: string; account: number }>();
    expect(account).toBe(accountId);
    const pinpoints = await call("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${access_token}` } });
    expect(pinpoints.status, await pinpoints.clone().text()).toBe(200);
    expect(await pinpoints.json()).toMatchObject({ results: [] });
    const list = await stranger.send("GET", "/v3.0/auth/passkeys");
    expect((await list.json<Json>()).results.map((p: Json) => p.id)).toEqual([passkey.id]);
  });

  it("replaces the session the browser had (no fixation)", async () => {
    const { browser, sessionId } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);
    const old = browser.cookies.get(COOKIE)!;
    const response = await browser.send("POST", "/v3.0/auth/passkeys/sign-in", {
      response: await authenticator.get(passkey, await signInOptions()),
    });
    expect(response.status).toBe(200);
    expect(browser.cookies.get(COOKIE)).not.toBe(old);
    const revoked = await env.DB.prepare("SELECT revoked_at FROM sessions WHERE id = ?").bind(sessionId).first();
    expect(revoked!.revoked_at).not.toBeNull();
    const stale = new Browser();
    stale.cookies.set(COOKIE, old);
    await expectProblem(await stale.send("GET", "/v3.0/auth/passkeys"), 401, { code: "unauthorized" });
  });

  it("asks a person with TOTP on for no code: a passkey with user verification is two factors", async () => {
    const { browser, personId } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);
    await env.DB.prepare("UPDATE people SET totp_enabled_at = ? WHERE id = ?").bind(Date.now(), personId).run();
    const stranger = new Browser();
    const response = await stranger.send("POST", "/v3.0/auth/passkeys/sign-in", {
      response: await authenticator.get(passkey, await signInOptions()),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toMatchObject({ person: { id: personId }, session: { second_factor: "none" } });
    expect((await stranger.send("GET", "/v3.0/me")).status).toBe(200);
  });

  it("answers every failure the same, whatever failed", async () => {
    const { browser } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);
    const other = await signedIn();
    const { passkey: othersPasskey } = await register(other.browser, authenticator);
    const unknown = new SoftwareAuthenticator(ORIGIN);
    const { passkey: neverRegistered } = await unknown.create(await registrationOptions(browser));

    const attempts: [string, () => Promise<Json>][] = [
      ["unknown passkey", async () => unknown.get(neverRegistered, await signInOptions())],
      ["another key", async () => authenticator.get(passkey, await signInOptions(), { wrongKey: true })],
      [
        "another origin",
        async () => authenticator.get(passkey, await signInOptions(), { origin: "https://evil.example" }),
      ],
      ["another RP ID", async () => authenticator.get(passkey, await signInOptions(), { rpId: "evil.example" })],
      ["no user verification", async () => authenticator.get(passkey, await signInOptions(), { userVerified: false })],
      [
        "another person's user handle",
        async () => authenticator.get(passkey, await signInOptions(), { userHandle: othersPasskey.userHandle }),
      ],
      [
        "a challenge never issued",
        async () =>
          authenticator.get(passkey, await signInOptions(), { challenge: base64urlEncode(new Uint8Array(32)) }),
      ],
      [
        "a registration challenge",
        async () =>
          authenticator.get(passkey, { challenge: (await registrationOptions(browser)).challenge, rpId: RP_ID }),
      ],
    ];
    const bodies = new Set<string>();
    for (const [what, answer] of attempts) {
      const stranger = new Browser();
      const response = await stranger.send("POST", "/v3.0/auth/passkeys/sign-in", { response: await answer() });
      const problem = await expectProblem(response, 400, { code: "invalid_credentials" });
      expect(response.headers.get("Set-Cookie"), what).toBeNull();
      bodies.add(JSON.stringify(problem));
    }
    expect(bodies.size).toBe(1);
    // The passkey itself still works: no failure above locked it.
    const good = await browser.send("POST", "/v3.0/auth/passkeys/sign-in", {
      response: await authenticator.get(passkey, await signInOptions()),
    });
    expect(good.status).toBe(200);
  });

  it("takes one answer per challenge, even twenty sent at once, within 5 minutes", async () => {
    const { browser } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN, false);
    const { passkey } = await register(browser, authenticator);
    const answer = await authenticator.get(passkey, await signInOptions());
    const results = await Promise.all(
      Array.from({ length: 20 }, () => new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", { response: answer })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, ...Array(19).fill(400)]);

    const late = await signInOptions();
    const issuedBy = Date.now();
    clock.now = () => issuedBy + 300_001;
    await expectProblem(
      await new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", {
        response: await authenticator.get(passkey, late),
      }),
      400,
      { code: "invalid_credentials" },
    );
  });

  it("refuses a signature counter that did not grow, and takes a synced passkey's constant 0", async () => {
    const { browser } = await signedIn();
    const counting = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, counting);
    for (let i = 1; i <= 3; i++) {
      const ok = await new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", {
        response: await counting.get(passkey, await signInOptions()),
      });
      expect(ok.status).toBe(200);
    }
    expect((await passkeyRow(passkey.id))!.counter).toBe(3);
    // A cloned authenticator reports a counter the service has seen already, or an older one.
    for (const counter of [3, 2, 0]) {
      await expectProblem(
        await new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", {
          response: await counting.get(passkey, await signInOptions(), { counter }),
        }),
        400,
        { code: "invalid_credentials" },
      );
    }
    expect((await passkeyRow(passkey.id))!.counter).toBe(3);

    const synced = new SoftwareAuthenticator(ORIGIN, false);
    const { passkey: syncedPasskey } = await register(browser, synced);
    for (let i = 0; i < 3; i++) {
      const ok = await new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", {
        response: await synced.get(syncedPasskey, await signInOptions()),
      });
      expect(ok.status).toBe(200);
    }
    expect((await passkeyRow(syncedPasskey.id))!.counter).toBe(0);
  });

  it("is refused from another origin's page, before anything is read", async () => {
    const { browser } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);
    const answer = await authenticator.get(passkey, await signInOptions());
    const stranger = new Browser();
    for (const headers of [{ "Sec-Fetch-Site": "cross-site" }, { "Sec-Fetch-Site": "same-site" }]) {
      await expectProblem(
        await stranger.send("POST", "/v3.0/auth/passkeys/sign-in", { response: answer }, headers),
        403,
        { code: "csrf_failed" },
      );
    }
    // A browser that sends no Fetch Metadata: its Origin decides.
    const fromElsewhere = await stranger.fetch("/v3.0/auth/passkeys/sign-in", {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "https://evil.example" },
      body: JSON.stringify({ response: answer }),
    });
    await expectProblem(fromElsewhere, 403, { code: "csrf_failed" });
    expect(stranger.cookies.size).toBe(0);
    // The refused requests did not use the challenge up.
    expect((await stranger.send("POST", "/v3.0/auth/passkeys/sign-in", { response: answer })).status).toBe(200);
  });

  it("takes PUBLIC_ORIGIN as the origin and RP ID, whatever host the request came to", async () => {
    const origin = "https://maps.example.org";
    // Requests come to BASE's host; the service's origin is the configured one.
    const bindings = { PUBLIC_ORIGIN: origin };
    const { browser } = await signedIn({ bindings });
    const options = await registrationOptions(browser);
    expect(options.rp.id).toBe("maps.example.org");
    // Made on the page of the host the request came to: not the service's origin.
    const onRequestHost = await new SoftwareAuthenticator(ORIGIN).create(options);
    await expectProblem(await browser.send("POST", "/v3.0/auth/passkeys", { response: onRequestHost.response }), 400, {
      code: "passkey_not_accepted",
    });
    const authenticator = new SoftwareAuthenticator(origin);
    const { passkey } = await register(browser, authenticator);
    const signInAt = await signInOptions(new Browser(nextAddress(), BASE, bindings));
    expect(signInAt.rpId).toBe("maps.example.org");
    const signIn = await new Browser(nextAddress(), BASE, bindings).send("POST", "/v3.0/auth/passkeys/sign-in", {
      response: await authenticator.get(passkey, signInAt),
    });
    expect(signIn.status, await signIn.clone().text()).toBe(200);
  });

  it("counts options and answers as sign-in attempts from the source address, as a password's are", async () => {
    const SMALL = smallLimits();
    const { signInAddress, signInEmail } = parseConfig(SMALL).rateLimits;
    await windowWithRoom(5_000, signInAddress.period);
    const browser = new Browser(nextAddress(), BASE, SMALL);
    // An answer of the right shape to a challenge this service never issued: refused, and counted.
    const answer = { response: answerExamples.signIn };
    const requests = [
      ...Array.from({ length: signInAddress.limit - 1 }, () => ["/v3.0/auth/passkeys/sign-in/options"] as const),
      ["/v3.0/auth/passkeys/sign-in", answer] as const,
      ["/v3.0/auth/passkeys/sign-in", answer] as const,
      ["/v3.0/auth/passkeys/sign-in/options"] as const,
    ];
    const statuses: number[] = [];
    for (const [path, body] of requests) {
      const response = await browser.send("POST", path, body);
      expect(response.headers.get("RateLimit-Policy")).toBe(
        `sign-in-address;q=${signInAddress.limit};w=${signInAddress.period}, ` +
          `sign-in-email;q=${signInEmail.limit};w=${signInEmail.period}`,
      );
      statuses.push(response.status);
      await response.body?.cancel();
    }
    expect(statuses).toEqual([...Array(signInAddress.limit - 1).fill(200), 400, 429, 429]);
    // Another address is not limited by this one's attempts.
    const other = new Browser(nextAddress(), BASE, SMALL);
    expect((await other.send("POST", "/v3.0/auth/passkeys/sign-in/options")).status).toBe(200);
  });
});

describe("managing passkeys", () => {
  it("renames one's own passkeys only", async () => {
    const { browser } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);
    const renamed = await browser.send("PATCH", `/v3.0/auth/passkeys/${passkey.id}`, { name: "Phone" });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ id: passkey.id, name: "Phone" });
    expect((await passkeyRow(passkey.id))!.name).toBe("Phone");
    await expectProblem(await browser.send("PATCH", `/v3.0/auth/passkeys/${passkey.id}`, { name: "" }), 400, {
      code: "validation_failed",
      pointers: ["/name"],
    });

    // Another person's passkey, and one that does not exist, are alike: 404.
    const other = await signedIn();
    for (const id of [passkey.id, base64urlEncode(new Uint8Array(16))]) {
      await expectProblem(await other.browser.send("PATCH", `/v3.0/auth/passkeys/${id}`, { name: "Mine" }), 404, {
        code: "not_found",
      });
      await expectProblem(await other.browser.send("DELETE", `/v3.0/auth/passkeys/${id}`), 404, { code: "not_found" });
    }
    expect((await passkeyRow(passkey.id))!.name).toBe("Phone");
  });

  it("never deletes the last way in of a person without a password, however many deletes run at once", async () => {
    const { browser, personId } = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await register(browser, authenticator, `Key ${i}`)).passkey.id);
    const results = await Promise.all(ids.map((id) => browser.send("DELETE", `/v3.0/auth/passkeys/${id}`)));
    expect(results.map((r) => r.status).sort()).toEqual([204, 204, 204, 204, 204, 409]);
    const refused = results.find((r) => r.status === 409)!;
    await expectProblem(refused, 409, { code: "last_credential" });
    const left = await env.DB.prepare("SELECT id FROM passkeys WHERE person_id = ?")
      .bind(personId)
      .all<{ id: string }>();
    expect(left.results).toHaveLength(1);
    // The one left is the one whose delete was refused, and it still signs in.
    const kept = authenticator.passkeys.find((p) => p.id === left.results[0]!.id)!;
    const signIn = await new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", {
      response: await authenticator.get(kept, await signInOptions()),
    });
    expect(signIn.status).toBe(200);
  });

  it("deletes the last passkey of a person who has a password", async () => {
    const { browser } = await signedIn({ password: true });
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const { passkey } = await register(browser, authenticator);
    expect((await browser.send("DELETE", `/v3.0/auth/passkeys/${passkey.id}`)).status).toBe(204);
    expect(await passkeyRow(passkey.id)).toBeNull();
    const list = await browser.send("GET", "/v3.0/auth/passkeys");
    expect(await list.json()).toEqual({ results: [], next: null, previous: null });
    // A deleted passkey signs nobody in.
    await expectProblem(
      await new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", {
        response: await authenticator.get(passkey, await signInOptions()),
      }),
      400,
      { code: "invalid_credentials" },
    );
  });

  it("lists a person's passkeys, and only theirs", async () => {
    const a = await signedIn();
    const b = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN);
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push((await register(a.browser, authenticator, `A${i}`)).json);
    await register(b.browser, authenticator, "B");
    const list = await (await a.browser.send("GET", "/v3.0/auth/passkeys")).json<Json>();
    expect(list.results).toEqual(mine);
  });
});

describe("the examples of the passkey operations in the OpenAPI document", () => {
  it("are well-formed requests, refused only because no challenge of theirs was issued here", async () => {
    const document = await (await call("/v3.0/openapi.json")).json<Json>();
    const example = (method: string, path: string) =>
      document.paths[path][method].requestBody.content["application/json"].example;
    const { browser } = await signedIn();
    await expectProblem(
      await browser.send("POST", "/v3.0/auth/passkeys", example("post", "/v3.0/auth/passkeys")),
      400,
      { code: "passkey_not_accepted" },
    );
    await expectProblem(
      await new Browser().send("POST", "/v3.0/auth/passkeys/sign-in", example("post", "/v3.0/auth/passkeys/sign-in")),
      400,
      { code: "invalid_credentials" },
    );
    const { passkey } = await register(browser, new SoftwareAuthenticator(ORIGIN));
    const rename = example("patch", "/v3.0/auth/passkeys/{id}");
    expect((await browser.send("PATCH", `/v3.0/auth/passkeys/${passkey.id}`, rename)).status).toBe(200);
  });
});

describe("challenges", () => {
  it("are kept only as hashes, and the hourly job deletes those past their expiry", async () => {
    const { challenge } = await signInOptions();
    const stored = await env.DB.prepare("SELECT * FROM auth_tickets WHERE kind = 'passkey'").all<Json>();
    const texts = stored.results.map((row) => JSON.stringify(row));
    expect(texts.some((text) => text.includes(challenge))).toBe(false);
    const hash = base64urlEncode(new Uint8Array(await crypto.subtle.digest("SHA-256", utf8.encode(challenge))));
    expect(stored.results.find((row) => row.id === hash)).toMatchObject({ person_id: null, used_at: null });

    const now = Date.now() + 300_001;
    const expired = stored.results.filter((row) => row.expires_at <= now).length;
    expect(expired).toBeGreaterThan(0);
    expect(await deleteExpiredTickets(env.DB, now)).toEqual({ deleted: expired, more: false });
    const left = await env.DB.prepare(
      "SELECT count(*) AS n FROM auth_tickets WHERE kind = 'passkey' AND expires_at <= ?",
    )
      .bind(now)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});
