/**
 * Soak test (`npm run soak`, `-- --duration 30s` to try it briefly): the
 * Worker bundled as a deploy would, on one local workerd (Miniflare's API, as
 * `npm run bench`), under mixed traffic from two accounts at the highest rate
 * the runtime sustains (a closed loop: every session sends its next request as
 * soon as the last one is answered), for 5 minutes by default. Then an audit:
 * - every acknowledged (2xx) create is present and every acknowledged delete
 *   absent, with the fields of the last acknowledged update;
 * - every list's members, read through the API, are what the client believes;
 * - every event is there, at its pinpoint;
 * - every referenced media object is in R2 with the bytes uploaded, and R2
 *   holds no object that no row references;
 * - `PRAGMA foreign_key_check` is clean, and no response was a 5xx.
 * Each session owns the objects it creates, so its model of them is exact
 * even with many sessions running at once. Talks only to 127.0.0.1 and stops
 * by itself (a watchdog ends it at the duration plus 5 minutes). Rate limits
 * are not configured in this runtime, as in the benchmarks: the soak
 * measures the service, not the limiter. Exit status 0 only if the audit holds.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { generateClientId, generateClientSecret, hashSecret } from "../src/core/secrets.ts";
import { buildBundle, startRuntime, workerdChildren, type Runtime } from "./runtime.ts";
import { fakePng } from "./scenarios.ts";
import { resultPath } from "./results-dir.ts";
import { migrate } from "./seed.ts";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "5m" },
    sessions: { type: "string", default: "8" },
  },
});
function seconds(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(s|m)?$/.exec(text);
  if (!match) throw new Error(`--duration: expected e.g. 300, 30s or 5m, not ${text}`);
  return Number(match[1]) * (match[2] === "m" ? 60 : 1);
}
const DURATION_S = seconds(args.duration);
/** Concurrent sessions per account. */
const SESSIONS = Number(args.sessions);
if (!Number.isInteger(SESSIONS) || SESSIONS < 1 || SESSIONS > 64) throw new Error("--sessions: 1 to 64");

const started = performance.now();
const log = (message: string) =>
  console.error(`[soak ${((performance.now() - started) / 1000).toFixed(0)}s] ${message}`);
const dir = mkdtempSync(join(tmpdir(), "poi-soak-"));
let runtime: Runtime | null = null;

