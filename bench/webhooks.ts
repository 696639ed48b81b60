/**
 * The `webhooks` group: deliveries end to end, from the service's writes
 * through the local queue (Miniflare's, its consumer configured as
 * wrangler.toml configures it) to a receiver in this process that verifies
 * every signature with the `standardwebhooks` library, as a real one would.
 * A runtime of its own, with the queue's consumer (bench/runtime.ts), on a
 * fresh database with one account.
 *
 * - drain: writes made while the webhook is disabled wait in the outbox;
 *   enabling it delivers them all. Timed from the PUT until the receiver has
 *   the last one: how many deliveries a second one webhook gets through.
 * - live: the same number of writes by parallel writers while the webhook is
 *   enabled, each write's acknowledgement timed to its delivery: faster than
 *   one webhook delivers, so its latency is mostly the backlog's.
 * - paced: PACED writes, one every PACE_MS, each timed from its
 *   acknowledgement to its delivery: the latency of a webhook keeping up.
 *
 * Each phase writes OBJECTS new pinpoints and then updates them (every
 * object several times, each by one writer in turn), and fails the run unless
 * every acknowledged write arrived exactly once, in order per object, with
 * its version. The write cost with and without a webhook is the writes
 * group's (bench/scenarios.ts). Setting: BENCH_WEBHOOK_WRITES (1,000 a phase).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { startRuntime, type Bundle } from "./runtime.ts";
import { createAccount, migrate } from "./seed.ts";
import { tokenFor } from "./setup.ts";

const OBJECTS = 50;
const WRITERS = 16;
const PACED = 100;
const PACE_MS = 50;
/** Longest wait for a phase's deliveries before the run fails. */
const WAIT_MS = 5 * 60 * 1000;

export type WebhookPhase = {
  writes: number;
  /** From the first write (live) or the enabling PUT (drain) to the last delivery. */
  seconds: number;
  deliveriesPerSecond: number;
  /** Live only: acknowledgement of a write to its delivery, in ms. */
  p50?: number;
  p99?: number;
};
export type WebhookReport = {
  objects: number;
  writers: number;
  drain: WebhookPhase;
  live: WebhookPhase;
  paced: WebhookPhase & { paceMs: number };
};

type Arrival = { key: string; version: number; at: number };

