/**
 * The bench's `http` group, run by `BENCH_GROUPS=http npm run bench`: what a
 * user meets. The service served as `npm start` serves it (`wrangler dev`
 * with the flags scripts/dev.ts passes, bench/baselines/bare-hono.ts beside it
 * served the same way, both over HTTP through wrangler's proxy, on free ports
 * of 127.0.0.1), next to the service on the Miniflare runtime the other
 * groups measure (bench/runtime.ts). GET by id and the first page of 20, at 1
 * and at 16 connections, a fixed number of requests per run, in interleaved
 * rounds. Every run records the CPU time each process used per request: the
 * Worker's workerd, and under `wrangler dev` also the proxy's workerd and
 * wrangler's Node process.
 *
 * Beside them, the service as `npm run preview` serves it (scripts/lib/preview.ts):
 * the same bundle on Miniflare's runtime with wrangler.toml's bindings, on
 * a copy of the same database.
 *
 * For GET by id, copies that each differ in one thing show where the cost
 * goes (docs/benchmarks.md, "What a user meets"): the bare Worker with one log
 * line per request, or in a D1 session; the service without the client
 * limiter, without [assets], or asking the assets first.
 *
 * The served configuration is wrangler.toml, written as JSON into the run's
 * temporary directory with its paths made absolute and the client limiter
 * raised out of reach (one load generator is one client, which 1,200 a minute
 * would stop within seconds); the signing key comes from `--var`, so a
 * developer's .dev.vars changes nothing measured.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { experimental_readRawConfig } from "wrangler";
import { freePort } from "../scripts/lib/dev-server.ts";
import { devFlags, ROOT } from "../scripts/lib/wrangler.ts";
import { applyLocalMigrations, withLocalBindings } from "../scripts/seed/local.ts";
import type { LoadRequest, LoadResult } from "./load.ts";
import { machine } from "./report.ts";
import { startPreview } from "../scripts/lib/preview.ts";
import { cpuMillisOf, SIGNING_KEY, startRuntime, workerdChildren, type Bundle } from "./runtime.ts";
import { seed, type Seeded } from "./seed.ts";

export const HTTP_SETTINGS = {
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  /** Requests per run at 1 and at 16 connections. */
  amounts: { 1: Number(process.env.BENCH_HTTP_C1 ?? 300), 16: Number(process.env.BENCH_HTTP_C16 ?? 1000) },
  /** The copies that differ in one thing (BREAKDOWN); `BENCH_HTTP_BREAKDOWN=0` serves only the bare Worker and the service. */
  breakdown: process.env.BENCH_HTTP_BREAKDOWN !== "0",
};

/** The issue's goals: the Worker's CPU per GET by id under `npm start` ÷ on Miniflare, and throughput ÷ the bare Worker's. */
export const HTTP_GOALS = { cpuVsMiniflare: 1.5, vsBare: 0.8 };

const CONNECTIONS = [1, 16] as const;
type Log = (message: string) => void;
type Load = (request: LoadRequest) => Promise<LoadResult>;

/** The processes whose CPU a run records. */
type Processes = { worker: number; proxy?: number; wrangler?: number };

type Server = { key: string; label: string; base: string; processes: Processes; stop: () => Promise<void> };

function procStat(pid: number): { comm: string; ppid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    return { comm: text.slice(text.indexOf("(") + 1, close), ppid: Number(text.slice(close + 2).split(" ")[1]) };
  } catch {
    return null;
  }
}

function descendants(root: number): number[] {
  const parents = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .map((entry) => [Number(entry), procStat(Number(entry))?.ppid ?? -1] as const);
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parents) if (ppid === pid) (found.push(child), walk(child));
  };
  walk(root);
  return found;
}

