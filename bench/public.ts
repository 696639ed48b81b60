/**
 * The `public` group: a map's page read with a publishable key, as a web page
 * embeds it (`?key=`, an `Origin` the key allows), answered from the public
 * cache (src/http/middleware/public-cache.ts) against the constant-JSON ceiling, and
 * with every request a miss against the bare D1 read of the same page; then
 * how long a write takes to show in what the key's readers get.
 *
 * A miss is made by a cache-busting parameter (`_=<unique id>` per request,
 * as a script appending a timestamp would): the Worker's query ignores it, so
 * every request runs the same SQL and returns the same page, but the cache
 * key holds the whole query string, so no request finds another's entry. The
 * key's own entry stays in the isolate as it would for a busy map, so a miss
 * here is what follows a write or a first visit, not a cold isolate.
 *
 * The limiter is bound (bench/runtime.ts), so every request is counted as
 * deployed. Locally it is one Durable Object that commits each count to
 * SQLite on disk (an fsync per request) before it answers the next, so its
 * cost moves with the disk's flush latency; the same Worker without the
 * limiter (`unlimited`) and a bare Worker with and without it tell that cost
 * apart from the service's own.
 */
import type { Runtime } from "./runtime.ts";
import type { Group, Target } from "./scenarios.ts";
import type { Seeded } from "./seed.ts";

/** The page a map loads: the first 50 members of the 10,000-member list. */
const LIMIT = 50;
/** The web page the key is limited to, sent as a browser would. */
const ORIGIN = "https://maps.example.com";
/** A viewer's address (RFC 5737 documentation range): what the limiter counts with the key. */
const VIEWER = "203.0.113.7";
/** Every `[<id>]` is replaced by a unique id per request (bench/load.ts `uniqueIds`). */
const BUSTER = "_=[<id>]";

const HIT = "poi-public; hit";
const MISS = "poi-public; fwd=miss; stored";

/** What the freshness measurement needs: the page as the hit target reads it, and a pinpoint on it. */
export type FreshnessSetup = {
  /** The page with the key, as the hit target reads it. */
  pageUrl: string;
  viewerHeaders: Record<string, string>;
  /** A member of the page's list shown on the page, and where a token writes it. */
  pinpointUrl: string;
  token: string;
};

/** Creates the key (with a write-scope token, as its owner would), reads its page once, and builds the group. */
export async function publicGroup(rt: Runtime, seeded: Seeded, token: string): Promise<Group> {
  const created = await fetch(new URL("/v3.0/keys", rt.api), {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "bench map", lists: [seeded.list], origins: [ORIGIN] }),
  });
  if (created.status !== 201) throw new Error(`POST /v3.0/keys: ${created.status} ${await created.text()}`);
  const { key } = (await created.json()) as { key: string };

  const pagePath = `/v3.0/pinpoints?list=${seeded.list}&limit=${LIMIT}&key=${key}`;
  const page = new URL(pagePath, rt.api).href;
  const viewerHeaders = { Origin: ORIGIN, "CF-Connecting-IP": VIEWER };
  const first = await fetch(page, { headers: viewerHeaders });
  if (first.status !== 200) throw new Error(`GET ${page}: ${first.status} ${await first.text()}`);
  const { results } = (await first.json()) as { results: { id: number }[] };
  if (results.length !== LIMIT) throw new Error(`the key's page holds ${results.length} pinpoints, not ${LIMIT}`);

  const bare = (query: string) => new URL(`/public-page?list=${seeded.list}&limit=${LIMIT}${query}`, rt.bare).href;
  const target = (key: string, label: string, request: Target["request"], extra: Partial<Target> = {}): Target => ({
    key,
    label,
    request,
    status: 200,
    ...extra,
  });
  const cacheStatus = (value: string) => ({ header: "Cache-Status", value });
  const get = (url: string, more: Partial<Target["request"]> = {}): Target["request"] => ({
    method: "GET",
    url,
    headers: viewerHeaders,
    ...more,
  });
  return {
    name: "public",
    targets: [
      target("constant", "constant JSON (runtime ceiling)", { method: "GET", url: rt.constant.href }),
      target("bare-cache-hit", "bare Cache API hit (page of 50)", get(bare("&limiter=no")), {
        expect: cacheStatus("bare; hit"),
      }),
      target(
        "public-hit-unlimited",
        "the same cache hit, Worker without the limiter",
        get(new URL(pagePath, rt.unlimited).href),
        { expect: cacheStatus(HIT) },
      ),
      target("bare-public-hit", "bare rate limiter + Cache API hit", get(bare("")), {
        expect: cacheStatus("bare; hit"),
      }),
      target("public-hit", "GET ?list=ID&limit=50 with a key, cache hit", get(page), { expect: cacheStatus(HIT) }),
      target("bare-list-page-50", "bare D1 list page of 50", {
        method: "GET",
        url: new URL(`/list-page?list=${seeded.list}&limit=${LIMIT}`, rt.bare).href,
      }),
      target(
        "bare-public-miss",
        "bare rate limiter + Cache API miss + list page of 50 + put",
        get(bare(`&${BUSTER}`), { uniqueIds: true }),
        { versus: "bare-list-page-50", expect: cacheStatus("bare; fwd=miss; stored") },
      ),
      target(
        "public-miss",
        "GET ?list=ID&limit=50 with a key, every request a miss",
        get(`${page}&${BUSTER}`, { uniqueIds: true }),
        { versus: "bare-list-page-50", expect: cacheStatus(MISS) },
      ),
    ],
    freshness: {
      pageUrl: page,
      viewerHeaders,
      pinpointUrl: new URL(`/v3.0/pinpoints/${results[0]!.id}`, rt.api).href,
      token,
    },
  };
}

