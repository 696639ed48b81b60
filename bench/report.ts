/** The benchmark's results: the JSON written to bench/results/latest.json and the table printed from it. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, totalmem } from "node:os";
import { resolve } from "node:path";
import type { ImportReport } from "./import.ts";
import type { LoadResult } from "./load.ts";
import type { MemoryReport } from "./memory.ts";
import type { FreshnessReport } from "./public.ts";
import type { WebhookReport } from "./webhooks.ts";
import { SHARDS_GOAL } from "./scenarios.ts";

/** One measurement: the load generator's figures plus workerd's CPU time per request. */
export type RunResult = LoadResult & { workerdCpuMsPerRequest: number };

export type TargetResult = {
  key: string;
  label: string;
  runs: RunResult[];
  /** Medians over the rounds. */
  rps: number;
  p50: number;
  p99: number;
  /** CPU time workerd (the Worker, D1 and R2 together) spent per request: robust to a busy machine. */
  cpuMsPerRequest: number;
  /** Median over the rounds of this target's req/s divided by the group baseline's (or `versus`'s) in the same round. */
  ratio: number;
  /** The target the ratio is against, when not the group's first. */
  versus?: string;
  /** Non-2xx responses and socket errors over all rounds: anything but 0 voids the row. */
  invalid: number;
  /** The header value every response had to carry, and how many did not: anything but 0 voids the row. */
  expected?: { header: string; value: string };
  unexpected?: number;
};

export type GroupResult = {
  name: string;
  baseline: string;
  targets: TargetResult[];
  runs: Record<string, RunResult[]>;
};

export type Report = {
  date: string;
  machine: ReturnType<typeof machine>;
  settings: Record<string, unknown>;
  scale: Record<string, unknown>;
  bundle: { bytes: number; gzipBytes: number; wrangler: string | null };
  startup: {
    api: { readyMs: number; firstResponseMs: number };
    reference: { readyMs: number; firstResponseMs: number };
    workerCostMs: number;
  };
  memory: MemoryReport;
  groups: GroupResult[];
  /** `cpuValue`: the same ratio from workerd CPU per request (baseline's ÷ target's). */
  goals: { what: string; goal: string; value: number; cpuValue: number; met: boolean | null }[];
  /** Write-to-visible latency, when the public group ran. */
  freshness?: FreshnessReport;
  /** The import group, when it ran (BENCH_GROUPS=import). */
  import?: ImportReport;
  /** The webhooks group, when it ran. */
  webhooks?: WebhookReport;
  totalSeconds: number;
};

/** The installed version of a package, as resolved from `from` (a package that depends on it). */
function version(pkg: string, from = "."): string | null {
  try {
    const require = createRequire(resolve(from === "." ? "package.json" : `node_modules/${from}/package.json`));
    return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), "utf8")) as { version: string }).version;
  } catch {
    return null;
  }
}

/** The machine the figures came from. */
export function machine() {
  return {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    // The workerd binary Miniflare runs, which may differ from the top-level one.
    workerd: version("workerd", "miniflare"),
    miniflare: version("miniflare"),
    wrangler: version("wrangler"),
    autocannon: version("autocannon"),
  };
}

const MiB = 1024 * 1024;
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

