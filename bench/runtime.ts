/**
 * The runtime under test: the Worker bundled exactly as `wrangler deploy`
 * would upload it, and two baseline Workers, all in one local workerd started
 * through Miniflare's API. Each Worker gets its own socket on 127.0.0.1
 * (`unsafeDirectSockets`), so none of them pays for Miniflare's entry proxy
 * and the comparison between them is like for like.
 */
import { readdirSync, readFileSync } from "node:fs";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { bundleModules, type Bundle } from "../scripts/lib/bundle.ts";

export { buildBundle, type Bundle } from "../scripts/lib/bundle.ts";

/** Every Worker binds the same local D1 database, so the baselines read the service's data. */
const DB_ID = "bench-db";
export const SIGNING_KEY = "bench-signing-key-0123456789abcdef0123456789";
/** The operator routes' secret (src/operator/auth.ts): bench/move.ts moves an account through them. */
export const OPERATOR_SECRET = "bench-operator-secret-0123456789abcdef012345";

/**
 * The publishable keys' limiter, bound for the public group as wrangler.toml binds it (so every
 * public request counts, hits included) but with a limit no run reaches: one load generator is one
 * viewer address, and 600 a minute would measure 429s. The other limiters stay unbound, as in every
 * run before them; no other group's requests reach this one.
 */
export const PUBLIC_LIMIT = { limit: 1_000_000_000, period: 60 } as const;
const publicLimiter = { PUBLIC_LIMITER: { namespace_id: "1204", simple: PUBLIC_LIMIT } };

export type Runtime = {
  mf: Miniflare;
  api: URL;
  /** The service without the publishable keys' limiter (with `publicMaps`). */
  unlimited: URL;
  /** Another build of the service (with `other`). */
  other: URL;
  constant: URL;
  bare: URL;
  reference: URL;
  workerdPid: number | null;
  dispose: () => Promise<void>;
};

/**
 * `api`: the service; `baselines`: the constant and bare-D1 Workers; `reference`: the constant
 * Worker with the service's bindings, to tell its startup cost apart; `publicMaps`: the public
 * group's setup, the limiter bound to the service and the bare Worker, and the service once more
 * without it (`unlimited`), so the local limiter's cost can be told apart (bench/public.ts); `other`:
 * another build of the service beside `api`, on the same database (bench/nearest-ab.ts);
 * `webhookDelivery`: the webhook queue's consumer as well as its producer (bench/webhooks.ts).
 */
type Workers = {
  api?: Bundle;
  other?: Bundle;
  baselines?: boolean;
  reference?: boolean;
  publicMaps?: boolean;
  webhookDelivery?: boolean;
  inspectorPort?: number;
  /** D1 bindings besides DB that hold accounts' content (docs/scaling.md): bound to the service, named in SHARDS. */
  shards?: string[];
  /** The D1 database id, for a state directory written by wrangler (bench/http.ts); the bench's own otherwise. */
  databaseId?: string;
};

type WranglerConsumer = {
  queue: string;
  max_batch_size?: number;
  max_batch_timeout?: number;
  max_retries?: number;
  retry_delay?: number;
  dead_letter_queue?: string;
};

/** The webhook queues as wrangler.toml declares them, in Miniflare's terms. */
function webhookQueues(config: ReturnType<typeof unstable_readConfig>, withConsumers: boolean) {
  const producers = Object.fromEntries(
    (config.queues.producers ?? []).map((p: { binding: string; queue: string }) => [p.binding, { queueName: p.queue }]),
  );
  const consumers = Object.fromEntries(
    (config.queues.consumers ?? []).map((c: WranglerConsumer) => [
      c.queue,
      {
        maxBatchSize: c.max_batch_size,
        maxBatchTimeout: c.max_batch_timeout,
        maxRetries: c.max_retries,
        retryDelay: c.retry_delay,
        deadLetterQueue: c.dead_letter_queue,
      },
    ]),
  );
  return { queueProducers: producers, ...(withConsumers && { queueConsumers: consumers }) };
}

const quietLog = () => new Log(LogLevel.WARN);

/** Log lines the Workers wrote (and that were not printed). */
export let workerLogLines = 0;

