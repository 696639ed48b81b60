/**
 * Running the project's own wrangler from the scripts: resolved from
 * node_modules and started with this Node, in the project root, so the
 * scripts work however they are invoked.
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Execute, Row } from "./registry.ts";

/** The repository root (where wrangler.toml is). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The project's wrangler CLI, run with this Node. */
export const WRANGLER = join(
  dirname(createRequire(import.meta.url).resolve("wrangler/package.json")),
  "bin/wrangler.js",
);

/** Local tools stay local: no telemetry and no download of the `Request.cf` sample, unless the user opts in. */
const env = () => ({
  ...process.env,
  WRANGLER_SEND_METRICS: process.env.WRANGLER_SEND_METRICS ?? "false",
  CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? "false",
});

/** Where the D1 database lives: the local one (optionally under `persistTo`) or the deployed one. */
export type Target = { remote: boolean; persistTo?: string };

/** wrangler's flags for a target; a relative `persistTo` is taken from the caller's directory. */
export function targetFlags(target: Target): string[] {
  if (target.remote) return ["--remote"];
  return target.persistTo === undefined ? ["--local"] : ["--local", "--persist-to", resolve(target.persistTo)];
}

/**
 * `wrangler dev`'s flags as `npm start` runs it (scripts/dev.ts), also what the bench's `http`
 * group serves (bench/http.ts), so the benchmark measures what a user meets.
 */
export function devFlags(target: Target): string[] {
  return targetFlags(target);
}

/** A wrangler command that failed; `message` is wrangler's own explanation when it gave one. */
export class WranglerError extends Error {
  override name = "WranglerError";
}

/** Runs wrangler to completion with the given stdio; returns its exit status. */
export function runWrangler(args: readonly string[], stdio: StdioOptions = "inherit"): number {
  const result = spawnSync(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: env(), stdio });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/** Runs wrangler with its output captured rather than shown, for callers that summarise it. */
export function runWranglerCaptured(args: readonly string[]): { status: number; output: string } {
  const result = spawnSync(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: env(), encoding: "utf8" });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, output: `${result.stdout}${result.stderr}` };
}

/** Starts wrangler as a child process and returns it (for `wrangler dev`). */
export function spawnWrangler(args: readonly string[], stdio: StdioOptions = "inherit"): ChildProcess {
  return spawn(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: env(), stdio });
}

/** The JSON document in wrangler's output, which may be preceded by blank lines or notices. */
function parseJsonOutput(stdout: string): unknown {
  const start = stdout.search(/^[[{]/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(stdout.slice(start));
  } catch {
    return undefined;
  }
}

/**
 * An `Execute` over `wrangler d1 execute BINDING --json` (the directory, DB, unless
 * another shard is named): the statements travel in one `--command`, which
 * wrangler runs as one batch (all or nothing).
 */
export function d1Execute(target: Target, binding = "DB"): Execute {
  return async (statements) => {
    const args = [
      "d1",
      "execute",
      binding,
      ...targetFlags(target),
      "--json",
      "--yes",
      "--command",
      statements.join(";\n"),
    ];
    const result = spawnSync(process.execPath, [WRANGLER, ...args], {
      cwd: ROOT,
      env: env(),
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      maxBuffer: 64 * 1024 * 1024,
    });
    if (result.error) throw result.error;
    const output = parseJsonOutput(result.stdout);
    if (result.status !== 0 || !Array.isArray(output)) {
      const reason =
        (output as { error?: { text?: string } } | undefined)?.error?.text ??
        (result.stderr.trim() || result.stdout.trim() || `wrangler exited with status ${result.status}`);
      throw new WranglerError(`wrangler d1 execute failed: ${reason}`);
    }
    return (output as { results?: Row[] }[]).map((r) => r.results ?? []);
  };
}
