/**
 * Passkeys in a real browser (`npm run test:people`, run on its own: at about
 * a minute and a half on a busy 2-core machine it is kept out of `npm test`):
 * starts `wrangler dev` with a fresh local database, makes an account with a
 * client and a place, and a person who is an editor there (as `npm run
 * people -- create` makes one), and opens the passkey page
 * (/auth/passkey.html, static/auth/) in Debian's Chromium with a virtual
 * authenticator from the DevTools WebAuthn domain (CTAP2, internal transport,
 * resident keys, user verification) standing in for the platform's. The
 * person signs in with their password from the page first. It checks that:
 * - the page registers a passkey for the person: the authenticator holds one
 *   discoverable credential for the RP ID `localhost` with the person's user
 *   handle, and the service stores the same credential;
 * - registering again on the same authenticator is refused by the browser
 *   (the options exclude the passkeys the person has) and stores nothing;
 * - signed out, the page signs in with the passkey, no email typed, into a
 *   new session whose cookie is HttpOnly and SameSite=Lax, as a password
 *   sign-in's is; the signature counter the authenticator reports is stored;
 * - the session works: the page mints a person's access token from it, and
 *   that token reads the account's places, in the browser and outside it.
 * The page is served on http://localhost, not 127.0.0.1: an RP ID is a
 * domain, never an IP address, and browsers take localhost as secure.
 * Screenshots go to $PASSKEY_SCREENSHOTS (default: the system temp folder).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { BrowserContext, CDPSession, Page } from "playwright-core";
import { launchChromium } from "./lib/chromium.ts";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";
import { createPerson } from "./lib/people.ts";
import { createClient, type Execute } from "./lib/registry.ts";
import { tokenOf } from "./lib/transfer.ts";
import { d1Execute, ROOT, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const SCREENSHOTS = process.env.PASSKEY_SCREENSHOTS ?? tmpdir();
const EMAIL = "editor@example.test";
const PASSWORD = "a long phrase the passkey test signs in with";

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
  const account = "passkeys test";
  const client = await createClient(execute, { account, name: "seed", scope: "read write" });
  const person = await createPerson(execute, {
    account,
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

/** The page's state (static/auth/passkey.js) once it is `state`; fails with its sentence otherwise. */
async function waitForState(page: Page, state: string): Promise<string> {
  await page.waitForFunction((wanted) => ["error", wanted].includes(document.body.dataset.state ?? ""), state, {
    timeout: 30_000,
  });
  const [shown, message] = await page.evaluate(() => [
    document.body.dataset.state,
    document.getElementById("status")!.textContent,
  ]);
  assert.equal(shown, state, `the page says: ${message}`);
  return message ?? "";
}

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

test("a passkey registered in Chromium signs its person in, and the session works", async () => {
  let context: BrowserContext | undefined;
  try {
    context = await launchChromium(join(scratch, "chromium-profile"), { width: 800, height: 600 });
    const page = context.pages()[0] ?? (await context.newPage());
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error" && !/status of 401/.test(message.text())) errors.push(message.text());
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

    // Signed in with the password, from the page, as the browser app signs in.
    await page.goto(`${origin}/auth/passkey.html`);
    await waitForState(page, "signed-out");
    const signedIn = await page.evaluate(
      async (body) =>
        (
          await fetch("/v3.0/auth/sign-in", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify(body),
          })
        ).status,
      { email: EMAIL, password: PASSWORD },
    );
    assert.equal(signedIn, 200);
    const sessionCookie = async () => (await context!.cookies(origin)).find((c) => c.name === "poi_session");
    const cookie = (await sessionCookie())!.value;
    await page.reload();
    await waitForState(page, "signed-in");

    await page.getByLabel("Name").fill("Test laptop");
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

    // The options exclude the passkey the authenticator holds: the browser refuses to make another.
    await page.getByRole("button", { name: "Register a passkey" }).click();
    await waitForState(page, "error");
    assert.equal((await credentials(cdp, authenticatorId)).length, 1);
    assert.equal((await storedPasskeys()).length, 1);

    // Signed out, then in again with the passkey alone.
    await context.clearCookies();
    await page.reload();
    await waitForState(page, "signed-out");
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    assert.equal(await waitForState(page, "signed-in"), `Signed in as Eda Editor (${EMAIL}).`);
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
    assert.deepEqual(errors, []);
  } finally {
    await context?.close();
  }
});