/** The TCP ports a process listens on (its socket inodes matched against /proc/net/tcp{,6}). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const socket = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (socket) inodes.add(socket[1]!);
    } catch {
      // closed while we looked
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // State 0A is LISTEN; field 9 is the inode.
      if (fields[3] === "0A" && inodes.has(fields[9]!)) ports.push(parseInt(fields[1]!.split(":")[1]!, 16));
    }
  }
  return ports;
}

/** Process groups of the `wrangler dev` servers still running: killed whenever this process exits. */
const running = new Set<number>();
process.on("exit", () => {
  for (const group of running) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/**
 * `wrangler dev` with `flags` on a free port, in its own process group; resolves once it answers.
 * Of its processes, the workerd listening on that port runs wrangler's proxy, the other one the Worker.
 */
async function serveDev(key: string, label: string, flags: string[]): Promise<Server> {
  const port = await freePort();
  const wrangler = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");
  const child = spawn(process.execPath, [wrangler, "dev", ...flags, "--ip", "127.0.0.1", "--port", String(port)], {
    cwd: ROOT,
    detached: true,
    // The Worker's log lines go to a pipe that is read and dropped: a terminal's cost is not the service's.
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false", CI: "true" },
  });
  running.add(child.pid!);
  child.once("exit", () => running.delete(child.pid!));
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => void (output.length < 100_000 && (output += chunk)));
  child.stderr.on("data", (chunk: Buffer) => void (output.length < 100_000 && (output += chunk)));
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const kill = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 10_000);
      child.once("exit", () => (clearTimeout(kill), done()));
      process.kill(-child.pid!, "SIGTERM");
    });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (Date.now() > deadline || child.exitCode !== null) {
      await stop();
      throw new Error(`${key}: wrangler dev did not start:\n${output}`);
    }
    try {
      await (await fetch(`${base}/v3.0/openapi.json`)).arrayBuffer();
      break;
    } catch {
      await new Promise((wait) => setTimeout(wait, 300));
    }
  }
  const processes: Partial<Processes> = {};
  for (const pid of descendants(child.pid!)) {
    const comm = procStat(pid)?.comm ?? "";
    // wrangler's launcher starts wrangler itself as a second Node process.
    if (comm.startsWith("node")) processes.wrangler = pid;
    else if (comm.startsWith("workerd")) processes[listeningPorts(pid).includes(port) ? "proxy" : "worker"] = pid;
  }
  if (!processes.worker || !processes.proxy) {
    await stop();
    throw new Error(`${key}: could not tell wrangler's processes apart`);
  }
  return { key, label, base, processes: processes as Processes, stop };
}

/** Keys of wrangler's configuration this group reads or changes. */
type RawConfig = {
  main: string;
  assets?: { directory: string; run_worker_first?: string[] | boolean };
  compatibility_date: string;
  compatibility_flags: string[];
  d1_databases: { binding: string; database_name: string; database_id: string; migrations_dir?: string }[];
  alias?: Record<string, string>;
  ratelimits?: { name: string; simple: { limit: number; period: number } }[];
  vars: Record<string, string>;
};

const readConfig = () =>
  (experimental_readRawConfig({ config: join(ROOT, "wrangler.toml") }) as { rawConfig: RawConfig }).rawConfig;

/** The bare Worker's configuration: the service's compatibility settings and D1 database, nothing else. */
function bareWorkerConfig() {
  const { compatibility_date, compatibility_flags, d1_databases } = readConfig();
  return {
    name: "bench-bare-hono",
    main: join(ROOT, "bench/baselines/bare-hono.ts"),
    compatibility_date,
    compatibility_flags,
    // The same database id: the same local file under --persist-to.
    d1_databases: d1_databases.map(({ binding, database_name, database_id }) => ({
      binding,
      database_name,
      database_id,
    })),
  };
}

