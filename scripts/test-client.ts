/**
 * The typed client against the running service (`npm run test:client`, part
 * of `npm test`): builds client/ (its package and its tests, which import the
 * package by name), starts `wrangler dev` on a fresh database with a
 * registered client and short-lived tokens (so the suite sees them renewed),
 * then runs the client's node:test suites on the system's Node, the first
 * `node` on PATH outside node_modules (the npm scripts' own is Node 22; the
 * client promises Node 20+), or CLIENT_TEST_NODE.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { startDevServer } from "./lib/dev-server.ts";
import { createClient } from "./lib/registry.ts";
import { d1Execute, ROOT, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const TOKEN_TTL_SECONDS = 6;

function systemNode(): string {
  if (process.env.CLIENT_TEST_NODE) return process.env.CLIENT_TEST_NODE;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "" || dir.split(/[\\/]/).includes("node_modules")) continue;
    try {
      accessSync(join(dir, "node"), constants.X_OK);
      return join(dir, "node");
    } catch {
      // Not here.
    }
  }
  return process.execPath;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: "inherit", env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
run(process.execPath, [tsc, "-p", "client"]);
run(process.execPath, [tsc, "-p", "client/test"]);

const scratch = mkdtempSync(join(tmpdir(), "poi-client-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let status = 1;
try {
  if (runWrangler(["d1", "migrations", "apply", "DB", ...targetFlags(target)], ["ignore", "ignore", "inherit"]) !== 0) {
    throw new Error("wrangler d1 migrations apply failed");
  }
  const client = await createClient(d1Execute(target), { account: "client test", name: "typed", scope: "read write" });
  const server = await startDevServer([
    ...targetFlags(target),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
    "--var",
    `TOKEN_TTL_SECONDS:${TOKEN_TTL_SECONDS}`,
  ]);
  try {
    const node = systemNode();
    const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
    process.stdout.write(`# the client's tests on ${node} ${version}\n`);
    const result = spawnSync(node, ["--test", "client/dist-test/"], {
      cwd: ROOT,
      stdio: "inherit",
      env: {
        ...process.env,
        POI_BASE: server.base,
        POI_CLIENT_ID: client.client_id,
        POI_CLIENT_SECRET: client.client_secret,
        POI_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS),
      },
    });
    status = result.status ?? 1;
  } finally {
    await server.stop();
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(status);
