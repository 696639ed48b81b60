/**
 * Local development (`npm run test:dev`, part of `npm test`):
 * - plain `wrangler dev` without local secrets: a developer who skips
 *   `npm start`, or copies .dev.vars.example without filling it in, gets one
 *   clear 503 problem on every request naming the missing secret and the
 *   commands that set it. wrangler reads the committed template instead of
 *   any .dev.vars in the working copy;
 * - `npm start`'s first screen shows the development person's email and
 *   password beside the client's credentials, and they sign in; a restart
 *   shows the same person and password.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { keepingLocalFiles, startDevServer, startLocal, type DevServer } from "./lib/dev-server.ts";
import { personToken, signIn } from "./lib/sign-in.ts";

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

test("npm start's first screen shows the development person, who signs in; a restart keeps them", () =>
  keepingLocalFiles(async () => {
    const state = join(scratch, "local-state");
    const screens: { email: string; password: string }[] = [];
    for (const start of ["first", "second"]) {
      const local = await startLocal(["--persist-to", state]);
      try {
        const output = local.output();
        const screen = output.slice(0, output.indexOf("Get a token:"));
        const email = /^ {2}Person: +(\S+)$/m.exec(screen)?.[1];
        const password = /^ {2}Password: +(\S+)$/m.exec(screen)?.[1];
        assert.ok(email && password, `no person on the ${start} screen:\n${output}`);
        assert.match(screen, /^ {2}Client secret: +\S+$/m);
        assert.match(screen, /^ {2}\(owner of "development"; kept in \.dev-person\.json;/m);
        assert.match(screen, /^ {2}or on http:\/\/\S+\/auth\/passkey\.html, where they add their passkeys\)$/m);
        screens.push({ email, password });
        if (start === "first")
          assert.match(output, /^Created the development person developer@example\.com, owner of "development" /m);
        else assert.doesNotMatch(output, /development person/);

        // The person acts in the development account, as its owner: they read and write.
        const token = await personToken(await signIn(local.base, email, password));
        const created = await fetch(`${local.base}/v3.0/pinpoints`, {
          method: "POST",
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
          body: JSON.stringify({ name: `Placed at the ${start} start`, latitude: 48.85, longitude: 2.35 }),
        });
        assert.equal(created.status, 201, await created.clone().text());
      } finally {
        await local.stop();
      }
    }
    assert.deepEqual(screens[1], screens[0]);
    assert.equal(screens[0]!.email, "developer@example.com");
  }));
