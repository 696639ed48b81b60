/**
 * The API reference against the running service (`npm run test:docs`, part
 * of `npm test`): starts `wrangler dev` on a free port with a fresh local
 * database and a registered client, then checks that
 * - /v3.0/openapi.json is served without a token and is a valid OpenAPI 3.1
 *   document (@seriousme/openapi-schema-validator, the official JSON schemas),
 *   and so is /ogc/api, the OGC API's part of it with /ogc as its server;
 * - /docs works in a real browser (Debian's Chromium, driven by
 *   playwright-core): it lists every operation, a developer gets a token with
 *   the client credentials flow in the Authorize dialog and "try it" calls
 *   succeed, the page's own examples included, more than once (no header
 *   example is pre-filled into every request), and the page loads nothing
 *   from outside this machine.
 * Screenshots go to $DOCS_SCREENSHOTS (default: the system temp folder).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { Page } from "playwright-core";
import { launchChromium, outsideRequests } from "./lib/chromium.ts";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";
import { createClient } from "./lib/registry.ts";
import { tokenOf } from "./lib/transfer.ts";
import { d1Execute, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const SCREENSHOTS = process.env.DOCS_SCREENSHOTS ?? tmpdir();

type Document = { servers: { url: string }[]; paths: Record<string, Record<string, { operationId: string }>> };

const scratch = mkdtempSync(join(tmpdir(), "poi-docs-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let server: DevServer | undefined;
let base = "";
let client: { client_id: string; client_secret: string };

before(async () => {
  // No standard input: wrangler applies the migrations without asking.
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  assert.equal(status, 0, "wrangler d1 migrations apply failed");
  client = await createClient(d1Execute(target), { account: "docs test", name: "browser", scope: "read write" });
  server = await startDevServer([
    ...targetFlags(target),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
  ]);
  base = server.base;
});

after(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("GET /v3.0/openapi.json needs no token and is a valid OpenAPI 3.1 document", async () => {
  const response = await fetch(`${base}/v3.0/openapi.json`);
  assert.equal(response.status, 200);
  const document = (await response.json()) as Document & { openapi: string };
  assert.match(document.openapi, /^3\.1\./);
  assert.deepEqual(document.servers, [{ url: base }]);
  const result = await new Validator().validate(document);
  assert.ok(result.valid, `not a valid OpenAPI 3.1 document:\n${JSON.stringify(result.errors, null, 2)}`);
});

test("GET /ogc/api, the OGC landing page's service-desc, is a valid OpenAPI 3.1 document served at /ogc", async () => {
  const token = await tokenOf({ base, clientId: client.client_id, clientSecret: client.client_secret });
  const response = await fetch(`${base}/ogc/api`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(response.status, 200);
  const document = (await response.json()) as Document & { openapi: string };
  assert.deepEqual(document.servers, [{ url: `${base}/ogc` }]);
  assert.ok(document.paths["/collections/{collectionId}/queryables"], Object.keys(document.paths).join(", "));
  const result = await new Validator().validate(document);
  assert.ok(result.valid, `not a valid OpenAPI 3.1 document:\n${JSON.stringify(result.errors, null, 2)}`);
});

async function authorize(page: Page): Promise<void> {
  await page.locator(".auth-wrapper button.authorize").click();
  const oauth = page.locator(".auth-container", { hasText: "clientCredentials" });
  await oauth.locator("#client_id_clientCredentials").fill(client.client_id);
  await oauth.locator("#client_secret_clientCredentials").fill(client.client_secret);
  await oauth.getByText("select all").click();
  await oauth.getByRole("button", { name: "Apply given OAuth2 credentials" }).click();
  await oauth.locator("button", { hasText: "Logout" }).waitFor();
  await page.screenshot({ path: join(SCREENSHOTS, "docs-authorized.png") });
  await oauth.locator("button.btn-done").click();
}

type Try = { body?: unknown; params?: Record<string, string> };

/**
 * Opens an operation (unless open), fills path parameters and optionally replaces its JSON body (else the
 * page's own example is sent), runs it and returns the status and the body shown.
 */
