/**
 * The bench's `scale` group, run by `BENCH_GROUPS=scale npm run bench`:
 * the map questions at 100,000 and at 1,000,000 pinpoints of one account
 * (bench/scale-data.ts), each size in a runtime of its own.
 *
 * For each question, in interleaved rounds on one runtime: the API's first
 * page of 20, the bare indexed SQL of the same question (bench/baselines/bare-d1.js
 * `/sql`) and the same question answered by a full scan of the account's rows.
 * Then vector tiles (docs/vector-tiles.md) at zooms 2, 6, 10 and 14 over a city and the
 * countryside: the API's tile, the bare SQL of the cells it reads, and the
 * tile from a full read of its places (bench/scale-data.ts `tileQuestions`).
 * Then a create, an update and a delete through the API with the search index
 * triggers in place and with them dropped, round after round: what keeping
 * the indexes costs a write, against the same database without them; and the
 * same with the tile cells' triggers.
 *
 * Requests are sequential on one connection, so the throughput ratio is the
 * inverse ratio of the mean times; figures are mean milliseconds per request,
 * medians over the rounds.
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import { machine } from "./report.ts";
import { startRuntime, type Bundle, type Runtime } from "./runtime.ts";
import {
  OCEAN,
  PARIS,
  pageCircle,
  questions,
  seedScale,
  tileCellCounts,
  tileQuestions,
  type Question,
} from "./scale-data.ts";
import { migrate, type D1 } from "./seed.ts";

export const SCALE_SETTINGS = {
  sizes: (process.env.BENCH_SCALE_SIZES ?? "100000,1000000").split(",").map(Number),
  seconds: Number(process.env.BENCH_SCALE_SECONDS ?? 2),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
};

/** The issue's targets. */
export const SCALE_TARGETS = { vsBare: 0.7, growth: 1.25, scanFactor: 100, writes: 0.8 };

type Log = (message: string) => void;

/** Mean milliseconds per request of `send`, repeated for the configured seconds after one check. */
export async function timeIt(send: () => Promise<Response>, expected = 200): Promise<number> {
  const check = await send();
  if (check.status !== expected) throw new Error(`${check.status} ${await check.text()}`);
  await check.arrayBuffer();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SCALE_SETTINGS.seconds * 1000 || n < 3) {
    await (await send()).arrayBuffer();
    n++;
  }
  return (performance.now() - t0) / n;
}