/** The receiver: records each verified delivery's object, version and arrival time; a bad signature fails the run. */
async function startReceiver() {
  const state = { secret: "", arrivals: [] as Arrival[], failures: [] as string[] };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const at = performance.now();
      const headers = Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)]));
      try {
        const payload = new Webhook(state.secret).verify(Buffer.concat(chunks).toString(), headers) as {
          data: { type: string; id: number; version: number };
        };
        state.arrivals.push({ key: `${payload.data.type}:${payload.data.id}`, version: payload.data.version, at });
        response.writeHead(204).end();
      } catch (error) {
        state.failures.push(String(error));
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { state, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const versionOf = (response: Response) => Number(response.headers.get("ETag")!.replaceAll('"', ""));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

export async function measureWebhooks(
  dir: string,
  bundle: Bundle,
  writes: number,
  log: (message: string) => void,
): Promise<WebhookReport> {
  const rt = await startRuntime(dir, { api: bundle, webhookDelivery: true });
  const receiver = await startReceiver();
  try {
    const db = await rt.mf.getD1Database("DB", "api");
    await migrate(db as never);
    const { client } = await createAccount(db as never, "bench-webhooks");
    const headers = { Authorization: `Bearer ${await tokenFor(rt.api, client)}`, "Content-Type": "application/json" };
    const call = async (method: string, path: string, body: unknown, status: number) => {
      const response = await fetch(new URL(path, rt.api), { method, headers, body: JSON.stringify(body) });
      if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return response;
    };
    const hook = (await (
      await call("POST", "/v3.0/webhooks", { url: receiver.url, events: ["*"], enabled: false }, 201)
    ).json()) as { id: number; secret: string };
    receiver.state.secret = hook.secret;

    /**
     * OBJECTS creates, then updates by WRITERS writers (each object always by the same one) up to
     * `total`, each writer waiting `gapMs` after each of its writes.
     */
    async function write(total: number, writers = WRITERS, gapMs = 0): Promise<Map<string, number>> {
      const acknowledged = new Map<string, number>();
      const ids: number[] = [];
      await Promise.all(
        Array.from({ length: OBJECTS }, async (_, i) => {
          const response = await call("POST", "/v3.0/pinpoints", { name: `W${i}`, latitude: 1, longitude: 2 }, 201);
          const { id } = (await response.json()) as { id: number };
          ids.push(id);
          acknowledged.set(`pinpoint:${id}:${versionOf(response)}`, performance.now());
        }),
      );
      let next = 0;
      const updates = total - OBJECTS;
      await Promise.all(
        Array.from({ length: writers }, async (_, writer) => {
          const mine = ids.filter((_, i) => i % writers === writer);
          for (let n = 0; ; n++) {
            if (next >= updates) return;
            next++;
            const id = mine[n % mine.length]!;
            const response = await call("PUT", `/v3.0/pinpoints/${id}`, { name: `W${id} ${n}` }, 200);
            acknowledged.set(`pinpoint:${id}:${versionOf(response)}`, performance.now());
            if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
          }
        }),
      );
      return acknowledged;
    }

    /** Waits for the phase's deliveries and checks them: each acknowledged write once, in order per object. */
    async function delivered(acknowledged: Map<string, number>, from: number): Promise<Arrival[]> {
      const deadline = performance.now() + WAIT_MS;
      while (receiver.state.arrivals.length - from < acknowledged.size) {
        if (performance.now() > deadline) {
          throw new Error(`webhooks: ${receiver.state.arrivals.length - from} of ${acknowledged.size} delivered`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
      const arrivals = receiver.state.arrivals.slice(from);
      if (receiver.state.failures.length > 0) throw new Error(`webhooks: ${receiver.state.failures[0]}`);
      const seen = new Set(arrivals.map((a) => `${a.key}:${a.version}`));
      const last = new Map<string, number>();
      for (const a of arrivals) {
        if ((last.get(a.key) ?? 0) >= a.version) throw new Error(`webhooks: ${a.key} v${a.version} out of order`);
        last.set(a.key, a.version);
      }
      const missing = [...acknowledged.keys()].filter((k) => !seen.has(k));
      if (arrivals.length !== acknowledged.size || missing.length > 0) {
        throw new Error(
          `webhooks: ${arrivals.length} deliveries for ${acknowledged.size} writes, missing ${missing[0]}`,
        );
      }
      return arrivals;
    }

    const drainWrites = await write(writes);
    log(`webhooks: ${drainWrites.size} writes waiting; enabling the webhook`);
    const enabled = performance.now();
    await call("PUT", `/v3.0/webhooks/${hook.id}`, { enabled: true }, 200);
    const drained = await delivered(drainWrites, 0);
    const drainSeconds = (Math.max(...drained.map((a) => a.at)) - enabled) / 1000;
    const drain = {
      writes: drainWrites.size,
      seconds: drainSeconds,
      deliveriesPerSecond: drainWrites.size / drainSeconds,
    };
    log(`webhooks: drain ${drain.deliveriesPerSecond.toFixed(0)} deliveries/s`);

    /** Writes while the webhook is enabled; each write timed from its acknowledgement to its delivery. */
    async function timed(total: number, writers?: number, gapMs?: number): Promise<WebhookPhase> {
      const from = receiver.state.arrivals.length;
      const started = performance.now();
      const acknowledged = await write(total, writers, gapMs);
      const arrivals = await delivered(acknowledged, from);
      const latencies = arrivals.map((a) => a.at - acknowledged.get(`${a.key}:${a.version}`)!).sort((x, y) => x - y);
      const seconds = (Math.max(...arrivals.map((a) => a.at)) - started) / 1000;
      return {
        writes: acknowledged.size,
        seconds,
        deliveriesPerSecond: acknowledged.size / seconds,
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
      };
    }
    const live = await timed(writes);
    log(
      `webhooks: live ${live.deliveriesPerSecond.toFixed(0)} deliveries/s, write to delivery ` +
        `p50 ${live.p50!.toFixed(0)} ms, p99 ${live.p99!.toFixed(0)} ms`,
    );
    // The creates go in parallel; the updates one at a time, PACE_MS apart.
    const paced = { ...(await timed(OBJECTS + PACED, 1, PACE_MS)), paceMs: PACE_MS };
    log(`webhooks: paced write to delivery p50 ${paced.p50!.toFixed(0)} ms, p99 ${paced.p99!.toFixed(0)} ms`);
    return { objects: OBJECTS, writers: WRITERS, drain, live, paced };
  } finally {
    await receiver.close();
    await rt.dispose();
  }
}
