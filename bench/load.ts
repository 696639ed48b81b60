/**
 * The load generator, a process of its own (forked by bench/run.ts) so that
 * driving the load never shares an event loop with the harness. It runs one
 * autocannon measurement per message and answers with a summary. Latencies
 * are kept at full (sub-millisecond) resolution from autocannon's per-response
 * events; its own histogram rounds to whole milliseconds.
 */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";

export type LoadRequest = {
  url: string;
  method: "GET" | "POST" | "PUT";
  headers?: Record<string, string>;
  /** Path of a file holding the request body (large bodies do not travel over IPC). */
  bodyFile?: string;
  /**
   * Path of a file of bodies, one a line, instead of `bodyFile`: each request sends the next, every
   * connection drawing from the same sequence (writes that must differ, such as a list's moves).
   */
  bodiesFile?: string;
  /** Every `[<id>]` in the URL becomes a fresh unique id per request (autocannon's `idReplacement`). */
  uniqueIds?: boolean;
  /** A response header whose values are counted, e.g. `cache-status` to prove every answer was a hit. */
  countHeader?: string;
  connections: number;
  seconds: number;
  /** A fixed number of requests instead of a fixed time (then `seconds` is ignored). */
  amount?: number;
};

export type LoadResult = {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  mean: number;
  /** Responses that were not 2xx, and socket errors or timeouts: a valid run has none. */
  non2xx: number;
  errors: number;
  statuses: Record<string, number>;
  /** How many responses carried each value of `countHeader` (`(none)`: without it). */
  headerValues?: Record<string, number>;
};

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function measure(request: LoadRequest): Promise<LoadResult> {
  const body = request.bodyFile ? readFileSync(request.bodyFile) : undefined;
  const bodies = request.bodiesFile ? readFileSync(request.bodiesFile, "utf8").split("\n").filter(Boolean) : null;
  let sent = 0;
  const nextBody = <T extends { body?: string | Buffer }>(req: T): T => ({
    ...req,
    body: bodies![sent++ % bodies!.length],
  });
  let latencies = new Float64Array(1 << 14);
  let count = 0;
  const counted = request.countHeader?.toLowerCase();
  const headerValues: Record<string, number> = {};
  // Read off the parser's raw headers ([name, value, ...]) as each response's head arrives: no body is kept.
  const countValues = ({ headers }: { headers: string[] }) => {
    let value = "(none)";
    for (let i = 0; i < headers.length; i += 2) if (headers[i]!.toLowerCase() === counted) value = headers[i + 1]!;
    headerValues[value] = (headerValues[value] ?? 0) + 1;
  };
  const started = performance.now();
  let lastResponse = started;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: request.url,
        method: request.method,
        headers: request.headers,
        body,
        connections: request.connections,
        ...(request.amount ? { amount: request.amount } : { duration: request.seconds }),
        timeout: 30,
        idReplacement: request.uniqueIds ?? false,
        ...(bodies && { requests: [{ setupRequest: nextBody }] }),
        ...(counted && { setupClient: (client) => client.on("headers", countValues) }),
      },
      (error, result) => {
        if (error) return reject(error);
        const sorted = latencies.slice(0, count).sort();
        let total = 0;
        for (const value of sorted) total += value;
        resolve({
          // Completed 2xx responses over the measured time, not autocannon's per-second sample mean.
          // A run of a fixed number of requests ends on autocannon's next whole-second tick: it is
          // timed from its start to its last response instead.
          rps: count / (request.amount ? (lastResponse - started) / 1000 : result.duration || request.seconds),
          requests: result.requests.total,
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
          mean: count ? total / count : NaN,
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
          statuses: Object.fromEntries(
            Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [
              code,
              (stat as { count: number }).count,
            ]),
          ),
          ...(counted && { headerValues }),
        });
      },
    );
    instance.on("response", (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      lastResponse = performance.now();
      if (status < 200 || status > 299) return;
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = responseTime;
    });
  });
}

// As a forked child: one measurement per message, answered in order.
if (process.send) {
  process.on("message", (message: { id: number; request: LoadRequest }) => {
    measure(message.request).then(
      (result) => process.send!({ id: message.id, result }),
      (error: unknown) => process.send!({ id: message.id, error: String(error) }),
    );
  });
  process.on("disconnect", () => process.exit(0));
}
