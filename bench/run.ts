/**
 * `npm run bench`: builds the Worker as a deploy would, starts it and two
 * baseline Workers on one local workerd (Miniflare's API), seeds 100,000
 * pinpoints, and measures every scenario against its baseline in interleaved
 * rounds from a separate load process. Prints a table and writes
 * bench/out/latest.json (bench/results/, the committed figures, with
 * BENCH_SAVE=1). Talks only to 127.0.0.1; stops by itself.
 *
 * Settings (environment): BENCH_SECONDS (5), BENCH_ROUNDS (3),
 * BENCH_CONNECTIONS (16), BENCH_GROUPS (comma-separated group names; all but
 * `scale`, which takes about fifteen minutes: bench/scale.ts, with
 * BENCH_SCALE_SIZES and BENCH_SCALE_SECONDS, nor `import`, a million places
 * imported from a file and exported again in four to six minutes, after the
 * other groups: bench/import.ts, with BENCH_IMPORT_PLACES, nor `http`, the
 * service as `npm start` serves it, over HTTP, in about twelve minutes:
 * bench/http.ts, with BENCH_HTTP_C1 and BENCH_HTTP_C16, nor `shards`, every
 * scenario of the service against the same Worker with three shards, about
 * seven minutes more: shardGroups in bench/scenarios.ts),
 * BENCH_FRESHNESS_SAMPLES (100 writes timed to visible by the `public` group:
 * bench/public.ts), BENCH_WEBHOOK_WRITES (1,000 writes a phase delivered by
 * the `webhooks` group: bench/webhooks.ts), BENCH_SHARDS_CONTROL (1: the `shards` group
 * with a second single database in place of the three shards, the difference two identical stacks show).
 */
import { fork, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { resultPath } from "./results-dir.ts";
import * as prettier from "prettier";
import type { LoadRequest, LoadResult } from "./load.ts";
import { machine, printReport, type GroupResult, type Report, type RunResult, type TargetResult } from "./report.ts";
import { buildBundle, cpuMillisOf, startRuntime, workerdChildren, type Bundle } from "./runtime.ts";
import { measureMemory } from "./memory.ts";
import { runImportGroup } from "./import.ts";
import { measureFreshness } from "./public.ts";
import { measureHttp, renderHttp } from "./http.ts";
import { GOALS, buildGroups, shardGroups, type Group, type Target } from "./scenarios.ts";
import { measureScale, renderScale } from "./scale.ts";
import { SCALE } from "./seed.ts";
import { startStack } from "./setup.ts";
import { measureWebhooks } from "./webhooks.ts";

const settings = {
  seconds: Number(process.env.BENCH_SECONDS ?? 5),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  groups: process.env.BENCH_GROUPS?.split(",").filter(Boolean) ?? null,
  importPlaces: Number(process.env.BENCH_IMPORT_PLACES ?? 1_000_000),
  freshnessSamples: Number(process.env.BENCH_FRESHNESS_SAMPLES ?? 100),
  webhookWrites: Number(process.env.BENCH_WEBHOOK_WRITES ?? 1_000),
  shardsControl: process.env.BENCH_SHARDS_CONTROL === "1",
};
/** The scale and import groups write a million rows each: only when asked for by name. */
const withScale = settings.groups?.includes("scale") ?? false;
const withImport = settings.groups?.includes("import") ?? false;
/** `wrangler dev` served over HTTP, as `npm start` serves it: about five minutes, only when named. */
const withHttp = settings.groups?.includes("http") ?? false;
/** Doubles the service's scenarios, on a second seeded stack: only when asked for by name. */
const withShards = settings.groups?.includes("shards") ?? false;
const otherGroups = settings.groups === null || settings.groups.some((g) => g !== "scale" && g !== "http");
/** Eight targets and a hundred writes timed to visible: about four minutes. */
const withPublic = settings.groups?.includes("public") ?? true;
/** Two thousand writes delivered to a local receiver: about a minute (bench/webhooks.ts). */
const withWebhooks = settings.groups?.includes("webhooks") ?? true;
/** Whatever happens, the run ends before this; the long groups have budgets of their own on top. */
const DEADLINE_MS =
  ((otherGroups ? 11 : 0) +
    (withPublic ? 5 : 0) +
    (withWebhooks ? 12 : 0) +
    (withShards ? 12 : 0) +
    (withScale ? 30 : 0) +
    (withImport ? 20 : 0) +
    (withHttp ? 15 : 0)) *
  60 *
  1000;
const started = performance.now();
const dir = mkdtempSync(join(tmpdir(), "poi-bench-"));
const log = (message: string) =>
  console.error(`[bench ${((performance.now() - started) / 1000).toFixed(0)}s] ${message}`);

// ---- cleanup: never leave workerd, the load process or the temp dir behind ----
const cleanups: (() => Promise<void> | void)[] = [];
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}
process.on("exit", () => {
  // Last resort when exiting without cleanup (synchronous context).
  for (const pid of workerdChildren()) process.kill(pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    void cleanup().finally(() => process.exit(130));
  });
}
const deadline = setTimeout(() => {
  log("deadline reached: stopping");
  void cleanup().finally(() => process.exit(2));
}, DEADLINE_MS);
deadline.unref();

