/**
 * `npm run preview`: the service as a deploy uploads it, on the local runtime
 * the benchmarks measure (scripts/lib/preview.ts), over the local data of
 * `npm start`: the same steps first (scripts/lib/local-setup.ts), the same
 * state directory, the same port, the same development client and person. The way to
 * load-test or measure the service locally: `npm start` runs it under
 * `wrangler dev`, which costs each request about three times the service's own
 * CPU (docs/benchmarks.md, "What a user meets"). It does not rebuild when a
 * file changes; run it again.
 *
 *   npm run preview [-- --port N] [--persist-to DIR] [--seed] [--unlimited] [--log-requests]
 */
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { commandLine } from "./lib/command-line.ts";
import { buildBundle } from "./lib/bundle.ts";
import { devVars, portOption, prepareLocal, printWelcome } from "./lib/local-setup.ts";
import { startPreview } from "./lib/preview.ts";
import { ROOT, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run preview -- [options]

Builds the Worker as \`npm run deploy\` would upload it and serves it on the local
workerd runtime the benchmarks measure (no wrangler dev in front), over the same
local data as \`npm start\`: migrations applied, the development client and
person ready.
Use it to load-test or measure locally (docs/benchmarks.md). Ctrl-C stops it.

Options:
  --port N           Port to listen on, on 127.0.0.1 (default 8787).
  --persist-to DIR   Local state directory (default .wrangler/state, as npm start).
  --seed             Fill an empty development account with the sample city guide.
  --unlimited        Raise every rate limit out of reach: a load test from one
                     client would otherwise measure 429s after 1,200 requests a
                     minute. The limiters still run, as deployed.
  --log-requests     Print the log line of every request (off: printing is not
                     the service's cost).
  -h, --help         Show this help.`;

const say = (line = "") => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  const values = commandLine(USAGE, {
    port: { type: "string" },
    "persist-to": { type: "string" },
    seed: { type: "boolean" },
    unlimited: { type: "boolean" },
    "log-requests": { type: "boolean" },
  });
  if (typeof values === "number") return values;
  const port = portOption(values.port);
  const target: Target = { remote: false, persistTo: values["persist-to"] };
  const local = await prepareLocal(target, values.seed ? "yes" : "ask");

  // Rebuilt on every start, in the gitignored .wrangler/ beside the local state.
  const out = join(ROOT, ".wrangler/preview");
  rmSync(out, { recursive: true, force: true });
  say("Building the Worker as a deploy would upload it...");
  const bundle = buildBundle(out, { cwd: ROOT });
  const preview = await startPreview({
    persistTo: resolve(values["persist-to"] ?? join(ROOT, ".wrangler/state")),
    port,
    bundle,
    vars: devVars(),
    unlimited: values.unlimited,
    logRequests: values["log-requests"],
  });
  printWelcome(
    "POI content API, the deploy bundle on the local runtime (npm run preview)",
    `http://localhost:${port}`,
    local,
  );
  say(
    `Serving ${bundle.wranglerReport ?? "the bundle"} at ${preview.base.origin}` +
      `${values.unlimited ? ", rate limits out of reach" : ""}; cron triggers run on their schedule. Ctrl-C stops it.`,
  );
  // Miniflare stops workerd and ends the process on Ctrl-C (SIGINT), SIGTERM or SIGHUP, with 128 + the signal.
  process.once("exit", () => say("Stopped."));
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`npm run preview: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