/** wrangler.toml as JSON at `path`, paths absolute, the client limiter out of reach; `change` edits it further. */
function servedConfig(path: string, change: (config: RawConfig) => void = () => undefined): string {
  const config = readConfig();
  const absolute = (p: string) => resolve(ROOT, p);
  config.main = absolute(config.main);
  if (config.assets) config.assets.directory = absolute(config.assets.directory);
  for (const db of config.d1_databases) if (db.migrations_dir) db.migrations_dir = absolute(db.migrations_dir);
  for (const [module, target] of Object.entries(config.alias ?? {})) config.alias![module] = absolute(target);
  const client = config.ratelimits?.find((limiter) => limiter.name === "CLIENT_LIMITER");
  if (client) client.simple = { limit: 1_000_000_000, period: 60 };
  config.vars.RATE_LIMIT_CLIENT = "1000000000/60";
  change(config);
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

type Scenario = { key: string; label: string; path: (seeded: Seeded) => string; bare: (seeded: Seeded) => string };

const SCENARIOS: Scenario[] = [
  {
    key: "get",
    label: "GET /v3.0/pinpoints/{id}",
    path: (s) => `/v3.0/pinpoints/${middleId(s)}`,
    bare: (s) => `/v3.0/pinpoints/${middleId(s)}`,
  },
  {
    key: "first-page",
    label: "GET /v3.0/pinpoints?limit=20",
    path: () => "/v3.0/pinpoints?limit=20",
    bare: (s) => `/v3.0/pinpoints?account=${s.accountA}`,
  },
];

/** The copies that tell where GET by id's cost goes: one thing added to the bare Worker, or taken from the service. */
const BREAKDOWN = new Set(["bare-log", "bare-session", "dev-no-limiter", "dev-no-assets", "dev-asset-lookup"]);

const middleId = (s: Seeded) => s.pinpointIds[Math.floor(s.pinpointIds.length / 2)]!;

export type HttpRun = { rps: number; p50: number; p99: number; cpu: Partial<Record<keyof Processes, number>> };
export type HttpRow = {
  scenario: string;
  connections: number;
  target: string;
  label: string;
  runs: HttpRun[];
  /** Medians over the rounds. */
  rps: number;
  p50: number;
  /** The Worker's workerd CPU ms per request; under wrangler dev also the proxy's and wrangler's. */
  cpu: Partial<Record<keyof Processes, number>>;
  /** Median over rounds of req/s ÷ the bare Worker's in the same round. */
  vsBare: number;
  invalid: number;
};
export type HttpReport = {
  date: string;
  machine: ReturnType<typeof machine>;
  settings: typeof HTTP_SETTINGS;
  /** 1-minute load average before and after the rounds: how busy the machine was. */
  loadavg: { before: number; after: number };
  rows: HttpRow[];
  goals: { what: string; goal: string; value: number; met: boolean }[];
};

/**
 * `start` again on a fresh directory if it fails: on a loaded machine workerd now and then drops the
 * connection during the 104,000-row insert of the seed (bench/seed.ts), which takes 15 s and more then.
 */
async function retried<T>(log: Log, what: string, start: (attempt: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(attempt);
    } catch (error) {
      if (attempt === 3) throw error;
      log(`http: ${what} failed (${String(error)}); again`);
    }
  }
}

