/**
 * `npm test`: every suite in turn, then one verdict. Each suite prints its own
 * report (vitest's table, node:test's TAP), which used to be the last thing on
 * the screen, so a newcomer read a sub-suite's summary as the whole answer.
 * Stops at the first failing suite, as the `&&` chain it replaces did.
 */
import { spawnSync } from "node:child_process";
import { ROOT } from "./lib/wrangler.ts";

const SUITES = [
  "check",
  "test:unit",
  "test:shards",
  "test:docs",
  "test:map",
  "test:dev",
  "test:preview",
  "test:gis",
  "test:readme",
  "test:cli",
  "test:client",
  "test:people",
];

const started = performance.now();
const passed: string[] = [];
for (const suite of SUITES) {
  process.stdout.write(`\n=== npm run ${suite}\n`);
  const result = spawnSync("npm", ["run", "--silent", suite], { cwd: ROOT, stdio: "inherit" });
  if (result.status !== 0) {
    const rest = SUITES.slice(SUITES.indexOf(suite) + 1);
    process.stdout.write(
      `\nnpm test: FAILED in npm run ${suite} (exit ${result.status ?? result.signal}); ` +
        `passed: ${passed.join(", ") || "none"}; not run: ${rest.join(", ") || "none"}.\n`,
    );
    process.exit(1);
  }
  passed.push(suite);
}
const minutes = ((performance.now() - started) / 60_000).toFixed(1);
process.stdout.write(`\nnpm test: all ${SUITES.length} suites passed (${SUITES.join(", ")}) in ${minutes} min.\n`);
