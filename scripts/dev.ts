/**
 * `npm start`: runs the service locally on embedded D1 and R2 (`wrangler dev
 * --local`), after the steps scripts/lib/local-setup.ts takes (a refusal of a
 * wrangler.toml whose D1 bindings share a database, a signing key and an
 * operator secret in .dev.vars, pending migrations and their data fills, a
 * development client and a development person), then prints the base URL,
 * the client's and the person's credentials and curl lines to try it.
 *
 * When the development account has no content it offers the sample city
 * guide of `npm run seed` (asks on a terminal; `--seed` fills it at once).
 *
 *   npm start [-- --port N] [--persist-to DIR] [--seed] [-- <more wrangler dev flags>]
 */
import { constants } from "node:os";
import { parseArgs } from "node:util";
import { portOption, prepareLocal, printWelcome } from "./lib/local-setup.ts";
import { devFlags, spawnWrangler, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm start [-- options] [-- <wrangler dev flags>]

Runs the service locally with \`wrangler dev --local\` on embedded D1 and R2,
after applying pending migrations and making sure a development client and a
development person (an owner of the client's account) exist.
To load-test or measure it, use \`npm run preview\` (docs/benchmarks.md).

Options:
  --port N           Port to listen on (default 8787).
  --persist-to DIR   Local state directory (default .wrangler/state).
  --seed             Fill an empty development account with the sample city guide
                     (npm run seed) without asking.
  -h, --help         Show this help.`;

/** Runs `wrangler dev` in the foreground; signals sent to this process are passed on. */
function runDev(target: Target, port: number, extra: string[]): Promise<number> {
  const child = spawnWrangler(["dev", ...devFlags(target), "--port", String(port), ...extra]);
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, forward);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 1)));
  });
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      port: { type: "string" },
      "persist-to": { type: "string" },
      seed: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const port = portOption(values.port);
  const target: Target = { remote: false, persistTo: values["persist-to"] };
  const local = await prepareLocal(target, values.seed ? "yes" : "ask");
  printWelcome("POI content API, local development", `http://localhost:${port}`, local);
  return runDev(target, port, positionals);
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`npm start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
