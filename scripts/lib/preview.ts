/**
 * The service as `npm run preview` serves it: the bundle a deploy uploads
 * (scripts/lib/bundle.ts) on workerd through Miniflare's API, as the
 * benchmarks run it (bench/runtime.ts), with its own socket on 127.0.0.1
 * (`unsafeDirectSockets`): no wrangler process, no proxy Worker in front, no
 * inspector. Its bindings are wrangler.toml's, as wrangler converts them for
 * Miniflare (`unstable_getMiniflareWorkerOptions`): every D1 database of the
 * configuration, R2, the webhook queues and their consumers, the rate limiters,
 * the static assets with `run_worker_first`, the version metadata, and the
 * cron triggers, run on their schedule here. Storage is the state directory
 * `npm start` uses, so both serve the same local data.
 */
import { join } from "node:path";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { bundleModules, type Bundle } from "./bundle.ts";
import { cronMatches } from "./cron.ts";
import { ROOT } from "./wrangler.ts";

export type PreviewOptions = {
  /** The state directory, as `npm start --persist-to` takes it (wrangler keeps storage under its v3/). */
  persistTo: string;
  /** 0: any free port. */
  port: number;
  bundle: Bundle;
  /** Variables over wrangler.toml's [vars] (.dev.vars, as `wrangler dev` reads it). */
  vars: Record<string, string>;
  /** Every rate limiter raised out of reach (the bindings stay, so their cost does). */
  unlimited?: boolean;
  /** Print the one log line per request (console.info); errors and everything else are printed anyway. */
  logRequests?: boolean;
  /** Run the cron triggers on their schedule (default true). */
  crons?: boolean;
};

export type Preview = {
  base: URL;
  mf: Miniflare;
  /** Runs the scheduled handler now, as the cron trigger `cron` would. */
  scheduled: (cron: string, time?: Date) => Promise<void>;
  stop: () => Promise<void>;
};

/** A limit no local run reaches. */
const UNLIMITED = { limit: 1_000_000_000, period: 60 } as const;

type Limiter = { simple: { limit: number; period: number } };

/** Starts the service; resolves once its socket listens. */
export async function startPreview(options: PreviewOptions): Promise<Preview> {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(ROOT, "wrangler.toml"));
  const crons = (workerOptions.cronTriggers ?? []) as string[];
  const limiters = (workerOptions.ratelimits ?? {}) as Record<string, Limiter>;
  const vars: Record<string, string> = { ...(workerOptions.bindings as Record<string, string>), ...options.vars };
  if (options.unlimited) {
    for (const limiter of Object.values(limiters)) limiter.simple = { ...UNLIMITED };
    // What RateLimit-Policy states: the binding's limit (src/http/middleware/rate-limit.ts).
    for (const name of Object.keys(vars).filter((key) => key.startsWith("RATE_LIMIT_"))) {
      vars[name] = `${UNLIMITED.limit}/${UNLIMITED.period}`;
    }
  }
  const log = new Log(LogLevel.WARN);
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      host: "127.0.0.1",
      port: 0,
      log,
      handleStructuredLogs: ({ level, message }: { level: string; message: string }) => {
        if (level === "info" && !options.logRequests) return;
        (level === "error" || level === "warn" ? process.stderr : process.stdout).write(`${message}\n`);
      },
      // A real `cf` object would be fetched from the internet; the placeholder will do.
      cf: false,
      resourcePersistencePath: join(options.persistTo, "v3"),
      telemetry: { enabled: false },
      workers: [
        {
          ...workerOptions,
          name: "api",
          modules: bundleModules(options.bundle),
          modulesRoot: options.bundle.dir,
          modulesRules: undefined,
          bindings: vars,
          ratelimits: limiters,
          unsafeDirectSockets: [{ host: "127.0.0.1", port: options.port }],
        },
      ],
    } as never),
  );
  try {
    await mf.ready;
  } catch (error) {
    await mf.dispose().catch(() => undefined);
    throw error;
  }
  const base = await mf.unsafeGetDirectURL("api");
  const scheduled = async (cron: string, time = new Date()) => {
    // The Fetcher's scheduled(), which Miniflare's types leave out.
    const worker = (await mf.getWorker("api")) as unknown as {
      scheduled(options: { cron: string; scheduledTime: Date }): Promise<{ outcome: string }>;
    };
    const { outcome } = await worker.scheduled({ cron, scheduledTime: time });
    if (outcome !== "ok") throw new Error(`The scheduled handler (${cron}) ended with "${outcome}".`);
  };
  // Checked at every minute's start, as Cloudflare runs cron triggers (UTC).
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const now = new Date();
    timer = setTimeout(tick, 60_000 - (now.getTime() % 60_000) + 50);
    const minute = new Date(now.getTime() - (now.getTime() % 60_000));
    for (const cron of crons.filter((expression) => cronMatches(expression, minute))) {
      scheduled(cron, minute).catch((error: unknown) => process.stderr.write(`${String(error)}\n`));
    }
  };
  if (options.crons ?? true) timer = setTimeout(tick, 60_000 - (Date.now() % 60_000) + 50);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      clearTimeout(timer);
      await mf.dispose();
    })());
  return { base, mf, scheduled, stop };
}
