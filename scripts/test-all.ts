/**
 * `npm test`: every suite, then one verdict. Each suite prints its own report
 * (vitest's table, node:test's TAP), which used to be the last thing on the
 * screen, so a newcomer read a sub-suite's summary as the whole answer.
 *
 * The checks and the two workerd runs go one after another: each keeps every
 * core busy. The end-to-end suites spend much of their time waiting (on
 * wrangler starting, on a browser, on a server's answer), so they run one per
 * core, each one's output printed whole when it ends. The longest of them, the
 * move audit, mostly waits on writers paced under their rate limit: it starts
 * first, beside the suites that run alone, and takes a core of its own after
 * them. Those that run `npm start` or `npm run preview` in the working copy
 * never overlap: the commands write the developer's .dev-client.json,
 * .dev-person.json and .dev.vars there (scripts/lib/dev-server.ts
 * `saveLocalFiles`). After a failure no further suite starts; those running
 * finish, but the move audit, which is stopped (its time is no verdict).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { availableParallelism } from "node:os";
import { ROOT } from "./lib/wrangler.ts";

/** Suites that run alone, in this order. */
const ONE_AT_A_TIME = ["check", "test:unit", "test:shards"];

/** Started before the suites that run alone, and running beside them. */
const FIRST_BESIDE = { suite: "test:move", localFiles: false };

/** Suites that may run side by side, the longest first; `localFiles`: it writes the working copy's local files. */
const SIDE_BY_SIDE: { suite: string; localFiles: boolean }[] = [
  { suite: "test:gis", localFiles: false },
  { suite: "test:cli", localFiles: true },
  { suite: "test:docs", localFiles: false },
  { suite: "test:map", localFiles: false },
  { suite: "test:readme", localFiles: false },
  { suite: "test:client", localFiles: false },
  { suite: "test:people", localFiles: false },
  { suite: "test:dev", localFiles: true },
  { suite: "test:preview", localFiles: true },
];

const SUITES = [...ONE_AT_A_TIME, FIRST_BESIDE.suite, ...SIDE_BY_SIDE.map(({ suite }) => suite)];
const started = performance.now();
const seconds = (since: number) => Math.round((performance.now() - since) / 1000);
/** Each suite that ended, as the verdict names it: "test:unit (312 s)", "test:map (exit 1)". */
const passed = new Map<string, string>();
const failed = new Map<string, string>();

function verdict(): never {
  const done = [...passed.values()].join(", ");
  if (failed.size > 0) {
    const notRun = SUITES.filter((suite) => !passed.has(suite) && !failed.has(suite));
    process.stdout.write(
      `\nnpm test: FAILED in ${[...failed.values()].map((suite) => `npm run ${suite}`).join(", ")}; ` +
        `passed: ${done || "none"}; not run: ${notRun.join(", ") || "none"}.\n`,
    );
    process.exit(1);
  }
  const minutes = ((performance.now() - started) / 60_000).toFixed(1);
  process.stdout.write(`\nnpm test: all ${SUITES.length} suites passed (${done}) in ${minutes} min.\n`);
  process.exit(0);
}

/** Records how `suite`, started at `since`, ended. */
function record(suite: string, since: number, status: number | null, signal: NodeJS.Signals | null): void {
  if (status === 0) passed.set(suite, `${suite} (${seconds(since)} s)`);
  else failed.set(suite, `${suite} (exit ${status ?? signal})`);
}

/** Runs one suite, in a process group of its own, with its output kept, then prints it whole. */
function runKept(suite: string): { ended: Promise<void>; stop: () => void } {
  const since = performance.now();
  process.stdout.write(`\n--- npm run ${suite} started\n`);
  const child = spawn("npm", ["run", "--silent", suite], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
  let stopped = false;
  const ended = new Promise<void>((resolve) => {
    child.on("close", (status, signal) => {
      process.stdout.write(`\n=== npm run ${suite}${stopped ? " (stopped after another suite failed)" : ""}\n`);
      process.stdout.write(Buffer.concat(output));
      if (!stopped) record(suite, since, status, signal);
      resolve();
    });
  });
  const stop = () => {
    stopped = true;
    // The suite's own `npm start` and wrangler runs are in process groups of their own: SIGINT lets it end them.
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-child.pid!, "SIGINT");
      } catch {
        // It ended meanwhile.
      }
    }
  };
  return { ended, stop };
}

const beside = runKept(FIRST_BESIDE.suite);
for (const suite of ONE_AT_A_TIME) {
  process.stdout.write(`\n=== npm run ${suite}\n`);
  const since = performance.now();
  // Not spawnSync: the suite beside keeps sending its output, which a blocked event loop would not read.
  const child = spawn("npm", ["run", "--silent", suite], { cwd: ROOT, stdio: "inherit" });
  const [status, signal] = (await once(child, "close")) as [number | null, NodeJS.Signals | null];
  record(suite, since, status, signal);
  if (failed.size > 0) {
    beside.stop();
    await beside.ended;
    verdict();
  }
}

const slots = Math.max(1, availableParallelism());
const waiting = [...SIDE_BY_SIDE];
const running = new Set<{ suite: string; localFiles: boolean }>();
running.add(FIRST_BESIDE);
await new Promise<void>((done) => {
  const next = () => {
    if (failed.size > 0) {
      waiting.length = 0;
      beside.stop();
    }
    while (running.size < slots) {
      const localBusy = [...running].some((entry) => entry.localFiles);
      const index = waiting.findIndex((entry) => !(entry.localFiles && localBusy));
      if (index < 0) break;
      const [entry] = waiting.splice(index, 1);
      running.add(entry!);
      void runKept(entry!.suite).ended.then(() => {
        running.delete(entry!);
        next();
      });
    }
    if (running.size === 0) done();
  };
  void beside.ended.then(() => {
    running.delete(FIRST_BESIDE);
    next();
  });
  next();
});
verdict();