async function tryOperation(
  page: Page,
  tag: string,
  operationId: string,
  { body, params = {} }: Try = {},
): Promise<{ status: string; shown: string }> {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  if (!(await block.evaluate((element) => element.classList.contains("is-open"))))
    await block.locator(".opblock-summary").click();
  for (const [name, value] of Object.entries(params))
    await block.locator(`tr[data-param-name="${name}"] input`).fill(value);
  if (body !== undefined) await block.locator("textarea.body-param__text").fill(JSON.stringify(body));
  // A second run of the same operation: clear the first answer, so the one read below is the new one.
  const clear = block.locator("button.btn-clear");
  if ((await clear.count()) > 0) await clear.click();
  await block.locator("button.execute").click();
  const response = block.locator(".live-responses-table .response").first();
  const status = response.locator(".response-col_status");
  await status.waitFor();
  const shown = await response.locator(".response-col_description").innerText();
  return { status: (await status.innerText()).trim().split("\n")[0]!, shown };
}

/** The `id` of the resource a shown answer describes. */
const shownId = (shown: string): string => {
  const id = /"id":\s*(\d+)/.exec(shown)?.[1];
  assert.ok(id, `no id in the answer shown:\n${shown}`);
  return id;
};

test("/docs lists every operation, gets a token and tries calls, all offline", async () => {
  const document = (await (await fetch(`${base}/v3.0/openapi.json`)).json()) as Document;
  const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));

  const context = await launchChromium(join(scratch, "chromium-profile"));
  const outside = outsideRequests(context);
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    // The page runs under a strict Content-Security-Policy; anything it blocks is reported on the console.
    const blocked: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) blocked.push(message.text());
    });
    const response = await page.goto(`${base}/docs`);
    assert.match(response?.headers()["content-security-policy"] ?? "", /script-src 'self' 'sha256-/);
    await page.locator(".opblock").first().waitFor();
    assert.equal(await page.locator(".opblock").count(), operations.length, "every operation is listed");
    await page.screenshot({ path: join(SCREENSHOTS, "docs-page.png") });

    await authorize(page);
    const pinpoint = { name: "Docs test café", latitude: 48.8566, longitude: 2.3522, tags: ["test"] };
    const created = await tryOperation(page, "pinpoints", "createPinpoint", { body: pinpoint });
    assert.equal(created.status, "201", created.shown);
    assert.equal((await tryOperation(page, "pinpoints", "listPinpoints")).status, "200");
    const shown = await page
      .locator("#operations-pinpoints-listPinpoints .live-responses-table .response .response-col_description")
      .first()
      .innerText();
    assert.match(shown, /Docs test café/);
    await page
      .locator("#operations-pinpoints-listPinpoints")
      .screenshot({ path: join(SCREENSHOTS, "docs-try-it.png") });

    // A newcomer's next requests, with what the page fills in itself: no header example (an idempotency
    // key, an If-Match) is sent with every request, and every example body is accepted.
    const second = await tryOperation(page, "pinpoints", "createPinpoint");
    assert.equal(second.status, "201", `the page's own example body:\n${second.shown}`);
    const list = await tryOperation(page, "lists", "createList");
    assert.equal(list.status, "201", list.shown);
    const category = await tryOperation(page, "categories", "createCategory");
    assert.equal(category.status, "201", category.shown);
    const params = { id: shownId(second.shown) };
    const updated = await tryOperation(page, "pinpoints", "updatePinpoint", { params });
    assert.equal(updated.status, "200", updated.shown);
    const deleted = await tryOperation(page, "pinpoints", "deletePinpoint", { params });
    assert.equal(deleted.status, "204", deleted.shown);
    const again = await tryOperation(page, "lists", "createList");
    assert.equal(again.status, "201", `the same POST again is a new request:\n${again.shown}`);
    assert.notEqual(shownId(again.shown), shownId(list.shown));
    assert.deepEqual(outside, [], "the page loads nothing from outside this machine");
    assert.deepEqual(blocked, [], "the Content-Security-Policy blocks nothing the page needs");
  } finally {
    await context.close();
  }
});
