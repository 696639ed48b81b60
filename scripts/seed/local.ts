/**
 * The local D1 and R2 bindings, in this process, through wrangler's platform
 * proxy: the same storage `wrangler dev` and `wrangler d1 execute --local`
 * use, opened once instead of starting wrangler per command (a dozen icon
 * uploads would take a minute that way). Also the start command's offer to
 * fill an empty development account.
 */
import { join, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { getPlatformProxy } from "wrangler";
import { ROOT, runWrangler, targetFlags, type Target } from "../lib/wrangler.ts";
import { generateGuide } from "./guide.ts";
import { accountContent, isEmpty, seedAccount, type SeedBindings, type SeedResult } from "./store.ts";

/** Runs `use` with the local bindings of `target` (its --persist-to directory, or wrangler's default). */
export async function withLocalBindings<T>(target: Target, use: (env: SeedBindings) => Promise<T>): Promise<T> {
  // Local tools stay local (as in scripts/lib/wrangler.ts): no download of the Request.cf sample.
  process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= "false";
  const state = target.persistTo === undefined ? join(ROOT, ".wrangler/state") : resolve(target.persistTo);
  // Errors only: wrangler's notes on the configuration (the Durable Object this proxy does not run, the
  // .dev.vars it read) would fill npm start's first screen twice over; `wrangler dev` gives them once.
  const level = process.env.WRANGLER_LOG;
  process.env.WRANGLER_LOG = "error";
  try {
    const proxy = await getPlatformProxy<SeedBindings>({
      configPath: join(ROOT, "wrangler.toml"),
      // wrangler keeps local storage under <persist-to>/v3.
      persist: { path: join(state, "v3") },
      envFiles: [],
      remoteBindings: false,
    });
    try {
      return await use(proxy.env);
    } finally {
      await proxy.dispose();
    }
  } finally {
    if (level === undefined) delete process.env.WRANGLER_LOG;
    else process.env.WRANGLER_LOG = level;
  }
}

/** Applies pending migrations to the local database, as `npm start` does. */
export function applyLocalMigrations(target: Target): void {
  // No stdin: wrangler then applies without asking for confirmation.
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  if (status !== 0) throw new Error(`wrangler d1 migrations apply failed (exit status ${status}).`);
}

/** One line saying what the seed wrote. */
export function summary(account: string, r: SeedResult): string {
  return (
    `Filled account "${account}" with a sample city guide: ${r.categories} categories with icons, ` +
    `${r.pinpoints} pinpoints, ${r.lists} lists (${r.members} memberships), ${r.events} events (${r.dates} dates).`
  );
}

/**
 * For `npm start`: when `account` has no content, fills it (`mode` "yes",
 * from --seed), or asks on a terminal, or prints how to. Says nothing when
 * the account has content, unless seeding was asked for.
 */
export async function offerSeed(target: Target, account: string, mode: "ask" | "yes"): Promise<void> {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  await withLocalBindings(target, async (env) => {
    const content = await accountContent(env.DB, account);
    if (!isEmpty(content)) {
      if (mode === "yes") say(`Not seeding: the account "${account}" already has content.`);
      return;
    }
    if (mode === "ask") {
      if (!process.stdin.isTTY || !process.stdout.isTTY) {
        say(
          `The account "${account}" is empty; \`npm run seed\` (or \`npm start -- --seed\`) fills it with a sample city guide.`,
        );
        return;
      }
      const prompt = createInterface({ input: process.stdin, output: process.stdout });
      const answer = await prompt
        .question(`The account "${account}" is empty. Fill it with a sample city guide (about 300 pinpoints)? [y/N] `)
        .finally(() => prompt.close());
      if (!/^y(es)?$/i.test(answer.trim())) return;
    }
    say(summary(account, await seedAccount(env, account, generateGuide({ now: Date.now() }))));
  });
}