// ---- the load process ----
function startLoad(): { run: (request: LoadRequest) => Promise<LoadResult>; child: ChildProcess } {
  const child = fork(new URL("./load.ts", import.meta.url), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  let next = 0;
  const pending = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();
  child.on("message", (message: { id: number; result?: LoadResult; error?: string }) => {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(message.error));
    else waiter?.resolve(message.result!);
  });
  child.on("exit", (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`load process exited (${code})`));
    pending.clear();
  });
  cleanups.push(() => {
    child.kill();
  });
  return {
    child,
    run: (request) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        child.send({ id, request });
      }),
  };
}

const median = (values: number[]) => {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

// ---- startup ----
/** Time to `ready` and to the first response, for the Worker alone and for a constant Worker with the same bindings. */
async function measureStartup(bundle: Bundle) {
  const samples: Record<"api" | "reference", { ready: number; firstResponse: number }[]> = { api: [], reference: [] };
  for (let round = 0; round < 3; round++) {
    for (const kind of ["api", "reference"] as const) {
      const t0 = performance.now();
      const rt = await startRuntime(
        join(dir, `startup-${kind}-${round}`),
        kind === "api" ? { api: bundle } : { reference: true },
      );
      try {
        const ready = performance.now() - t0;
        // A CORS preflight needs no database: it measures the isolate, not D1.
        const url = kind === "api" ? new URL("/v3.0/pinpoints", rt.api) : rt.reference;
        const response = await fetch(url, {
          method: "OPTIONS",
          headers: { Origin: "http://localhost", "Access-Control-Request-Method": "GET" },
        });
        await response.arrayBuffer();
        samples[kind].push({ ready, firstResponse: performance.now() - t0 });
      } finally {
        await rt.dispose();
      }
    }
  }
  const summary = (kind: "api" | "reference") => ({
    readyMs: median(samples[kind].map((s) => s.ready)),
    firstResponseMs: median(samples[kind].map((s) => s.firstResponse)),
  });
  const api = summary("api");
  const reference = summary("reference");
  return { api, reference, workerCostMs: api.firstResponseMs - reference.firstResponseMs };
}

// ---- load ----
/** `pids`: the workerd processes whose CPU time counts (those not under load spend next to none). */
async function runGroups(groups: Group[], load: ReturnType<typeof startLoad>, pids: number[]): Promise<GroupResult[]> {
  const cpuMillis = () => (pids.length === 0 ? NaN : pids.reduce((sum, pid) => sum + cpuMillisOf(pid), 0));
  const results: GroupResult[] = [];
  const base = { connections: settings.connections };
  for (const group of groups) {
    log(`group ${group.name}: ${group.targets.map((t) => t.key).join(", ")}`);
    /** The target's request, with the headers it makes just before a run. */
    const requestOf = async (target: Target) =>
      target.headersNow
        ? { ...target.request, headers: { ...target.request.headers, ...(await target.headersNow()) } }
        : target.request;
    // Check each target answers as expected, then warm it up, before measuring.
    for (const target of group.targets) {
      const probe = await load.run({ ...(await requestOf(target)), ...base, connections: 1, seconds: 1 });
      const statuses = Object.keys(probe.statuses);
      if (probe.requests === 0 || statuses.some((s) => Number(s) !== target.status)) {
        throw new Error(`${target.key}: expected ${target.status}, got ${JSON.stringify(probe.statuses)}`);
      }
    }
    const runs = new Map<string, RunResult[]>(group.targets.map((t) => [t.key, []]));
    for (let round = 0; round < settings.rounds; round++) {
      const order = group.alternate && round % 2 === 1 ? [...group.targets].reverse() : group.targets;
      for (const target of order) {
        // Made before the CPU count starts: minting a person's token is not the request measured.
        const request = await requestOf(target);
        const cpuBefore = cpuMillis();
        const result = await load.run({
          ...request,
          ...base,
          seconds: settings.seconds,
          ...(target.expect && { countHeader: target.expect.header }),
        });
        const cpuMs = cpuMillis() - cpuBefore;
        const run = { ...result, workerdCpuMsPerRequest: cpuMs / result.requests };
        runs.get(target.key)!.push(run);
        const values = run.headerValues ? `, ${target.expect!.header} ${JSON.stringify(run.headerValues)}` : "";
        log(
          `  ${target.key} round ${round + 1}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50.toFixed(2)} ms, ` +
            `workerd CPU ${run.workerdCpuMsPerRequest.toFixed(2)} ms/request${values}`,
        );
      }
    }
    const baseline = group.targets[0]!;
    const targets: TargetResult[] = group.targets.map((target) => {
      const mine = runs.get(target.key)!;
      const theirs = runs.get(target.versus ?? baseline.key)!;
      // Responses without the header value the target exists to measure (a hit that was not one).
      const unexpected = target.expect
        ? mine.reduce(
            (n, r) =>
              n +
              Object.entries(r.headerValues ?? {}).reduce((m, [v, k]) => (v === target.expect!.value ? m : m + k), 0),
            0,
          )
        : 0;
      return {
        key: target.key,
        label: target.label,
        runs: mine,
        rps: median(mine.map((r) => r.rps)),
        p50: median(mine.map((r) => r.p50)),
        p99: median(mine.map((r) => r.p99)),
        cpuMsPerRequest: median(mine.map((r) => r.workerdCpuMsPerRequest)),
        ratio: median(mine.map((r, i) => r.rps / theirs[i]!.rps)),
        ...(target.versus && { versus: target.versus }),
        invalid: mine.reduce((n, r) => n + r.non2xx + r.errors, 0),
        ...(target.expect && { expected: target.expect, unexpected }),
      };
    });
    results.push({ name: group.name, baseline: baseline.key, targets, runs: Object.fromEntries(runs) });
  }
  return results;
}

function evaluateGoals(groups: GroupResult[]) {
  return GOALS.map((goal) => {
    const group = groups.find((g) => g.name === goal.group);
    const runs = group?.runs;
    let value = NaN;
    let cpuValue = NaN;
    if (runs?.[goal.target] && runs[goal.versus]) {
      const mine = runs[goal.target]!;
      const theirs = runs[goal.versus]!;
      value =
        goal.kind === "rps-ratio"
          ? median(mine.map((r, i) => r.rps / theirs[i]!.rps))
          : median(mine.map((r, i) => r.p50 / theirs[i]!.p50));
      // The throughput ratio workerd's CPU per request predicts, were its thread the only limit.
      if (goal.kind === "rps-ratio") {
        cpuValue = median(mine.map((r, i) => theirs[i]!.workerdCpuMsPerRequest / r.workerdCpuMsPerRequest));
      }
    }
    const met = Number.isFinite(value) ? (goal.kind === "rps-ratio" ? value >= goal.limit : value < goal.limit) : null;
    return { what: goal.what, goal: goal.goal, value, cpuValue, met };
  });
}

/** Writes `value` as JSON formatted as the rest of the repository, so `npm run check` (prettier --check) passes on a fresh result. */
async function writeResult(path: string, value: unknown) {
  const options = { ...(await prettier.resolveConfig(path)), filepath: path };
  writeFileSync(path, await prettier.format(JSON.stringify(value), options));
}

async function main() {
  log(`settings: ${JSON.stringify(settings)}`);
  if (!withScale) log("the scale group (about fifteen minutes) runs only when named: BENCH_GROUPS=scale npm run bench");
  const bundle = buildBundle(join(dir, "bundle"));
  log(`bundle: ${bundle.bytes} bytes, ${bundle.gzipBytes} gzip (${bundle.wranglerReport ?? "no wrangler report"})`);
  if (otherGroups) await runMain(bundle);
  if (withHttp) {
    const load = startLoad();
    const http = await measureHttp(join(dir, "http"), bundle, load.run, log, (stop) => cleanups.push(stop));
    load.child.kill();
    await writeResult(resultPath("http.json"), http);
    console.log(renderHttp(http));
  }
  if (withScale) {
    const scale = await measureScale(join(dir, "scale"), bundle, log);
    await writeResult(resultPath("scale.json"), scale);
    console.log(renderScale(scale));
  }
}

/**
 * The shards group: the same Worker with DB and two more shards, seeded alike with the accounts on
 * SHARD_1 (so every request is routed through the directory's placement to another database), measured
 * scenario by scenario in alternating rounds against one database whose ids start where SHARD_1's do.
 * Ids that long cost on their own (bodies and results of eleven digits, and past 2^30 no small integer
 * to V8): a batch of 1,000 of them costs a third more than of six-digit ids on one database as well
 * (docs/benchmarks.md, "Shards: three against one database"), so the single database gets them too and
 * the group measures what routing costs.
 */
async function runShards(bundle: Bundle, load: ReturnType<typeof startLoad>): Promise<GroupResult[]> {
  const stacks: Awaited<ReturnType<typeof startStack>>[] = [];
  const start = async (name: string, options: Parameters<typeof startStack>[1]) => {
    const stack = await startStack(join(dir, name), { bundle, publicMaps: true, ...options });
    stacks.push(stack);
    cleanups.push(() => stack.rt.dispose());
    const bodies = join(dir, `bodies-${name}`);
    mkdirSync(bodies);
    log(`${name}: seeded ${JSON.stringify(stack.seeded.rows)}; workerd pid ${stack.rt.workerdPid}`);
    return { rt: stack.rt, groups: await buildGroups(stack.rt, stack.seeded, stack.token, bodies) };
  };
  try {
    const single = await start("single-long-ids", { idRangeOf: 1 });
    const sharded = settings.shardsControl
      ? await start("single-again", { idRangeOf: 1 })
      : await start("shards", { shards: ["SHARD_1", "SHARD_2"] });
    const pids = [single.rt.workerdPid, sharded.rt.workerdPid].filter((pid) => pid !== null);
    const label = settings.shardsControl ? "one database again" : "three shards";
    return await runGroups(shardGroups(single, sharded, label), load, pids);
  } finally {
    for (const stack of stacks) await stack.rt.dispose();
  }
}

async function runMain(bundle: Bundle) {
  const startup = await measureStartup(bundle);
  log(`startup: ${JSON.stringify(startup)}`);

  // Memory first, each receiver in a runtime of its own (see memory.ts).
  let stacks = 0;
  const memory = await measureMemory(() => startStack(join(dir, `memory-${stacks++}`), { bundle }));
  log(
    `memory: ${memory.receivers.map((r) => `${r.receiver} cold +${(r.coldAddedBytes / 2 ** 20).toFixed(1)} MiB, warm +${(r.warmAddedBytes / 2 ** 20).toFixed(1)} MiB`).join("; ")}`,
  );

  const { rt, seeded, token, readyMs } = await startStack(dir, { bundle, publicMaps: true });
  cleanups.push(() => rt.dispose());
  log(`runtime ready in ${readyMs.toFixed(0)} ms; workerd pid ${rt.workerdPid}`);
  log(`seeded ${JSON.stringify(seeded.rows)} in ${seeded.millis.toFixed(0)} ms`);
  try {
    const loadDir = join(dir, "bodies");
    mkdirSync(loadDir);
    const all = await buildGroups(rt, seeded, token, loadDir);
    const groups = settings.groups ? all.filter((g) => settings.groups!.includes(g.name)) : all;
    const load = startLoad();
    const groupResults = await runGroups(groups, load, rt.workerdPid === null ? [] : [rt.workerdPid]);
    if (withShards) groupResults.push(...(await runShards(bundle, load)));

    // After every load group: its writes would move the key's head under their rounds.
    const freshnessSetup = groups.find((g) => g.freshness)?.freshness;
    if (freshnessSetup) log(`public: ${settings.freshnessSamples} writes timed to visible`);
    const freshness = freshnessSetup && (await measureFreshness(freshnessSetup, settings.freshnessSamples, log));
    if (freshness)
      log(`public: write to visible p50 ${freshness.p50.toFixed(0)} ms, p99 ${freshness.p99.toFixed(0)} ms`);

    const webhooks = withWebhooks
      ? await measureWebhooks(join(dir, "webhooks"), bundle, settings.webhookWrites, log)
      : undefined;

    const imported = withImport
      ? await runImportGroup(rt, (await rt.mf.getD1Database("DB", "api")) as never, dir, settings.importPlaces, log)
      : undefined;

    const report: Report = {
      date: new Date().toISOString(),
      machine: machine(),
      settings: { ...settings, tool: "autocannon", runtime: "workerd via Miniflare's API (direct sockets)" },
      scale: { ...SCALE, rows: seeded.rows, seedMs: seeded.millis },
      bundle: { bytes: bundle.bytes, gzipBytes: bundle.gzipBytes, wrangler: bundle.wranglerReport },
      startup,
      memory,
      groups: groupResults,
      goals: evaluateGoals(groupResults),
      ...(freshness && { freshness }),
      ...(imported && { import: imported }),
      ...(webhooks && { webhooks }),
      totalSeconds: 0,
    };
    report.totalSeconds = (performance.now() - started) / 1000;
    await writeResult(resultPath("latest.json"), report);
    const publicMaps = groupResults.find((g) => g.name === "public");
    if (publicMaps && freshness) {
      await writeResult(resultPath("public.json"), {
        date: report.date,
        machine: report.machine,
        settings: report.settings,
        bundle: report.bundle,
        group: publicMaps,
        goals: report.goals.filter((g) => GOALS.some((goal) => goal.group === "public" && goal.what === g.what)),
        freshness,
      });
    }
    const shards = groupResults.filter((g) => g.name === "shards");
    if (shards.length > 0) {
      await writeResult(resultPath("shards.json"), {
        date: report.date,
        machine: report.machine,
        settings: report.settings,
        // The 1, 5 and 15 minute load averages as the group ends: the machine may be shared.
        loadAverage: loadavg(),
        groups: shards,
      });
    }
    if (imported)
      await writeResult(resultPath("import.json"), { date: report.date, machine: report.machine, ...imported });
    printReport(report);
    if (imported && !imported.roundTrip.identical) throw new Error("import group: the exported features differ");
  } finally {
    // The scale group starts runtimes of its own: this one goes first.
    await rt.dispose();
  }
}

try {
  await main();
  await cleanup();
  process.exit(0);
} catch (error) {
  console.error(error);
  await cleanup();
  process.exit(1);
}
