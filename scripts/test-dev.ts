/**
 * Plain `wrangler dev` without local secrets (`npm run test:dev`, part of
 * `npm test`): a developer who skips `npm start`, or copies .dev.vars.example
 * without filling it in, gets one clear 503 problem on every request naming
 * the missing secret and the commands that set it. wrangler reads the
 * committed template instead of any .dev.vars in the working copy.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";

const scratch = mkdtempSync(join(tmpdir(), "poi-dev-test-"));
let server: DevServer;

before(async () => {
  server = await startDevServer(["--local", "--persist-to", join(scratch, "state"), "--env-file", ".dev.vars.example"]);
});

after(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const requests: [string, RequestInit][] = [
  [
    "/v3.0/oauth2/token",
    {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: `Basic ${btoa("id:secret")}` },
      body: "grant_type=client_credentials",
    },
  ],
  ["/v3.0/pinpoints", { headers: { Authorization: "Bearer x" } }],
  ["/v3.0/openapi.json", {}],
  ["/media/builtin/default-pin.png", {}],
];

for (const [path, init] of requests) {
  test(`${init.method ?? "GET"} ${path} answers 503 not_configured naming TOKEN_SIGNING_KEY`, async () => {
    const response = await fetch(`${server.base}${path}`, init);
    assert.equal(response.status, 503, server.output());
    assert.equal(response.headers.get("Content-Type"), "application/problem+json");
    const problem = (await response.json()) as { type: string; status: number; detail: string; instance: string };
    assert.equal(problem.type, "urn:poi-api:problem:not_configured");
    assert.equal(problem.status, 503);
    assert.equal(problem.instance, path);
    assert.match(problem.detail, /^TOKEN_SIGNING_KEY is not set/);
    assert.match(problem.detail, /`npm start`/);
    assert.match(problem.detail, /\.dev\.vars\.example/);
    assert.match(problem.detail, /`npx wrangler secret put TOKEN_SIGNING_KEY`/);
  });
}
