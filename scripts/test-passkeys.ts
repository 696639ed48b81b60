/**
 * The passkey page in a real browser (`npm run test:people`, one of the
 * end-to-end suites `npm test` runs; about a minute and a half): starts
 * `wrangler dev` with a fresh local database, makes an account with a client
 * and a place, and people who are editors there (as `npm run people --
 * create` makes them), one with TOTP on, and opens the page
 * (/auth/passkey.html, static/auth/) in Debian's Chromium with a virtual
 * authenticator from the DevTools WebAuthn domain (CTAP2, internal transport,
 * resident keys, user verification) standing in for the platform's. It
 * checks that:
 * - a wrong password gets the page's error, announced (role=alert), and
 *   signs nobody in;
 * - the person signs in with their email and password on the page, with
 *   nothing but a password to their name, as `npm start`'s development
 *   person does;
 * - the page registers a passkey for them: the authenticator holds one
 *   discoverable credential for the RP ID `localhost` with the person's user
 *   handle, the service stores the same credential, and the page lists it;
 * - registering again on the same authenticator is refused by the browser
 *   (the options exclude the passkeys the person has) and stores nothing;
 * - the page renames the passkey, and signs out: the session cookie is gone;
 * - signed out, the page signs in with the passkey, no email typed, into a
 *   new session whose cookie is HttpOnly and SameSite=Lax, as a password
 *   sign-in's is; the signature counter the authenticator reports is stored;
 * - the session works: the page mints a person's access token from it, and
 *   that token reads the account's places, in the browser and outside it;
 * - the page deletes the passkey (the person has a password to sign in with);
 * - a person with TOTP on is asked for their code after the password, and
 *   signs in with a recovery code; a wrong one gets the page's error.
 * The page is served on http://localhost, not 127.0.0.1: an RP ID is a
 * domain, never an IP address, and browsers take localhost as secure.
 * Screenshots go to $PASSKEY_SCREENSHOTS (default: the system temp folder).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { BrowserContext, CDPSession, Page } from "playwright-core";
import { launchChromium } from "./lib/chromium.ts";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";
import { createPerson } from "./lib/people.ts";
import { createClient, type Execute } from "./lib/registry.ts";
import { cookieHeader, signIn, type Session } from "./lib/sign-in.ts";
import { tokenOf } from "./lib/transfer.ts";
import { d1Execute, ROOT, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const SCREENSHOTS = process.env.PASSKEY_SCREENSHOTS ?? tmpdir();
const ACCOUNT = "passkeys test";
const EMAIL = "editor@example.test";
const PASSWORD = "a long phrase the passkey test signs in with";
const TOTP_EMAIL = "careful@example.test";

const scratch = mkdtempSync(join(tmpdir(), "poi-passkeys-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let execute: Execute;
let server: DevServer | undefined;
/** The page's origin: localhost, on the dev server's port. */
let origin = "";
let personId = 0;
let placeId = 0;

before(async () => {
  // The page and SimpleWebAuthn's browser script, as `npm install` copies them into public/.
  const assets = spawnSync(process.execPath, [join(ROOT, "scripts", "static-assets.ts")], { stdio: "inherit" });
  assert.equal(assets.status, 0, "scripts/static-assets.ts failed");
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  assert.equal(status, 0, "wrangler d1 migrations apply failed");
  execute = d1Execute(target);
  const client = await createClient(execute, { account: ACCOUNT, name: "seed", scope: "read write" });
  const person = await createPerson(execute, {
    account: ACCOUNT,
    email: EMAIL,
    role: "editor",
    name: "Eda Editor",
    password: PASSWORD,
  });
  personId = person.person_id;
  server = await startDevServer([
    ...targetFlags(target),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
  ]);
  origin = `http://localhost:${new URL(server.base).port}`;
  const token = await tokenOf({ base: server.base, clientId: client.client_id, clientSecret: client.client_secret });
  const created = await fetch(`${server.base}/v3.0/pinpoints`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Passkey test square", latitude: 45.76, longitude: 4.83 }),
  });
  assert.equal(created.status, 201, await created.clone().text());
  placeId = ((await created.json()) as { id: number }).id;
});