const median = (values: number[]) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** `onExit` is given every stop, so a run ended by a signal or the watchdog stops its servers too. */
export async function measureHttp(
  dir: string,
  bundle: Bundle,
  load: Load,
  log: Log,
  onExit: (stop: () => Promise<void>) => void,
): Promise<HttpReport> {
  const servers: Server[] = [];
  const stops: (() => Promise<void>)[] = [];
  const stopping = (stop: () => Promise<void>) => {
    stops.push(stop);
    onExit(stop);
  };
  mkdirSync(dir, { recursive: true });
  try {
    // The state npm start would have: migrations applied by wrangler, then the bench's rows.
    let state = "";
    const seeded = await retried(log, "seeding", (n) => {
      state = join(dir, `state-${n}`);
      applyLocalMigrations({ remote: false, persistTo: state });
      return withLocalBindings({ remote: false, persistTo: state }, (env) => seed(env.DB as never));
    });
    log(`http: seeded ${JSON.stringify(seeded.rows)}`);
    // Each server its own copy: two workerd processes never share one SQLite file.
    const copy = (name: string) => {
      cpSync(state, join(dir, name), { recursive: true });
      return join(dir, name);
    };

    // The service on Miniflare as the other groups run it, on a copy of the same database: wrangler
    // keeps it under <persist-to>/v3 by the database id of wrangler.toml.
    const rt = await startRuntime(join(copy("state-miniflare"), "v3"), {
      api: bundle,
      databaseId: readConfig().d1_databases[0]!.database_id,
    });
    stopping(() => rt.dispose());
    const miniflare: Server = {
      key: "miniflare",
      label: "service, Miniflare API (npm run bench)",
      base: rt.api.origin,
      processes: { worker: rt.workerdPid! },
      stop: () => rt.dispose(),
    };
    // `npm run preview` on its own copy: the same bundle on Miniflare's runtime with wrangler.toml's bindings
    // (scripts/lib/preview.ts), every rate limiter bound and raised out of reach, as --unlimited does. Started
    // before the wrangler dev servers, as the runtime above is: one started after them made one restart its workerd.
    const workerds = new Set(workerdChildren());
    const previewed = await startPreview({
      persistTo: copy("state-preview"),
      port: 0,
      bundle,
      vars: { TOKEN_SIGNING_KEY: SIGNING_KEY },
      unlimited: true,
      crons: false,
    });
    stopping(previewed.stop);
    const preview: Server = {
      key: "preview",
      label: "service, npm run preview",
      base: previewed.base.origin,
      processes: { worker: workerdChildren().find((pid) => !workerds.has(pid))! },
      stop: previewed.stop,
    };
    const service = (name: string, label: string, change?: (config: RawConfig) => void) => {
      const config = servedConfig(join(dir, `${name}.json`), change);
      const flags = devFlags({ remote: false, persistTo: copy(`state-${name}`) });
      return serveDev(name, label, ["--config", config, ...flags, "--var", `TOKEN_SIGNING_KEY:${SIGNING_KEY}`]);
    };
    // The bare Workers only read: they share one copy.
    const bareFlags = devFlags({ remote: false, persistTo: copy("state-bare") });
    // One at a time: wrangler picks its inspector and internal ports as it starts, and two starting together collide.
    const bareConfig = join(dir, "bare.json");
    writeFileSync(bareConfig, JSON.stringify(bareWorkerConfig(), null, 2));
    const bare = (name: string, label: string, extra: string[] = []) =>
      serveDev(name, label, ["--config", bareConfig, ...bareFlags, ...extra]);
    const starts: (() => Promise<Server>)[] = [
      () => bare("bare", "bare Hono + D1 Worker, wrangler dev"),
      () => bare("bare-log", "the same with one log line per request", ["--var", "LOG_LINE:1"]),
      () => bare("bare-session", "the same in a D1 session, as the service", ["--var", "SESSION:1"]),
      () => service("dev", "service, wrangler dev as npm start runs it"),
      () =>
        service("dev-no-limiter", "the same without the client limiter", (config) => {
          config.ratelimits = config.ratelimits?.filter((limiter) => limiter.name !== "CLIENT_LIMITER");
        }),
      () => service("dev-no-assets", "the same without [assets]", (config) => delete config.assets),
      () =>
        service("dev-asset-lookup", "the same asking the assets first (no run_worker_first)", (config) => {
          delete config.assets!.run_worker_first;
        }),
    ];
    const started: Server[] = [];
    for (const start of HTTP_SETTINGS.breakdown ? starts : [starts[0]!, starts[3]!]) {
      const server = await start();
      stopping(server.stop);
      started.push(server);
    }
    servers.push(...started, preview, miniflare);
    for (const server of servers) log(`http: ${server.key} at ${server.base}, ${JSON.stringify(server.processes)}`);

    const tokens = new Map<string, string>();
    for (const server of servers.filter((s) => !s.key.startsWith("bare"))) {
      tokens.set(server.key, await token(server.base, seeded));
    }
    // The breakdown copies only for GET by id: they explain it; the page pays the same.
    const targetsOf = (scenario: Scenario) => servers.filter((s) => scenario.key === "get" || !BREAKDOWN.has(s.key));
    const request = (server: Server, scenario: Scenario, connections: number, amount: number): LoadRequest => ({
      method: "GET",
      url: server.base + (server.key.startsWith("bare") ? scenario.bare(seeded) : scenario.path(seeded)),
      headers: server.key.startsWith("bare") ? {} : { Authorization: `Bearer ${tokens.get(server.key)}` },
      connections,
      seconds: 0,
      amount,
    });

    // Checked and warmed once each.
    for (const scenario of SCENARIOS) {
      for (const server of targetsOf(scenario)) {
        const probe = await load(request(server, scenario, 4, 100));
        if (probe.non2xx + probe.errors > 0) {
          throw new Error(`http ${server.key} ${scenario.key}: ${JSON.stringify(probe.statuses)}`);
        }
      }
    }

    const runs = new Map<string, HttpRun[]>();
    const invalid = new Map<string, number>();
    const before = loadavg()[0]!;
    for (let round = 0; round < HTTP_SETTINGS.rounds; round++) {
      for (const scenario of SCENARIOS) {
        for (const connections of CONNECTIONS) {
          for (const server of targetsOf(scenario)) {
            const id = `${scenario.key} ${connections} ${server.key}`;
            const pids = Object.entries(server.processes) as [keyof Processes, number][];
            const cpuBefore = pids.map(([, pid]) => cpuMillisOf(pid));
            const result = await load(request(server, scenario, connections, HTTP_SETTINGS.amounts[connections]));
            const cpu = Object.fromEntries(
              pids.map(([name, pid], i) => [name, (cpuMillisOf(pid) - cpuBefore[i]!) / result.requests]),
            );
            runs.set(id, [...(runs.get(id) ?? []), { rps: result.rps, p50: result.p50, p99: result.p99, cpu }]);
            invalid.set(id, (invalid.get(id) ?? 0) + result.non2xx + result.errors);
            log(
              `  http ${id} round ${round + 1}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, ` +
                `CPU ms/request ${pids.map(([name]) => `${name} ${cpu[name]!.toFixed(2)}`).join(", ")}`,
            );
          }
        }
      }
    }
    const after = loadavg()[0]!;

    const rows: HttpRow[] = [];
    for (const scenario of SCENARIOS) {
      for (const connections of CONNECTIONS) {
        const bare = runs.get(`${scenario.key} ${connections} bare`)!;
        for (const server of targetsOf(scenario)) {
          const id = `${scenario.key} ${connections} ${server.key}`;
          const mine = runs.get(id)!;
          const cpu = Object.fromEntries(
            Object.keys(server.processes).map((name) => [
              name,
              median(mine.map((r) => r.cpu[name as keyof Processes]!)),
            ]),
          );
          rows.push({
            scenario: scenario.label,
            connections,
            target: server.key,
            label: server.label,
            runs: mine,
            rps: median(mine.map((r) => r.rps)),
            p50: median(mine.map((r) => r.p50)),
            cpu,
            vsBare: median(mine.map((r, k) => r.rps / bare[k]!.rps)),
            invalid: invalid.get(id)!,
          });
        }
      }
    }
    return {
      date: new Date().toISOString(),
      machine: machine(),
      settings: HTTP_SETTINGS,
      loadavg: { before, after },
      rows,
      goals: goals(rows, runs),
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

function goals(rows: HttpRow[], runs: Map<string, HttpRun[]>): HttpReport["goals"] {
  const list: HttpReport["goals"] = [];
  for (const connections of CONNECTIONS) {
    const dev = runs.get(`get ${connections} dev`)!;
    const mf = runs.get(`get ${connections} miniflare`)!;
    const value = median(dev.map((r, k) => r.cpu.worker! / mf[k]!.cpu.worker!));
    list.push({
      what: `Worker CPU per GET by id, npm start ÷ Miniflare, c${connections}`,
      goal: `<= ${HTTP_GOALS.cpuVsMiniflare}`,
      value,
      met: value <= HTTP_GOALS.cpuVsMiniflare,
    });
  }
  for (const row of rows.filter((r) => r.target === "dev")) {
    list.push({
      what: `${row.scenario} under npm start ÷ bare Worker, c${row.connections}`,
      goal: `>= ${HTTP_GOALS.vsBare}`,
      value: row.vsBare,
      met: row.vsBare >= HTTP_GOALS.vsBare,
    });
  }
  return list;
}

async function token(base: string, seeded: Seeded): Promise<string> {
  const response = await fetch(`${base}/v3.0/oauth2/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${seeded.client.id}:${seeded.client.secret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

const fmt = (n: number | undefined, digits = 2) => (n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : "-");

/** Markdown tables: every row, then the goals. */
export function renderHttp(report: HttpReport): string {
  const lines = [
    `HTTP group, ${report.date}; ${report.settings.rounds} interleaved rounds of ${report.settings.amounts[1]} ` +
      `(c1) / ${report.settings.amounts[16]} (c16) requests; load average ${fmt(report.loadavg.before)} → ` +
      `${fmt(report.loadavg.after)}. CPU: ms per request, medians over rounds.`,
    "",
    "| scenario | c | target | req/s | p50 ms | × bare | Worker workerd CPU | proxy workerd CPU | wrangler node CPU |",
    "| --- | --: | --- | --: | --: | --: | --: | --: | --: |",
  ];
  for (const row of report.rows) {
    lines.push(
      `| ${row.scenario} | ${row.connections} | ${row.label}${row.invalid ? ` (${row.invalid} non-2xx!)` : ""} | ` +
        `${fmt(row.rps, 0)} | ${fmt(row.p50)} | ${fmt(row.vsBare)} | ${fmt(row.cpu.worker)} | ` +
        `${fmt(row.cpu.proxy)} | ${fmt(row.cpu.wrangler)} |`,
    );
  }
  lines.push("", "| goal | target | measured | met |", "| --- | --- | --: | --- |");
  for (const goal of report.goals) {
    lines.push(`| ${goal.what} | ${goal.goal} | ${fmt(goal.value)} | ${goal.met ? "yes" : "NO"} |`);
  }
  return lines.join("\n");
}