/** Starts workerd with the Worker and/or the baselines; resolves when every socket listens. */
export async function startRuntime(persistDir: string, workers: Workers): Promise<Runtime> {
  // Only wrangler.toml: a developer's .dev.vars must not change what is measured.
  const config = unstable_readConfig({ config: "wrangler.toml" });
  const compat = { compatibilityDate: config.compatibility_date, compatibilityFlags: config.compatibility_flags };
  const socket = [{ host: "127.0.0.1", port: 0 }];
  const base = { ...compat, modules: true, unsafeDirectSockets: socket };
  const shards = workers.shards ?? [];
  const storage = {
    d1Databases: {
      DB: workers.databaseId ?? DB_ID,
      ...Object.fromEntries(shards.map((name) => [name, `${DB_ID}-${name}`])),
    },
    r2Buckets: { MEDIA: "bench-media" },
  };
  const list: Record<string, unknown>[] = [];
  if (workers.api) {
    const service = {
      ...compat,
      modules: bundleModules(workers.api),
      modulesRoot: workers.api.dir,
      ...storage,
      unsafeDirectSockets: socket,
      // The producer always, as deployed: a write of an account with a webhook sends a message. Without
      // the consumer (every run but the webhooks group's) nothing is delivered and only the write is measured.
      ...webhookQueues(config, workers.webhookDelivery ?? false),
    };
    list.push({
      ...service,
      name: "api",
      // The object that moves an account between shards, as wrangler.toml binds it.
      durableObjects: { ACCOUNT_MOVES: { className: "AccountMove", useSQLite: true } },
      bindings: {
        ...config.vars,
        ...(shards.length > 0 && { SHARDS: ["DB", ...shards].join(","), OPERATOR_SECRET }),
        TOKEN_SIGNING_KEY: SIGNING_KEY,
        // Webhooks to the benchmark's own receiver on 127.0.0.1 (src/webhooks/targets.ts).
        WEBHOOKS_ALLOW_LOOPBACK: "true",
        // What RateLimit-Policy states: the binding's limit, as wrangler.toml keeps them equal.
        ...(workers.publicMaps && { RATE_LIMIT_PUBLIC: `${PUBLIC_LIMIT.limit}/${PUBLIC_LIMIT.period}` }),
      },
      ...(workers.publicMaps && { ratelimits: publicLimiter }),
    });
    if (workers.publicMaps) {
      list.push({ ...service, name: "unlimited", bindings: { ...config.vars, TOKEN_SIGNING_KEY: SIGNING_KEY } });
    }
    if (workers.other) {
      list.push({
        ...service,
        name: "other",
        modules: bundleModules(workers.other),
        modulesRoot: workers.other.dir,
        bindings: { ...config.vars, TOKEN_SIGNING_KEY: SIGNING_KEY },
      });
    }
  }
  if (workers.reference) {
    list.push({
      ...base,
      ...storage,
      name: "reference",
      scriptPath: "bench/baselines/constant.js",
      bindings: config.vars,
    });
  }
  if (workers.baselines) {
    list.push({ ...base, name: "constant", scriptPath: "bench/baselines/constant.js" });
    list.push({
      ...base,
      ...storage,
      ...(workers.publicMaps && { ratelimits: publicLimiter }),
      name: "bare",
      scriptPath: "bench/baselines/bare-d1.js",
    });
  }
  const before = new Set(workerdChildren());
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      ...(workers.inspectorPort && { inspectorPort: workers.inspectorPort, inspectorHost: "127.0.0.1" }),
      log: quietLog(),
      // The Worker still writes its request log lines; printing them here would measure the terminal.
      handleStructuredLogs: (line: { level: string; message: string }) => {
        workerLogLines++;
        if (line.level === "error") console.error(`[workerd] ${line.message}`);
      },
      // A real `cf` object would be fetched from the internet; the placeholder will do.
      cf: false,
      resourcePersistencePath: persistDir,
      telemetry: { enabled: false },
      workers: list,
    } as never),
  );
  // Another runtime's workerd may run already (the shards group starts two): this one's is the child
  // that was not there before, taken once it is ready, as a runtime started later adds another.
  let workerdPid: number | null = null;
  const pid = () => workerdPid ?? workerdChildren().find((child) => !before.has(child)) ?? null;
  let disposed = false;
  const dispose = async () => {
    if (disposed) return;
    disposed = true;
    const child = pid();
    await mf.dispose().catch(() => undefined);
    // dispose() stops workerd; make sure, so a failed run never leaves one behind.
    if (child !== null) killQuietly(child);
  };
  try {
    await mf.ready;
    workerdPid = pid();
    const url = (name: string) => (list.some((w) => w.name === name) ? mf.unsafeGetDirectURL(name) : null);
    const names = ["api", "unlimited", "other", "constant", "bare", "reference"];
    const [api, unlimited, other, constant, bare, reference] = await Promise.all(names.map(url));
    return {
      mf,
      api: api!,
      unlimited: unlimited!,
      other: other!,
      constant: constant!,
      bare: bare!,
      reference: reference!,
      workerdPid,
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/** The workerd processes Miniflare spawned: direct children of this process named `workerd`. */
export function workerdChildren(): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the parenthesised command: state, ppid, ...
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      if (ppid === process.pid && comm.startsWith("workerd")) children.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return children;
}

/** Resident memory of a process, in bytes: current (VmRSS) and peak since the last reset (VmHWM). */
export function memoryOf(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1] ?? NaN) * 1024;
  return { rss: kib("VmRSS"), hwm: kib("VmHWM") };
}

/** CPU time (user + system) a process has used so far, in milliseconds. */
export function cpuMillisOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