/** Markdown table of every measured target, then the goals; also what docs/benchmarks.md shows. */
export function renderReport(report: Report): string {
  const lines: string[] = [];
  const m = report.machine;
  lines.push(`Run ${report.date} on ${m.nproc} × ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node}, workerd ${m.workerd}`);
  lines.push(
    `autocannon, ${report.settings.connections} connections, ${report.settings.seconds} s per run, median of ${report.settings.rounds} interleaved rounds; ratio = req/s ÷ the group's first row, same round`,
  );
  lines.push("");
  lines.push("| group | scenario | req/s | p50 ms | p99 ms | ratio | workerd CPU ms/req |");
  lines.push("|---|---|---:|---:|---:|---:|---:|");
  for (const group of report.groups) {
    for (const t of group.targets) {
      const ratio = t.key === group.baseline ? "baseline" : `${fmt(t.ratio, 2)}${t.versus ? ` vs ${t.versus}` : ""}`;
      const unexpected = t.unexpected ? ` (${t.unexpected} without ${t.expected!.header}: ${t.expected!.value})` : "";
      const flag = (t.invalid ? ` (${t.invalid} non-2xx/errors)` : "") + unexpected;
      lines.push(
        `| ${group.name} | ${t.label}${flag} | ${fmt(t.rps)} | ${fmt(t.p50, 2)} | ${fmt(t.p99, 2)} | ${ratio} | ${fmt(t.cpuMsPerRequest, 2)} |`,
      );
    }
  }
  lines.push("");
  lines.push("| goal | target | measured | met | from CPU per request |");
  lines.push("|---|---|---:|---|---:|");
  for (const g of report.goals) {
    const met = g.met === null ? "n/a" : g.met ? "yes" : "NO";
    lines.push(`| ${g.what} | ${g.goal} | ${fmt(g.value, 2)} | ${met} | ${fmt(g.cpuValue, 2)} |`);
  }
  const b = report.bundle;
  const bundleMet = b.gzipBytes < 150_000;
  lines.push(
    `| bundle (wrangler deploy --dry-run), gzip | < 150 KB | ${fmt(b.gzipBytes / 1000, 1)} KB (${fmt(b.bytes / 1000, 1)} KB raw) | ${bundleMet ? "yes" : "NO"} | |`,
  );
  const mem = report.memory;
  lines.push(
    `| peak memory added by a ${fmt(mem.payloadBytes / MiB)} MiB upload (${fmt(mem.requestBodyBytes / MiB, 1)} MiB JSON body), first into a fresh isolate | < 4× payload | ${fmt(mem.peakAddedBytes / MiB, 1)} MiB = ${fmt(mem.peakAddedVsPayload, 2)}× | ${mem.peakAddedVsPayload < 4 ? "yes" : "NO"} | |`,
  );
  lines.push(
    `| the same less the local R2 emulator's share (${fmt(mem.r2EmulatorBytes / MiB, 1)} MiB, runs inside workerd here, not deployed) | < 4× payload | ${fmt(mem.workerAddedBytes / MiB, 1)} MiB = ${fmt(mem.workerAddedBytes / mem.payloadBytes, 2)}× | ${mem.workerAddedBytes / mem.payloadBytes < 4 ? "yes" : "NO"} | |`,
  );
  lines.push("");
  const s = report.startup;
  lines.push(
    `Startup: workerd ready with the Worker in ${fmt(s.api.readyMs)} ms, first response at ${fmt(s.api.firstResponseMs)} ms; ` +
      `a constant Worker with the same bindings: ${fmt(s.reference.readyMs)} / ${fmt(s.reference.firstResponseMs)} ms; ` +
      `the Worker's own cost: ${fmt(s.workerCostMs)} ms (medians of 3).`,
  );
  lines.push("");
  lines.push("| upload of 10 MiB into | workerd RSS idle | added, 1st upload (cold) | added, 3rd upload (warm) |");
  lines.push("|---|---:|---:|---:|");
  for (const r of mem.receivers) {
    lines.push(
      `| ${r.label} | ${fmt(r.uploads[0]!.idleBytes / MiB)} MiB | ${fmt(r.coldAddedBytes / MiB, 1)} MiB (${fmt(r.coldAddedBytes / mem.payloadBytes, 2)}×) | ${fmt(r.warmAddedBytes / MiB, 1)} MiB (${fmt(r.warmAddedBytes / mem.payloadBytes, 2)}×) |`,
    );
  }
  const publicMaps = report.groups.find((g) => g.name === "public");
  if (publicMaps) lines.push("", ...renderPublic(publicMaps, report.freshness));
  const shards = report.groups.filter((g) => g.name === "shards");
  if (shards.length > 0) lines.push("", ...renderShards(shards));
  if (report.import) lines.push("", ...renderImport(report.import));
  if (report.webhooks) lines.push("", ...renderWebhooks(report.webhooks));
  lines.push("");
  lines.push(`Total time: ${fmt(report.totalSeconds)} s.`);
  return lines.join("\n");
}