export type FreshnessReport = {
  /** Milliseconds from each write's acknowledgement to the first reader response showing it, ascending. */
  samples: number[];
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Writes never seen within TIMEOUT_MS (counted as that long in the percentiles). */
  unseen: number;
  /** Reader responses that showed an older name after one had shown the newer: 0 if reads never go back. */
  wentBack: number;
  /** How the first response showing each write was answered (Cache-Status). */
  firstShownBy: Record<string, number>;
  /** The writes' own latency (PUT sent to acknowledged). */
  writeP50: number;
  writeP99: number;
  readers: number;
  pollGapMs: number;
  /** Reader responses, in all. */
  reads: number;
};

const READERS = 4;
/** Each reader waits this long between its responses, so the readers together poll every few milliseconds. */
const POLL_GAP_MS = 20;
/** A write is drawn at a random moment of this span after the last was seen: the key's isolate cache lives 1 s. */
const SPREAD_MS = 1000;
const TIMEOUT_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Write-to-visible: a writer renames a pinpoint on the key's page (PUT with a
 * token) `samples` times, each at a random moment, while READERS poll the page
 * with the key; each sample is the time from the PUT's acknowledgement (its
 * status line) to the first reader response that shows the new name (0 if
 * one showed it before the acknowledgement came).
 */
export async function measureFreshness(
  setup: FreshnessSetup,
  samples: number,
  log: (message: string) => void,
): Promise<FreshnessReport> {
  const run = Math.random().toString(36).slice(2, 8);
  const shown = new RegExp(`"name":"Freshness ${run} (\\d+)"`);
  /** The sample being written, and the first reader response that showed it. */
  let current = -1;
  let first: { at: number; by: string } | null = null;
  let wentBack = 0;
  let reads = 0;
  let stop = false;
  let failure: Error | null = null;

  const reader = async (offset: number) => {
    await sleep(offset);
    // Per reader, as one viewer sees the page: a name older than one already shown is a step back.
    let newest = -1;
    while (!stop) {
      const response = await fetch(setup.pageUrl, { headers: setup.viewerHeaders });
      const body = await response.text();
      const at = performance.now();
      reads++;
      if (response.status !== 200) throw new Error(`reader: ${response.status} ${body.slice(0, 200)}`);
      const shows = Number(body.match(shown)?.[1] ?? -1);
      if (shows < newest) wentBack++;
      newest = Math.max(newest, shows);
      if (shows === current && current >= 0 && first === null) {
        first = { at, by: response.headers.get("Cache-Status") ?? "(none)" };
      }
      await sleep(POLL_GAP_MS);
    }
  };
  const readers = Array.from({ length: READERS }, (_, i) =>
    reader((i * POLL_GAP_MS) / READERS).catch((error: unknown) => {
      failure = error instanceof Error ? error : new Error(String(error));
    }),
  );

  const latencies: number[] = [];
  const writes: number[] = [];
  const firstShownBy: Record<string, number> = {};
  let unseen = 0;
  try {
    for (let i = 0; i < samples; i++) {
      await sleep(Math.random() * SPREAD_MS);
      if (failure) throw failure;
      current = i;
      first = null;
      const sent = performance.now();
      const response = await fetch(setup.pinpointUrl, {
        method: "PUT",
        headers: { Authorization: `Bearer ${setup.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name: `Freshness ${run} ${i}` }),
      });
      const acknowledged = performance.now();
      if (response.status !== 200) throw new Error(`PUT: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      writes.push(acknowledged - sent);
      while (first === null && performance.now() - acknowledged < TIMEOUT_MS && !failure) await sleep(2);
      if (failure) throw failure;
      const seen = first as { at: number; by: string } | null;
      if (seen === null) {
        unseen++;
        latencies.push(TIMEOUT_MS);
      } else {
        // A response that showed the change before the acknowledgement arrived: visible at once.
        latencies.push(Math.max(0, seen.at - acknowledged));
        firstShownBy[seen.by] = (firstShownBy[seen.by] ?? 0) + 1;
      }
      if ((i + 1) % 20 === 0) log(`  freshness: ${i + 1} of ${samples} writes`);
    }
  } finally {
    stop = true;
    await Promise.all(readers);
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  const writeSorted = [...writes].sort((a, b) => a - b);
  return {
    samples: sorted,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    unseen,
    wentBack,
    firstShownBy,
    writeP50: percentile(writeSorted, 50),
    writeP99: percentile(writeSorted, 99),
    readers: READERS,
    pollGapMs: POLL_GAP_MS,
    reads,
  };
}
