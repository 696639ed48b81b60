/**
 * `npm run seed`: fills the local database with a generated sample city guide
 * (categories with icons, about 300 pinpoints, lists, events with several
 * dates, tags) in the development account, so the API has something to show.
 * The same seed always gives the same guide; event dates start next week.
 * It only fills an empty account: run twice, it changes nothing and exits 1.
 *
 *   npm run seed [-- --persist-to DIR] [--account NAME] [--seed N]
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_SEED, generateGuide } from "./seed/guide.ts";
import { applyLocalMigrations, summary, withLocalBindings } from "./seed/local.ts";
import { SeedRefused, seedAccount } from "./seed/store.ts";
import { ROOT, type Target } from "./lib/wrangler.ts";

const USAGE = `Usage: npm run seed [-- options]

Fills the LOCAL database with a generated sample city guide: categories with
icons (stored in local R2), about 300 pinpoints with addresses and tags,
lists, and events with several dates. Only an empty account is filled.

Options:
  --persist-to DIR   Local state directory (default .wrangler/state), as given to npm start.
  --account NAME     Account to fill (default: the development client's account
                     from .dev-client.json, else "development").
  --seed N           Generator seed (default ${DEFAULT_SEED}); another seed, another guide.
  -h, --help         Show this help.`;

/** The account of the development client `npm start` created, if any. */
function devAccount(): string {
  try {
    const saved = JSON.parse(readFileSync(join(ROOT, ".dev-client.json"), "utf8")) as { account?: unknown };
    if (typeof saved.account === "string" && saved.account.trim()) return saved.account;
  } catch {
    // No development client yet: `npm start` will create it in the same account.
  }
  return "development";
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      "persist-to": { type: "string" },
      account: { type: "string" },
      seed: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const seed = Number(values.seed ?? DEFAULT_SEED);
  if (!Number.isSafeInteger(seed) || seed < 0) {
    process.stderr.write(`npm run seed: --seed must be a non-negative integer, not ${values.seed}.\n`);
    return 2;
  }
  const account = values.account?.trim() || devAccount();
  const target: Target = { remote: false, persistTo: values["persist-to"] };

  const started = performance.now();
  applyLocalMigrations(target);
  try {
    const result = await withLocalBindings(target, (env) =>
      seedAccount(env, account, generateGuide({ seed, now: Date.now() })),
    );
    process.stdout.write(`${summary(account, result)} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
    process.stdout.write("Run `npm start` and try GET /v3.0/pinpoints, /v3.0/lists, /v3.0/events.\n");
    return 0;
  } catch (error) {
    if (!(error instanceof SeedRefused)) throw error;
    // A refusal is a failure: a script that runs `npm run seed && ...` must not go on believing the guide is there.
    process.stderr.write(
      `npm run seed: ${error.message}\nTo start over, delete the local state (.wrangler/state, or your --persist-to directory), ` +
        "or fill another account with --account NAME.\n",
    );
    return 1;
  }
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`npm run seed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