/**
 * The public group read two ways: where a hit's time goes (the ceiling, the runtime's Cache API alone,
 * with the limiter, then the service), and what a write takes to show.
 */
export function renderPublic(group: GroupResult, freshness: FreshnessReport | undefined): string[] {
  const runs = (key: string) => group.runs[key] ?? [];
  const medianOf = (values: number[]) => {
    const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const ratio = (a: string, b: string) => medianOf(runs(a).map((r, i) => r.rps / (runs(b)[i]?.rps ?? NaN)));
  const cpu = (key: string) => medianOf(runs(key).map((r) => r.workerdCpuMsPerRequest));
  const row = (what: string, a: string, b: string) =>
    `| ${what} | ${fmt(ratio(a, b), 2)} | ${fmt(cpu(a), 3)} | ${fmt(cpu(b), 3)} | ${fmt(cpu(a) - cpu(b), 3)} |`;
  const lines = [
    "| public maps: A against B | req/s A ÷ B | CPU ms/req A | CPU ms/req B | A − B (ms) |",
    "|---|---:|---:|---:|---:|",
    row("bare Cache API hit ÷ constant JSON", "bare-cache-hit", "constant"),
    row("cache hit with a key, no limiter bound ÷ bare Cache API hit", "public-hit-unlimited", "bare-cache-hit"),
    row("bare rate limiter + Cache API hit ÷ bare Cache API hit", "bare-public-hit", "bare-cache-hit"),
    row("cache hit with a key ÷ bare rate limiter + Cache API hit", "public-hit", "bare-public-hit"),
    row("cache hit with a key ÷ constant JSON (goal >= 0.8)", "public-hit", "constant"),
    row("bare miss (limiter, Cache API, page, put) ÷ bare list page of 50", "bare-public-miss", "bare-list-page-50"),
    row("miss with a key ÷ bare miss", "public-miss", "bare-public-miss"),
    row("miss with a key ÷ bare list page of 50 (goal >= 0.7)", "public-miss", "bare-list-page-50"),
  ];
  if (freshness) {
    const met = freshness.p99 <= 5000 && freshness.unseen === 0;
    const shownBy = Object.entries(freshness.firstShownBy)
      .map(([by, n]) => `${n} × \`${by}\``)
      .join(", ");
    lines.push(
      "",
      `Write to visible (${freshness.samples.length} writes, ${freshness.readers} readers polling every ${freshness.pollGapMs} ms): ` +
        `p50 ${fmt(freshness.p50)} ms, p90 ${fmt(freshness.p90)} ms, p99 ${fmt(freshness.p99)} ms, max ${fmt(freshness.max)} ms ` +
        `(goal p99 <= 5 s: ${met ? "met" : "NOT met"}); never seen: ${freshness.unseen}; a reader stepping back: ${freshness.wentBack}; ` +
        `first shown by ${shownBy}; the PUT itself: p50 ${fmt(freshness.writeP50, 1)} ms, p99 ${fmt(freshness.writeP99, 1)} ms.`,
    );
  }
  return lines;
}

/**
 * The shards group: per scenario, three shards (B, the account on a shard other than the directory)
 * against one database (A), as medians of per-round ratios B ÷ A; the goal is on throughput. CPU per
 * request moves far less than throughput on a shared machine: where the two disagree, it says more.
 */
export function renderShards(groups: GroupResult[]): string[] {
  const medianOf = (values: number[]) => {
    const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length === 0 ? NaN : sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  const lines = [
    `| scenario | req/s A | req/s B | req/s B ÷ A (goal >= ${SHARDS_GOAL}) | p50 ms A | p50 ms B | p50 B ÷ A | p99 B ÷ A | CPU ms/req A | CPU ms/req B | CPU B ÷ A |`,
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const group of groups) {
    const [a, b] = group.targets as [TargetResult, TargetResult];
    const ratio = (figure: (r: RunResult) => number) => medianOf(b.runs.map((r, i) => figure(r) / figure(a.runs[i]!)));
    const rps = ratio((r) => r.rps);
    const invalid = a.invalid + b.invalid + (a.unexpected ?? 0) + (b.unexpected ?? 0);
    const met = invalid > 0 ? `void (${invalid} invalid)` : rps >= SHARDS_GOAL ? "met" : "NOT met";
    lines.push(
      `| ${a.label.replace(/, one database$/, "")} | ${fmt(a.rps)} | ${fmt(b.rps)} | ${fmt(rps, 2)} ${met} | ${fmt(a.p50, 2)} | ${fmt(b.p50, 2)} | ${fmt(
        ratio((r) => r.p50),
        2,
      )} | ${fmt(
        ratio((r) => r.p99),
        2,
      )} | ${fmt(a.cpuMsPerRequest, 2)} | ${fmt(b.cpuMsPerRequest, 2)} | ${fmt(
        ratio((r) => r.workerdCpuMsPerRequest),
        2,
      )} |`,
    );
  }
  return lines;
}

function renderImport(r: ImportReport): string[] {
  const count = r.places.toLocaleString("en-US");
  const rate = (n: number) => Math.round(n).toLocaleString("en-US");
  return [
    `| ${count} places (${fmt(r.fileBytes / MiB)} MiB of GeoJSON) | seconds | places/s | ratio | workerd CPU ms per 1,000 |`,
    "|---|---:|---:|---:|---:|",
    `| bare INSERT … SELECT FROM json_each(?), 1,000-row batches | ${fmt(r.bare.seconds, 1)} | ${rate(r.bare.placesPerSecond)} | baseline | ${fmt(r.bare.cpuMsPerBatch, 1)} |`,
    `| npm run import (scripts/lib/import.ts), file to last answer | ${fmt(r.import.seconds, 1)} | ${rate(r.import.placesPerSecond)} | ${fmt(r.ratio, 2)} (goal >= 0.7: ${r.ratio >= 0.7 ? "met" : "NOT met"}) | ${fmt(r.import.cpuMsPerBatch, 1)} |`,
    `| npm run export (scripts/lib/export.ts) | ${fmt(r.export.seconds, 1)} | ${rate(r.export.placesPerSecond)} | | |`,
    "",
    `Round trip: ${r.roundTrip.compared.toLocaleString("en-US")} features compared, ` +
      (r.roundTrip.identical ? "all identical." : `NOT identical: ${r.roundTrip.firstDifference}`),
  ];
}

function renderWebhooks(r: WebhookReport): string[] {
  const row = (what: string, p: WebhookReport["drain"]) =>
    `| ${what} | ${p.writes} | ${fmt(p.seconds, 1)} | ${fmt(p.deliveriesPerSecond)} | ${p.p50 === undefined ? "" : `${fmt(p.p50)} / ${fmt(p.p99!)}`} |`;
  return [
    `| webhook deliveries, ${r.objects} objects, through the local queue to a verifying receiver | writes | seconds | deliveries/s | write to delivery p50 / p99 ms |`,
    "|---|---:|---:|---:|---:|",
    row("drain: written while disabled, then enabled", r.drain),
    row(`live: ${r.writers} parallel writers`, r.live),
    row(`paced: ${r.objects} creates, then one update every ${r.paced.paceMs} ms`, r.paced),
  ];
}

export function printReport(report: Report): void {
  console.log(renderReport(report));
}