after(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/**
 * Chromium on the page, with a fresh profile (`name`) and a virtual authenticator; `errors` collects what
 * the page throws or logs as an error, but the failed requests its own checks expect (a 401 for the
 * session of a browser signed out, a 400 for a wrong password or code).
 */
async function openPage(name: string) {
  const context = await launchChromium(join(scratch, name), { width: 800, height: 900 });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !/status of (400|401)/.test(message.text())) errors.push(message.text());
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable", { enableUI: false });
  const { authenticatorId } = (await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      ctap2Version: "ctap2_1",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  })) as { authenticatorId: string };
  await page.goto(`${origin}/auth/passkey.html`);
  await waitForState(page, "signed-out");
  return { context, page, cdp, authenticatorId, errors };
}

/**
 * The page's state (static/auth/passkey.js) once it is `state`, with what it says: #status, or #error (the
 * alert) when the state is "error". Fails with the page's words when it is in another state.
 */
async function waitForState(page: Page, state: string): Promise<string> {
  await page.waitForFunction((wanted) => ["error", wanted].includes(document.body.dataset.state ?? ""), state, {
    timeout: 30_000,
  });
  const [shown, status, error] = await page.evaluate(() => [
    document.body.dataset.state,
    document.getElementById("status")!.textContent,
    document.getElementById("error")!.textContent,
  ]);
  assert.equal(shown, state, `the page says: ${status}${error}`);
  return (state === "error" ? error : status) ?? "";
}

