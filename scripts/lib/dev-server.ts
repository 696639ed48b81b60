/**
 * A throwaway `wrangler dev` for the scripts that test against the running
 * service (test-docs.ts, test-gis.ts): a fresh local database under a scratch
 * folder, migrations applied, one registered client, a free port, and a stop
 * that takes workerd down with it.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "./registry.ts";
import { d1Execute, ROOT, runWrangler, targetFlags, type Target } from "./wrangler.ts";

const STARTUP_MS = 90_000;

export type DevServer = {
  /** `http://127.0.0.1:PORT` */
  base: string;
  client: { client_id: string; client_secret: string };
  /** Where scratch files may go; removed by `stop()`. */
  scratch: string;
  /** What wrangler printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (!child.pid || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 10_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    process.kill(-child.pid!, "SIGTERM");
  });
}

/** Starts `wrangler dev` (in its own process group, so stopping it stops workerd too) on a fresh database. */
export async function startDevServer(name: string): Promise<DevServer> {
  const scratch = mkdtempSync(join(tmpdir(), `poi-${name}-`));
  const target: Target = { remote: false, persistTo: join(scratch, "state") };
  // No standard input: wrangler applies the migrations without asking.
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  assert.equal(status, 0, "wrangler d1 migrations apply failed");
  const client = await createClient(d1Execute(target), { account: `${name} test`, name, scope: "read write" });

  const port = await freePort();
  const wrangler = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  const args = [wrangler, "dev", ...targetFlags(target), "--ip", "127.0.0.1", "--port", String(port)];
  args.push("--var", `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  const server: DevServer = {
    base: `http://127.0.0.1:${port}`,
    client,
    scratch,
    output: () => output,
    async stop() {
      await stopChild(child);
      rmSync(scratch, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + STARTUP_MS;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`${server.base}/v3.0/openapi.json`)).ok) return server;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  await server.stop();
  throw new Error(`wrangler dev did not start:\n${output}`);
}

/** A bearer token for the server's client. */
export async function tokenFor(server: DevServer): Promise<string> {
  const response = await fetch(`${server.base}/v3.0/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "client_credentials",
      client_id: server.client.client_id,
      client_secret: server.client.client_secret,
    }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { access_token: string }).access_token;
}