export const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** A bearer token for the seeded client, from the service at `rt.api`. */
export async function token(rt: Runtime, clientId: string, secret: string): Promise<string> {
  const response = await fetch(new URL("/v3.0/oauth2/token", rt.api), {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${clientId}:${secret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export type QuestionResult = { label: string; api: number; bare: number; scan: number };
export type WriteResult = Record<"create" | "update" | "delete", { withIndexes: number; without: number }>;
export type SizeResult = {
  size: number;
  seedSeconds: number;
  circles: { paris: number; ocean: number };
  questions: Record<string, QuestionResult>;
  /** Vector tiles: the API's tile, the bare SQL of its cells, the tile from a full read of its places. */
  tiles: Record<string, QuestionResult>;
  /** The account's tile cells per level. */
  tileCells: Record<number, number>;
  /** Writes with the search index triggers and without them. */
  writes: WriteResult;
  /** Writes with the tile cells' triggers and without them. */
  tileWrites: WriteResult;
};
export type ScaleReport = {
  date: string;
  machine: ReturnType<typeof machine>;
  settings: typeof SCALE_SETTINGS;
  loadAverage: number[];
  sizes: SizeResult[];
};

async function measureSize(dir: string, bundle: Bundle, size: number, log: Log): Promise<SizeResult> {
  const rt = await startRuntime(join(dir, `scale-${size}`), { api: bundle, baselines: true });
  try {
    const db = (await rt.mf.getD1Database("DB", "api")) as unknown as D1;
    await migrate(db);
    const t0 = performance.now();
    const { account, clientId, secret } = await seedScale(db, size, (rows) => log(`  ${size}: ${rows} pinpoints`));
    const seedSeconds = (performance.now() - t0) / 1000;
    log(`seeded ${size} pinpoints and ${size / 10} events in ${seedSeconds.toFixed(0)} s`);
    const headers = { Authorization: `Bearer ${await token(rt, clientId, secret)}` };
    const circles = { paris: await pageCircle(db, account, PARIS), ocean: await pageCircle(db, account, OCEAN) };
    const sql = (query: [string, unknown[]]) => () =>
      fetch(new URL("/sql", rt.bare), { method: "POST", body: JSON.stringify({ sql: query[0], params: query[1] }) });
    const ask = async (list: Question[]) => {
      const out: Record<string, QuestionResult> = {};
      for (const q of list) {
        const samples = { api: [] as number[], bare: [] as number[], scan: [] as number[] };
        for (let round = 0; round < SCALE_SETTINGS.rounds; round++) {
          samples.api.push(await timeIt(() => fetch(new URL(q.api, rt.api), { headers })));
          samples.bare.push(await timeIt(sql(q.bare)));
          samples.scan.push(await timeIt(sql(q.scan)));
        }
        const r = { label: q.label, api: median(samples.api), bare: median(samples.bare), scan: median(samples.scan) };
        out[q.key] = r;
        log(
          `  ${size} ${q.key}: api ${r.api.toFixed(2)} ms, bare ${r.bare.toFixed(2)} ms, scan ${r.scan.toFixed(1)} ms`,
        );
      }
      return out;
    };
    const out = await ask(questions(account, circles));
    const tiles = await ask(tileQuestions(account));
    const tileCells = await tileCellCounts(db, account);
    log(`  ${size} tile cells per level: ${JSON.stringify(tileCells)}`);
    const writes = await measureWrites(rt, db, headers, "index");
    log(`  ${size} writes: ${JSON.stringify(writes)}`);
    const tileWrites = await measureWrites(rt, db, headers, "tiles");
    log(`  ${size} writes, tile cells: ${JSON.stringify(tileWrites)}`);
    return { size, seedSeconds, circles, questions: out, tiles, tileCells, writes, tileWrites };
  } finally {
    await rt.dispose();
  }
}

/**
 * A create, an update (name and place, so every index changes) and a delete
 * of a pinpoint, each timed on its own, with one kind of trigger and without
 * it, in A B B A order on the same database: the search indexes'
 * (`*_index_*`) or the tile cells' (`*_tiles_*`).
 */
async function measureWrites(
  rt: Runtime,
  db: D1,
  headers: Record<string, string>,
  kind: "index" | "tiles",
): Promise<WriteResult> {
  const { results: triggers } = await db
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_${kind}\\_%' ESCAPE '\\'`)
    .all<{ name: string; sql: string }>();
  if (triggers.length === 0) throw new Error(`no ${kind} triggers found`);
  const json = { ...headers, "Content-Type": "application/json" };
  const body = JSON.stringify({
    name: "Scale café",
    latitude: 48.85,
    longitude: 2.35,
    description: "<p>A <b>new</b> place to try.</p>",
    tags: ["food"],
  });
  const send = async (method: string, path: string, payload: string | undefined, expected: number) => {
    const t0 = performance.now();
    const response = await fetch(new URL(path, rt.api), { method, headers: payload ? json : headers, body: payload });
    const text = await response.text();
    if (response.status !== expected) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return { ms: performance.now() - t0, text };
  };
  const cycle = async () => {
    const created = await send("POST", "/v3.0/pinpoints", body, 201);
    const path = `/v3.0/pinpoints/${(JSON.parse(created.text) as { id: number }).id}`;
    const updated = await send("PUT", path, JSON.stringify({ name: "Renamed café", latitude: 48.86 }), 200);
    const deleted = await send("DELETE", path, undefined, 204);
    return { create: created.ms, update: updated.ms, delete: deleted.ms };
  };
  /** Mean milliseconds of each operation over the configured seconds. */
  const timeCycles = async () => {
    await cycle();
    const sum = { create: 0, update: 0, delete: 0 };
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < SCALE_SETTINGS.seconds * 1000 || n < 3) {
      const c = await cycle();
      for (const op of ["create", "update", "delete"] as const) sum[op] += c[op];
      n++;
    }
    return { create: sum.create / n, update: sum.update / n, delete: sum.delete / n };
  };
  type Means = Awaited<ReturnType<typeof timeCycles>>;
  const runs = { withIndexes: [] as Means[], without: [] as Means[] };
  const timeWithout = async () => {
    for (const { name } of triggers) await db.prepare(`DROP TRIGGER "${name}"`).run();
    try {
      runs.without.push(await timeCycles());
    } finally {
      for (const t of triggers) await db.prepare(t.sql).run();
    }
  };
  // A B B A: each side goes first as often as the other, so neither pays more for
  // coming right after the schema change (every statement is prepared again) or
  // for the machine's drift within a round.
  for (let round = 0; round < 2 * Math.ceil(SCALE_SETTINGS.rounds / 2); round++) {
    if (round % 2 === 0) {
      runs.withIndexes.push(await timeCycles());
      await timeWithout();
    } else {
      await timeWithout();
      runs.withIndexes.push(await timeCycles());
    }
  }
  const of = (op: "create" | "update" | "delete") => ({
    withIndexes: median(runs.withIndexes.map((r) => r[op])),
    without: median(runs.without.map((r) => r[op])),
  });
  return { create: of("create"), update: of("update"), delete: of("delete") };
}

/** Every size in turn, each on a fresh runtime under `dir`. */
export async function measureScale(dir: string, bundle: Bundle, log: Log): Promise<ScaleReport> {
  const sizes: SizeResult[] = [];
  for (const size of SCALE_SETTINGS.sizes) sizes.push(await measureSize(dir, bundle, size, log));
  return {
    date: new Date().toISOString(),
    machine: machine(),
    settings: SCALE_SETTINGS,
    loadAverage: loadavg(),
    sizes,
  };
}

const fmt = (n: number, digits = 2) => n.toFixed(digits);
const met = (ok: boolean) => (ok ? "yes" : "NO");

/** The scale group's tables: each question against its targets, then the writes. */
export function renderScale(report: ScaleReport): string {
  const small = report.sizes[0]!;
  const large = report.sizes[report.sizes.length - 1]!;
  const t = SCALE_TARGETS;
  const lines = [
    `Scale group, run ${report.date}; load average at the end ${report.loadAverage.map((l) => l.toFixed(2)).join(", ")}; ` +
      `${report.settings.seconds} s per sample, median of ${report.settings.rounds} interleaved rounds, one connection.`,
    "",
    `| question (first page of 20) | API ms, ${small.size.toLocaleString("en")} | API ms, ${large.size.toLocaleString("en")} | growth (≤ ${t.growth}×) | bare ms | API vs bare (≥ ${t.vsBare}) | full scan ms | scan ÷ API (~${t.scanFactor}×) | met |`,
    "| --- | --: | --: | --: | --: | --: | --: | --: | --- |",
  ];
  const questionRows = (pick: (r: SizeResult) => Record<string, QuestionResult>) => {
    for (const [key, l] of Object.entries(pick(large))) {
      const s = pick(small)[key]!;
      const growth = l.api / s.api;
      const vsBare = l.bare / l.api;
      lines.push(
        `| ${l.label} | ${fmt(s.api)} | ${fmt(l.api)} | ${fmt(growth)}× | ${fmt(l.bare)} | ${fmt(vsBare)} | ${fmt(l.scan, 1)} | ${fmt(l.scan / l.api, 0)}× | ${met(growth <= t.growth && vsBare >= t.vsBare)} |`,
      );
    }
  };
  questionRows((r) => r.questions);
  lines.push("");
  lines.push(
    `| vector tile (.mvt) | API ms, ${small.size.toLocaleString("en")} | API ms, ${large.size.toLocaleString("en")} | growth (≤ ${t.growth}×) | bare SQL of its cells, ms | API vs bare (≥ ${t.vsBare}) | from a full read of its places, ms | full read ÷ API | met |`,
  );
  lines.push("| --- | --: | --: | --: | --: | --: | --: | --: | --- |");
  questionRows((r) => r.tiles);
  const writeRows = (title: string, pick: (r: SizeResult) => WriteResult) => {
    lines.push("");
    lines.push(
      `| write through the API (ms) | size | ${title} | without (triggers dropped) | ratio (≥ ${t.writes}) | met |`,
    );
    lines.push("| --- | --: | --: | --: | --: | --- |");
    for (const s of report.sizes) {
      for (const op of ["create", "update", "delete"] as const) {
        const w = pick(s)[op];
        const ratio = w.without / w.withIndexes;
        lines.push(
          `| ${op} | ${s.size.toLocaleString("en")} | ${fmt(w.withIndexes)} | ${fmt(w.without)} | ${fmt(ratio)} | ${met(ratio >= t.writes)} |`,
        );
      }
    }
  };
  writeRows("with the search indexes", (r) => r.writes);
  writeRows("with the tile cells", (r) => r.tileWrites);
  lines.push("");
  lines.push(
    `Tile cells of the account, per level: ${report.sizes
      .map(
        (s) =>
          `${s.size.toLocaleString("en")} places: ${Object.entries(s.tileCells)
            .map(([level, n]) => `${level}: ${n.toLocaleString("en")}`)
            .join(", ")}`,
      )
      .join("; ")}.`,
  );
  return lines.join("\n");
}