/** Types `email` and `password` into the page's sign-in form and sends it. */
async function signInOnPage(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** Whom the page says is signed in. */
const signedInAs = (page: Page) => page.locator("#who").textContent();

/** The id of the element that has the focus. */
const focused = (page: Page) => page.evaluate(() => document.activeElement?.id);

type VirtualCredential = {
  credentialId: string;
  isResidentCredential: boolean;
  rpId: string;
  userHandle: string;
  signCount: number;
};

async function credentials(cdp: CDPSession, authenticatorId: string): Promise<VirtualCredential[]> {
  return ((await cdp.send("WebAuthn.getCredentials", { authenticatorId })) as { credentials: VirtualCredential[] })
    .credentials;
}

/** The passkeys the service stores for the person. */
async function storedPasskeys(): Promise<{ id: string; name: string; counter: number }[]> {
  const [rows] = await execute([
    `SELECT id, name, counter FROM passkeys WHERE person_id = ${personId} ORDER BY created_at`,
  ]);
  return rows as { id: string; name: string; counter: number }[];
}

/** base64 (as DevTools gives credential ids and user handles) to base64url, as the service stores them. */
const base64url = (base64: string) => Buffer.from(base64, "base64").toString("base64url");

test("the page may not be framed by another site, and its files are never sniffed as another type", async () => {
  const page = await fetch(`${origin}/auth/passkey.html`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get("Content-Security-Policy") ?? "", /(^|;)\s*frame-ancestors 'none'\s*(;|$)/);
  assert.equal(page.headers.get("X-Frame-Options"), "DENY");
  assert.equal(page.headers.get("X-Content-Type-Options"), "nosniff");
  const script = await fetch(`${origin}/auth/passkey.js`);
  assert.equal(script.headers.get("X-Content-Type-Options"), "nosniff");
});

test("a person with a password signs in on the page, registers a passkey, and signs in with it", async () => {
  let context: BrowserContext | undefined;
  try {
    const opened = await openPage("chromium-profile");
    context = opened.context;
    const { page, cdp, authenticatorId, errors } = opened;
    const sessionCookie = async () => (await context!.cookies(origin)).find((c) => c.name === "poi_session");

    // A wrong password: the page's alert says so, the focus is back on the password, nobody is signed in.
    await signInOnPage(page, EMAIL, "not the password at all");
    assert.equal(await waitForState(page, "error"), "The email or password is wrong.");
    assert.equal(await page.getByRole("alert").textContent(), "The email or password is wrong.");
    assert.equal(await focused(page), "password");
    assert.equal(await page.getByLabel("Password").inputValue(), "", "the page keeps no password");
    await page.screenshot({ path: join(SCREENSHOTS, "passkey-wrong-password.png") });
    assert.equal(await sessionCookie(), undefined);

    // The right one: signed in, with no passkey yet; the focus on who is signed in, which says so.
    await signInOnPage(page, EMAIL, PASSWORD);
    await waitForState(page, "signed-in");
    assert.equal(await focused(page), "who");
    assert.equal(await signedInAs(page), `Signed in as Eda Editor (${EMAIL}).`);
    assert.equal(await page.getByRole("alert").textContent(), "");
    assert.ok(await page.getByText("You have no passkey yet.").isVisible());
    const cookie = (await sessionCookie())!.value;

    await page.getByLabel("Name of the new passkey").fill("Test laptop");
    await page.getByRole("button", { name: "Register a passkey" }).click();
    assert.match(await waitForState(page, "registered"), /Test laptop/);
    const [held] = await credentials(cdp, authenticatorId);
    assert.ok(held, "the authenticator holds the new passkey");
    assert.equal(held.isResidentCredential, true, "a discoverable credential");
    assert.equal(held.rpId, "localhost");
    assert.equal(Buffer.from(held.userHandle, "base64").toString(), `person:${personId}`);
    assert.deepEqual(await storedPasskeys(), [
      { id: base64url(held.credentialId), name: "Test laptop", counter: held.signCount },
    ]);
    assert.ok(await page.getByRole("group", { name: "Test laptop" }).isVisible(), "the page lists it");
    assert.equal(await page.getByText("You have no passkey yet.").isVisible(), false);

    // The options exclude the passkey the authenticator holds: the browser refuses to make another.
    await page.getByRole("button", { name: "Register a passkey" }).click();
    await waitForState(page, "error");
    assert.equal((await credentials(cdp, authenticatorId)).length, 1);
    assert.equal((await storedPasskeys()).length, 1);

    const listed = page.getByRole("group", { name: "Test laptop" });
    await listed.getByLabel("Name").fill("Work laptop");
    await listed.getByRole("button", { name: "Rename" }).click();
    assert.equal(await waitForState(page, "renamed"), "Passkey “Test laptop” renamed “Work laptop”.");
    assert.equal((await storedPasskeys())[0]!.name, "Work laptop");
    await page.screenshot({ path: join(SCREENSHOTS, "passkey-registered.png") });

    await page.getByRole("button", { name: "Sign out" }).click();
    assert.equal(await waitForState(page, "signed-out"), "Not signed in.");
    assert.equal(await sessionCookie(), undefined, "signing out removes the cookie");
    assert.equal(await focused(page), "email");

    // Signed in again with the passkey alone.
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await waitForState(page, "signed-in");
    assert.equal(await signedInAs(page), `Signed in as Eda Editor (${EMAIL}).`);
    await page.screenshot({ path: join(SCREENSHOTS, "passkey-signed-in.png") });
    const session = await sessionCookie();
    assert.ok(session, "the session cookie is set");
    assert.notEqual(session.value, cookie, "a new session, not the one registered from");
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Lax");
    const [signed] = await credentials(cdp, authenticatorId);
    const [stored] = await storedPasskeys();
    assert.ok(signed!.signCount > held.signCount, "the virtual authenticator counts signatures");
    assert.equal(stored!.counter, signed!.signCount);

    // The session mints a person's token (cookie and CSRF token), which reads the account's places.
    const fromPage = await page.evaluate(async () => {
      const { csrf_token } = (await (await fetch("/v3.0/auth/session")).json()) as { csrf_token: string };
      const minted = await fetch("/v3.0/auth/token", {
        method: "POST",
        headers: { "X-CSRF-Token": csrf_token, "Content-Type": "application/json" },
        body: "{}",
      });
      const { access_token } = (await minted.json()) as { access_token: string };
      const places = await fetch("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${access_token}` } });
      return {
        token: access_token,
        status: places.status,
        ids: ((await places.json()) as { results: { id: number }[] }).results.map((p) => p.id),
      };
    });
    assert.equal(fromPage.status, 200);
    assert.deepEqual(fromPage.ids, [placeId]);
    const outside = await fetch(`${server!.base}/v3.0/pinpoints/${placeId}`, {
      headers: { Authorization: `Bearer ${fromPage.token}` },
    });
    assert.equal(outside.status, 200, await outside.clone().text());

    // Deleted after the page asks; the person still has their password. The token above started a new
    // session (the account chosen) with a new CSRF token, which the page reads for this write.
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("group", { name: "Work laptop" }).getByRole("button", { name: "Delete" }).click();
    assert.equal(await waitForState(page, "deleted"), "Passkey “Work laptop” deleted.");
    assert.deepEqual(await storedPasskeys(), []);
    assert.ok(await page.getByText("You have no passkey yet.").isVisible());
    assert.deepEqual(errors, []);
  } finally {
    await context?.close();
  }
});

/**
 * The TOTP code (RFC 6238: HMAC-SHA-1, 30-second steps, 6 digits) of a base32 secret, now, as an
 * authenticator app makes it; src/people/totp.ts runs only in workerd (.dependency-cruiser.cjs, PORTABLE).
 */
function totpCode(secret: string): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const bits = [...secret].map((char) => alphabet.indexOf(char).toString(2).padStart(5, "0")).join("");
  const key = Buffer.from(bits.match(/.{8}/g)!.map((byte) => parseInt(byte, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30_000)));
  const mac = createHmac("sha1", key).update(counter).digest();
  return String((mac.readUInt32BE(mac[19]! & 0xf) & 0x7fffffff) % 1_000_000).padStart(6, "0");
}

/** A write with the script's session (cookie and CSRF token); its JSON answer. */
async function sessionWrite(session: Session, path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(new URL(path, session.base), {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Cookie: cookieHeader(session),
      "X-CSRF-Token": session.csrf,
    },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, `${path}: ${await response.clone().text()}`);
  return (await response.json()) as Record<string, unknown>;
}

test("a person with TOTP on gives their code on the page after the password", async () => {
  await createPerson(execute, {
    account: ACCOUNT,
    email: TOTP_EMAIL,
    role: "editor",
    name: "Cy Careful",
    password: PASSWORD,
  });
  const script = await signIn(server!.base, TOTP_EMAIL, PASSWORD);
  const { secret } = (await sessionWrite(script, "/v3.0/auth/totp", {})) as { secret: string };
  const confirmed = await sessionWrite(script, "/v3.0/auth/totp/confirm", { code: totpCode(secret) });
  const [recoveryCode] = confirmed.recovery_codes as string[];

  let context: BrowserContext | undefined;
  try {
    const opened = await openPage("chromium-profile-totp");
    context = opened.context;
    const { page, errors } = opened;
    await signInOnPage(page, TOTP_EMAIL, PASSWORD);
    await waitForState(page, "second-factor");
    assert.equal(await focused(page), "code");

    await page.getByLabel("Code from your authenticator app, or a recovery code").fill("aaaaa-aaaaa");
    await page.getByRole("button", { name: "Continue" }).click();
    assert.equal(await waitForState(page, "error"), "The code does not match, or was used already.");
    assert.equal(await focused(page), "code");

    await page.getByLabel("Code from your authenticator app, or a recovery code").fill(recoveryCode!);
    await page.getByRole("button", { name: "Continue" }).click();
    await waitForState(page, "signed-in");
    assert.equal(await signedInAs(page), `Signed in as Cy Careful (${TOTP_EMAIL}).`);
    assert.deepEqual(errors, []);
  } finally {
    await context?.close();
  }
});