async function cleanup(): Promise<void> {
  await runtime?.dispose().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
process.on("exit", () => {
  for (const pid of workerdChildren()) process.kill(pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => void cleanup().finally(() => process.exit(130)));
}
setTimeout(
  () => {
    log("watchdog: stopping");
    void cleanup().finally(() => process.exit(2));
  },
  (DURATION_S + 300) * 1000,
).unref();

// ---- what the clients believe ----
type Pinpoint = { id: number; name: string; tags: string[]; media: string | null };
type Event = { id: number; pinpoint: number; name: string; media: string | null };
type List = { id: number; members: Set<number> };
type Session = {
  account: number;
  token: string;
  pinpoints: Map<number, Pinpoint>;
  events: Map<number, Event>;
  lists: Map<number, List>;
};

/** sha256 of the bytes uploaded under each media URL a client was told. */
const uploaded = new Map<string, string>();
const stats = new Map<string, { count: number; failed: number; millis: number[] }>();
const serverErrors: string[] = [];
let base = "";

function record(op: string, millis: number, ok: boolean): void {
  let s = stats.get(op);
  if (!s) stats.set(op, (s = { count: 0, failed: 0, millis: [] }));
  s.count++;
  if (!ok) s.failed++;
  s.millis.push(millis);
}

async function call(
  session: Session,
  op: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const t0 = performance.now();
  const response = await fetch(path.startsWith("http") ? path : `${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${session.token}`,
      ...(body !== undefined && { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  record(op, performance.now() - t0, response.ok);
  if (response.status >= 500) serverErrors.push(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
  return {
    status: response.status,
    json: text && response.headers.get("Content-Type")?.includes("json") ? JSON.parse(text) : null,
  };
}

const png = () => fakePng(1024 + Math.floor(Math.random() * 4096));
function mediaFile(bytes: Uint8Array) {
  return { content: Buffer.from(bytes).toString("base64"), name: "soak.png", type: "image/png" };
}
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const pick = <T>(items: T[]): T | undefined => items[Math.floor(Math.random() * items.length)];
const sample = <T>(items: T[], n: number): T[] => items.toSorted(() => Math.random() - 0.5).slice(0, n);
let serial = 0;

/** One step of a session: an operation chosen by weight among those its state allows. */
async function step(s: Session): Promise<void> {
  const pins = [...s.pinpoints.keys()];
  const lists = [...s.lists.values()];
  const roll = Math.random();
  if (pins.length < 5 || roll < 0.2) {
    const media = Math.random() < 0.3 ? png() : null;
    const name = `Soak ${++serial}`;
    const tags = [`t${serial % 7}`, "soak"];
    const body = {
      name,
      latitude: 45 + Math.random(),
      longitude: 4 + Math.random(),
      tags,
      ...(media && { media_file: mediaFile(media) }),
    };
    const { status, json } = await call(
      s,
      media ? "create pinpoint + media" : "create pinpoint",
      "POST",
      "/v3.0/pinpoints",
      body,
    );
    if (status === 201) {
      s.pinpoints.set(json.id, { id: json.id, name, tags, media: json.media_url });
      if (media) uploaded.set(json.media_url, sha(media));
    }
  } else if (roll < 0.35) {
    const p = s.pinpoints.get(pick(pins)!)!;
    const name = `Renamed ${++serial}`;
    const change = Math.random();
    const media = change < 0.2 ? png() : null;
    const body = { name, ...(media ? { media_file: mediaFile(media) } : change < 0.3 ? { media_file: null } : {}) };
    const { status, json } = await call(s, "update pinpoint", "PUT", `/v3.0/pinpoints/${p.id}`, body);
    if (status === 200) {
      p.name = name;
      p.media = json.media_url;
      if (media) uploaded.set(json.media_url, sha(media));
    }
  } else if (roll < 0.43) {
    const id = pick(pins)!;
    const { status } = await call(s, "delete pinpoint", "DELETE", `/v3.0/pinpoints/${id}`);
    if (status === 204) {
      s.pinpoints.delete(id);
      for (const list of s.lists.values()) list.members.delete(id);
      for (const event of s.events.values()) if (event.pinpoint === id) s.events.delete(event.id);
    }
  } else if (lists.length < 2 || roll < 0.46) {
    const { status, json } = await call(s, "create list", "POST", "/v3.0/lists", { name: `List ${++serial}` });
    if (status === 201) s.lists.set(json.id, { id: json.id, members: new Set() });
  } else if (roll < 0.56) {
    const list = pick(lists)!;
    const items = sample(pins, 1 + Math.floor(Math.random() * 20));
    const { status } = await call(
      s,
      "add members",
      "POST",
      `/v3.0/lists/${list.id}/pinpoints`,
      items.map((id) => ({ id })),
    );
    if (status === 200) for (const id of items) list.members.add(id);
  } else if (roll < 0.62) {
    const list = pick(lists)!;
    const items = sample([...list.members], 1 + Math.floor(Math.random() * 10));
    if (items.length === 0) return;
    const { status } = await call(
      s,
      "remove members",
      "DELETE",
      `/v3.0/lists/${list.id}/pinpoints`,
      items.map((id) => ({ id })),
    );
    if (status === 200) for (const id of items) list.members.delete(id);
  } else if (roll < 0.68) {
    const pinpoint = pick(pins)!;
    const media = Math.random() < 0.3 ? png() : null;
    const name = `Event ${++serial}`;
    const dates = [{ start: "2027-01-01T10:00:00Z", end: "2027-01-01T12:00:00Z" }];
    const body = { name, pinpoint, dates, ...(media && { media_file: mediaFile(media) }) };
    const { status, json } = await call(s, "create event", "POST", "/v3.0/events", body);
    if (status === 201) {
      s.events.set(json.id, { id: json.id, pinpoint, name, media: json.media_url });
      if (media) uploaded.set(json.media_url, sha(media));
    }
  } else if (roll < 0.71 && s.events.size > 0) {
    const id = pick([...s.events.keys()])!;
    const { status } = await call(s, "delete event", "DELETE", `/v3.0/events/${id}`);
    if (status === 204) s.events.delete(id);
  } else if (roll < 0.85) {
    await call(s, "page of pinpoints", "GET", `/v3.0/pinpoints?limit=50`);
  } else if (roll < 0.93) {
    await call(s, "page of a list", "GET", `/v3.0/pinpoints?list=${pick(lists)!.id}&limit=50`);
  } else {
    const withMedia = [...s.pinpoints.values()].filter((p) => p.media);
    const url = pick(withMedia)?.media;
    if (url) await call(s, "get media", "GET", url);
    else await call(s, "get pinpoint", "GET", `/v3.0/pinpoints/${pick(pins)}`);
  }
}

// ---- the audit ----
async function all(s: Session, path: string): Promise<any[]> {
  const rows: any[] = [];
  let next: string | null = `${base}${path}${path.includes("?") ? "&" : "?"}limit=100`;
  while (next) {
    const { status, json } = await call(s, "audit read", "GET", next);
    if (status !== 200) throw new Error(`audit: GET ${next} answered ${status}`);
    rows.push(...json.results);
    next = json.next;
  }
  return rows;
}

function sameSet(what: string, actual: Iterable<number>, expected: Iterable<number>, problems: string[]): void {
  const a = new Set(actual);
  const e = new Set(expected);
  const missing = [...e].filter((id) => !a.has(id));
  const extra = [...a].filter((id) => !e.has(id));
  if (missing.length) problems.push(`${what}: ${missing.length} acknowledged missing (e.g. ${missing.slice(0, 5)})`);
  if (extra.length) problems.push(`${what}: ${extra.length} present that should not be (e.g. ${extra.slice(0, 5)})`);
}

async function audit(
  accounts: Session[][],
  rt: Runtime,
): Promise<{ problems: string[]; checked: Record<string, number> }> {
  const problems: string[] = [];
  const checked = { pinpoints: 0, lists: 0, members: 0, events: 0, mediaObjects: 0 };
  for (const sessions of accounts) {
    const s = sessions[0]!;
    const believed = new Map(sessions.flatMap((x) => [...x.pinpoints]));
    const pinpoints = await all(s, "/v3.0/pinpoints");
    sameSet(
      `account ${s.account} pinpoints`,
      pinpoints.map((p) => p.id),
      believed.keys(),
      problems,
    );
    for (const p of pinpoints) {
      const b = believed.get(p.id);
      if (b && (p.name !== b.name || p.media_url !== b.media || JSON.stringify(p.tags) !== JSON.stringify(b.tags))) {
        problems.push(
          `pinpoint ${p.id}: ${JSON.stringify([p.name, p.media_url, p.tags])} but the client believes ${JSON.stringify([b.name, b.media, b.tags])}`,
        );
      }
    }
    checked.pinpoints += pinpoints.length;
    for (const list of sessions.flatMap((x) => [...x.lists.values()])) {
      const members = await all(s, `/v3.0/pinpoints?list=${list.id}`);
      sameSet(
        `list ${list.id} members`,
        members.map((p) => p.id),
        list.members,
        problems,
      );
      checked.lists++;
      checked.members += members.length;
    }
    const believedEvents = new Map(sessions.flatMap((x) => [...x.events]));
    const events = await all(s, "/v3.0/events");
    sameSet(
      `account ${s.account} events`,
      events.map((e) => e.id),
      believedEvents.keys(),
      problems,
    );
    for (const e of events) {
      const b = believedEvents.get(e.id);
      if (b && (e.pinpoint !== b.pinpoint || e.media_url !== b.media || e.name !== b.name))
        problems.push(`event ${e.id} differs`);
    }
    checked.events += events.length;
  }
  // Media: every URL a live object names serves the bytes uploaded; R2 holds nothing else under m/.
  const live = accounts
    .flat()
    .flatMap((x) => [...[...x.pinpoints.values()].map((p) => p.media), ...[...x.events.values()].map((e) => e.media)]);
  const liveKeys = new Set<string>();
  for (const url of live) {
    if (!url) continue;
    liveKeys.add(new URL(url).pathname.replace(/^\/media\//, ""));
    const response = await fetch(url);
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (response.status !== 200 || sha(bytes) !== uploaded.get(url))
      problems.push(`media ${url}: ${response.status}, not the bytes uploaded`);
    checked.mediaObjects++;
  }
  /** The part of R2's binding the audit uses (Miniflare's proxy implements it). */
  type Listing = { objects: { key: string }[]; truncated: boolean; cursor?: string };
  const bucket = (await rt.mf.getR2Bucket("MEDIA", "api")) as unknown as {
    list(options: { prefix: string; cursor?: string }): Promise<Listing>;
  };
  const stored = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix: "m/", cursor });
    for (const object of page.objects) stored.add(object.key);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  const orphans = [...stored].filter((k) => !liveKeys.has(k));
  const missing = [...liveKeys].filter((k) => !stored.has(k));
  if (orphans.length) problems.push(`R2: ${orphans.length} orphaned media objects (e.g. ${orphans.slice(0, 3)})`);
  if (missing.length) problems.push(`R2: ${missing.length} referenced media objects missing`);
  const db = await rt.mf.getD1Database("DB", "api");
  const violations = await db.prepare("PRAGMA foreign_key_check").all();
  if (violations.results.length) problems.push(`D1: ${violations.results.length} foreign key violations`);
  if (serverErrors.length)
    problems.push(`${serverErrors.length} responses were 5xx, e.g. ${serverErrors.slice(0, 3).join("; ")}`);
  return { problems, checked };
}

// ---- the run ----
const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

try {
  log(`building the Worker; then ${DURATION_S} s of traffic from 2 accounts × ${SESSIONS} sessions`);
  const bundle = buildBundle(join(dir, "bundle"));
  runtime = await startRuntime(join(dir, "state"), { api: bundle });
  const rt = runtime;
  base = rt.api.origin;
  const db = await rt.mf.getD1Database("DB", "api");
  await migrate(db as never);

  const accounts: Session[][] = [];
  for (const name of ["soak-a", "soak-b"]) {
    const account = (await db
      .prepare("INSERT INTO accounts (name) VALUES (?) RETURNING id")
      .bind(name)
      .first<{ id: number }>())!.id;
    const id = generateClientId();
    const secret = generateClientSecret();
    await db
      .prepare("INSERT INTO clients (id, account_id, name, secret_hash, scope) VALUES (?, ?, 'soak', ?, 'read write')")
      .bind(id, account, await hashSecret(secret))
      .run();
    const response = await fetch(`${base}/v3.0/oauth2/token`, {
      method: "POST",
      headers: {
        Authorization: `Basic ${btoa(`${id}:${secret}`)}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
    if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
    const { access_token: token } = (await response.json()) as { access_token: string };
    accounts.push(
      Array.from({ length: SESSIONS }, () => ({
        account,
        token,
        pinpoints: new Map(),
        events: new Map(),
        lists: new Map(),
      })),
    );
  }

  const loadStart = performance.now();
  const end = loadStart + DURATION_S * 1000;
  let lastReport = loadStart;
  const networkErrors: string[] = [];
  await Promise.all(
    accounts.flat().map(async (session) => {
      while (performance.now() < end) {
        try {
          await step(session);
        } catch (error) {
          networkErrors.push(String(error));
          if (networkErrors.length > 100) throw new Error(`too many failed requests: ${networkErrors.slice(0, 3)}`);
        }
        if (performance.now() - lastReport > 30_000) {
          lastReport = performance.now();
          const done = [...stats.values()].reduce((n, s) => n + s.count, 0);
          log(`${done} requests, ${(done / ((lastReport - loadStart) / 1000)).toFixed(0)}/s`);
        }
      }
    }),
  );
  const loadSeconds = (performance.now() - loadStart) / 1000;
  const requests = [...stats.values()].reduce((n, s) => n + s.count, 0);
  log(`load done: ${requests} requests in ${loadSeconds.toFixed(0)} s; auditing`);
  // Media of deleted rows are removed after the response (waitUntil); let those finish.
  await new Promise((resolve) => setTimeout(resolve, 2000));

  const { problems, checked } = await audit(accounts, rt);
  if (networkErrors.length) problems.push(`${networkErrors.length} requests got no response, e.g. ${networkErrors[0]}`);
  const operations = [...stats.entries()]
    .filter(([op]) => op !== "audit read")
    .map(([op, s]) => {
      const sorted = s.millis.toSorted((a, b) => a - b);
      return {
        op,
        count: s.count,
        non2xx: s.failed,
        p50: quantile(sorted, 0.5),
        p99: quantile(sorted, 0.99),
        max: sorted.at(-1) ?? 0,
      };
    })
    .sort((a, b) => b.count - a.count);
  const load = operations.reduce((n, o) => n + o.count, 0);
  const result = {
    date: new Date().toISOString(),
    durationSeconds: Math.round(loadSeconds),
    sessions: 2 * SESSIONS,
    requests: load,
    requestsPerSecond: Math.round(load / loadSeconds),
    serverErrors: serverErrors.length,
    operations,
    checked,
    problems,
  };
  console.log(
    `\nSoak: ${load} requests in ${loadSeconds.toFixed(0)} s (${result.requestsPerSecond}/s), ${2 * SESSIONS} sessions, 5xx: ${serverErrors.length}`,
  );
  console.log("operation                  count   non-2xx   p50 ms   p99 ms   max ms");
  for (const o of operations) {
    console.log(
      `${o.op.padEnd(24)} ${String(o.count).padStart(7)} ${String(o.non2xx).padStart(9)} ${o.p50.toFixed(1).padStart(8)} ${o.p99.toFixed(1).padStart(8)} ${o.max.toFixed(0).padStart(8)}`,
    );
  }
  console.log(`audit checked: ${JSON.stringify(checked)}`);
  console.log(
    problems.length
      ? `AUDIT FAILED:\n  ${problems.join("\n  ")}`
      : "audit: every acknowledged write present, every acknowledged delete absent, lists, events and media as believed, no orphaned media, no 5xx",
  );
  writeFileSync(resultPath("soak-latest.json"), `${JSON.stringify(result, null, 2)}\n`);
  await cleanup();
  process.exit(problems.length ? 1 : 0);
} catch (error) {
  console.error(error);
  await cleanup();
  process.exit(1);
}
