/**
 * `wrangler dev`, or `npm start` around it, as a child process for the
 * end-to-end tests: on 127.0.0.1 and a free port, in its own process group so
 * that stopping it stops workerd too.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { ROOT } from "./wrangler.ts";

const STARTUP_MS = 90_000;
/** `npm start` applies every migration to a fresh state first: minutes on a busy machine. */
export const LOCAL_STARTUP_MS = 300_000;

export type DevServer = { base: string; output: () => string; stop: () => Promise<void> };

/** A TCP port of 127.0.0.1 that nothing listens on now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `wrangler dev ARGS` and resolves once the Worker answers a request (with any status). */
export async function startDevServer(args: readonly string[]): Promise<DevServer> {
  const wrangler = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  return serving("wrangler dev", STARTUP_MS, await freePort(), (port) => [
    wrangler,
    "dev",
    ...args,
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
  ]);
}

/**
 * Starts `npm start` (scripts/dev.ts) with ARGS, on 127.0.0.1 and a free port, and resolves once the
 * Worker answers a request; `output()` holds what it printed, its first screen first.
 */
export async function startLocal(args: readonly string[]): Promise<DevServer> {
  return serving("npm start", LOCAL_STARTUP_MS, await freePort(), (port) => [
    join(ROOT, "scripts", "dev.ts"),
    "--port",
    String(port),
    ...args,
    "--",
    "--ip",
    "127.0.0.1",
  ]);
}

/**
 * Runs Node with the arguments `argvFor(port)` gives, in a process group of its own, until it serves on
 * `port`; stops it and throws when it has not after `startupMs`.
 */
async function serving(
  what: string,
  startupMs: number,
  port: number,
  argvFor: (port: number) => string[],
): Promise<DevServer> {
  const child = spawn(process.execPath, argvFor(port), {
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
    output: () => output,
    stop: () => {
      if (!child.pid || child.exitCode !== null) return Promise.resolve();
      return new Promise((resolve) => {
        const kill = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 10_000);
        child.once("exit", () => {
          clearTimeout(kill);
          resolve();
        });
        process.kill(-child.pid!, "SIGTERM");
      });
    },
  };
  const deadline = Date.now() + startupMs;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      await fetch(`${server.base}/v3.0/openapi.json`);
      return server;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  await server.stop();
  throw new Error(`${what} did not start:\n${output}`);
}

/**
 * A GET, sent again once if its connection fails: a suite that blocked its event loop (spawnSync) while the
 * dev server closed an idle keep-alive connection finds that connection dead on its next request.
 */
export async function getAgainOnce(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return fetch(url, init);
  }
}

/**
 * Saves the working copy's files `npm start` and `npm run preview` write (a developer's own client,
 * person and key), for the suites that run those commands on a scratch state; the function returned puts them back.
 */
export function saveLocalFiles(): () => void {
  const files = [".dev-client.json", ".dev-person.json", ".dev.vars"].map((name) => join(ROOT, name));
  const saved = files.map((file) => (existsSync(file) ? readFileSync(file) : null));
  return () =>
    files.forEach((file, i) => (saved[i] === null ? rmSync(file, { force: true }) : writeFileSync(file, saved[i]!)));
}

/** Runs `body`, then puts back the files of saveLocalFiles. */
export async function keepingLocalFiles(body: () => Promise<void>): Promise<void> {
  const restore = saveLocalFiles();
  try {
    await body();
  } finally {
    restore();
  }
}
