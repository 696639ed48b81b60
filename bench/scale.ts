/**
 * `npm run bench:scale`: the bench's scale group (issue 9). The map questions
 * at 100,000 and at 1,000,000 pinpoints (one account, spread like real places:
 * 70% in 20 dense cities, the rest over the countryside; names, tags and a
 * sentence of description each) with a tenth as many events over a year.
 *
 * For each question, in interleaved rounds on one runtime:
 * - the API's first page of 20;
 * - the bare indexed SQL of the same question (bench/baselines/bare-d1.js `/sql`);
 * - the same question answered by a full scan of the account's rows.
 * Then creates, updates and deletes with the search triggers in place, and
 * again with them dropped: what keeping the indexes costs.
 *
 * Requests are sequential on one connection; figures are mean milliseconds
 * per request. Settings: SCALE_SIZES (100000,1000000), SCALE_SECONDS (2),
 * SCALE_ROUNDS (3). Writes bench/results/scale.json and prints a Markdown table.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateClientId, generateClientSecret, hashSecret } from "../src/core/secrets.ts";
import { machine } from "./report.ts";
import { buildBundle, startRuntime, type Runtime } from "./runtime.ts";
import { migrate, type D1 } from "./seed.ts";

const SIZES = (process.env.SCALE_SIZES ?? "100000,1000000").split(",").map(Number);
const SECONDS = Number(process.env.SCALE_SECONDS ?? 2);
const ROUNDS = Number(process.env.SCALE_ROUNDS ?? 3);
const started = performance.now();
const log = (message: string) =>
  console.error(`[scale ${((performance.now() - started) / 1000).toFixed(0)}s] ${message}`);

const CITIES = [
  [48.8566, 2.3522],
  [51.5074, -0.1278],
  [40.7128, -74.006],
  [35.6762, 139.6503],
  [-33.8688, 151.2093],
  [52.52, 13.405],
  [41.9028, 12.4964],
  [40.4168, -3.7038],
  [55.7558, 37.6173],
  [-23.5505, -46.6333],
  [19.4326, -99.1332],
  [34.0522, -118.2437],
  [1.3521, 103.8198],
  [28.6139, 77.209],
  [30.0444, 31.2357],
  [-34.6037, -58.3816],
  [37.5665, 126.978],
  [45.4642, 9.19],
  [59.3293, 18.0686],
  [-17.7134, 178.065],
] as const;
const WORDS = [
  "Café",
  "Musée",
  "Park",
  "Church",
  "Tower",
  "Market",
  "Garden",
  "Bridge",
  "Theatre",
  "Library",
  "Station",
  "Bakery",
  "Gallery",
  "Square",
  "Harbour",
  "Castle",
];
const TAGS = ["food", "art", "history", "nature", "kids", "free", "view", "night"];
const YEAR = Date.parse("2027-01-01T00:00:00Z");

/** A deterministic fraction in [0, 1) for row `i` and stream `k`. */
const h = (k: number) => `(((i * 2654435761 + ${k * 40503}) % 1000003) / 1000003.0)`;

const PINPOINTS = `
WITH RECURSIVE n(i) AS (SELECT ?2 UNION ALL SELECT i + 1 FROM n WHERE i < ?3),
  cities(k, lat, lon) AS (VALUES ${CITIES.map(([lat, lon], k) => `(${k}, ${lat}, ${lon})`).join(", ")}),
  words(k, w) AS (VALUES ${WORDS.map((w, k) => `(${k}, '${w}')`).join(", ")}),
  tags(k, t) AS (VALUES ${TAGS.map((t, k) => `(${k}, '${t}')`).join(", ")}),
  rows AS (
    SELECT i, ${h(1)} < 0.7 AS city, i % ${CITIES.length} AS c,
      (SELECT w FROM words WHERE k = i % ${WORDS.length}) || ' ' || (SELECT w FROM words WHERE k = (i / 7) % ${WORDS.length}) AS name,
      (SELECT t FROM tags WHERE k = i % ${TAGS.length}) AS t1, (SELECT t FROM tags WHERE k = (i / 3) % ${TAGS.length}) AS t2,
      'A ' || lower((SELECT w FROM words WHERE k = (i / 11) % ${WORDS.length})) || ' worth a visit, open most days of the year.' AS sentence
    FROM n)
INSERT INTO pinpoints (account_id, name, address, category_id, description, description_text, latitude, longitude, tags)
SELECT ?1, name || ' ' || i, i || ' Main Street', 1, '<p>' || sentence || '</p>', sentence,
  CASE WHEN city THEN (SELECT lat FROM cities WHERE k = c) + (${h(2)} + ${h(3)} + ${h(4)} - 1.5) * 0.08 ELSE -50 + ${h(5)} * 110 END,
  CASE WHEN city THEN (SELECT lon FROM cities WHERE k = c) + (${h(6)} + ${h(7)} + ${h(8)} - 1.5) * 0.12 ELSE -180 + ${h(9)} * 360 END,
  json_array(t1, t2)
FROM rows`;

const EVENTS = `
WITH RECURSIVE n(i) AS (SELECT ?2 UNION ALL SELECT i + 1 FROM n WHERE i < ?3)
INSERT INTO events (account_id, pinpoint_id, name, description, description_text, dates, tags)
SELECT ?1, ?4 + i * 10, 'Concert ' || i, '<p>Live music.</p>', 'Live music.',
  CASE WHEN i % 3 = 0
    THEN json_array(json_object('start', ${YEAR} + cast(${h(10)} * 8760 AS integer) * 3600000, 'end', ${YEAR} + cast(${h(10)} * 8760 AS integer) * 3600000 + 7200000),
                    json_object('start', ${YEAR} + cast(${h(11)} * 8760 AS integer) * 3600000, 'end', ${YEAR} + cast(${h(11)} * 8760 AS integer) * 3600000 + 3600000))
    ELSE json_array(json_object('start', ${YEAR} + cast(${h(10)} * 8760 AS integer) * 3600000, 'end', ${YEAR} + cast(${h(10)} * 8760 AS integer) * 3600000 + 10800000))
  END,
  '["music"]'
FROM n`;

async function seed(db: D1, size: number) {
  const account = (await db
    .prepare("INSERT INTO accounts (name) VALUES ('scale') RETURNING id")
    .first<{ id: number }>())!.id;
  const secret = generateClientSecret();
  const clientId = generateClientId();
  await db
    .prepare("INSERT INTO clients (id, account_id, name, secret_hash, scope) VALUES (?, ?, 'scale', ?, 'read write')")
    .bind(clientId, account, await hashSecret(secret))
    .run();
  const chunk = 50_000;
  for (let from = 1; from <= size; from += chunk) {
    await db
      .prepare(PINPOINTS)
      .bind(account, from, Math.min(size, from + chunk - 1))
      .run();
    log(`  pinpoints ${Math.min(size, from + chunk - 1)}`);
  }
  const firstId = (await db
    .prepare("SELECT min(id) AS id FROM pinpoints WHERE account_id = ?")
    .bind(account)
    .first<{ id: number }>())!.id;
  const events = size / 10;
  for (let from = 0; from < events; from += chunk) {
    await db
      .prepare(EVENTS)
      .bind(account, from, Math.min(events, from + chunk) - 1, firstId)
      .run();
  }
  return { account, clientId, secret };
}

type Question = { key: string; label: string; api: string; bare: [string, unknown[]]; scan: [string, unknown[]] };

const R = 6_378_137;
const dist = (lat: number, lon: number) => {
  const l = (lat * Math.PI) / 180;
  const o = (lon * Math.PI) / 180;
  return `(${2 * R} * asin(min(1, sqrt(sin((radians(latitude) - ${l}) / 2) * sin((radians(latitude) - ${l}) / 2) + ${Math.cos(l)} * cos(radians(latitude)) * sin((radians(longitude) - ${o}) / 2) * sin((radians(longitude) - ${o}) / 2)))))`;
};
const box = (lat: number, lon: number, metres: number) => {
  const dLat = (metres / R) * (180 / Math.PI);
  const dLon = dLat / Math.cos((lat * Math.PI) / 180);
  return [lon - dLon, lat - dLat, lon + dLon, lat + dLat] as const;
};
const rtree = (account: number, [minLon, minLat, maxLon, maxLat]: readonly number[]) =>
  `SELECT id FROM pinpoints_rtree WHERE min_account <= ${account} AND max_account >= ${account} AND max_lon >= ${minLon} AND min_lon <= ${maxLon} AND max_lat >= ${minLat} AND min_lat <= ${maxLat}`;

function questions(account: number, nearestRadius: number): Question[] {
  const [lat, lon] = [48.8566, 2.3522];
  const city = [2.27, 48.82, 2.43, 48.89] as const;
  const village = [24.0, 10.0, 24.3, 10.3] as const;
  const inBox = ([a, b, c, d]: readonly number[]) =>
    `latitude BETWEEN ${b} AND ${d} AND longitude BETWEEN ${a} AND ${c}`;
  const weekend = ["2027-06-12T00:00:00Z", "2027-06-14T00:00:00Z"].map(Date.parse) as [number, number];
  const occurrence = `SELECT events.*, o.start FROM event_occurrences AS o CROSS JOIN events ON events.id = o.event_id
    WHERE o.account_id = ?1 AND o.start < ?3 AND o.start >= ?2 - (SELECT max("end" - start) FROM event_occurrences WHERE account_id = ?1) AND o."end" > ?2
    ORDER BY o.start, o.event_id LIMIT 21`;
  return [
    {
      key: "viewport-city",
      label: "viewport page of 20, a city (bbox 0.16° × 0.07°)",
      api: `/v3.0/pinpoints?bbox=${city.join(",")}`,
      bare: [`SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(city)} ORDER BY id LIMIT 21`, [account]],
      scan: [
        `SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(city)} ORDER BY latitude, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "viewport-village",
      label: "viewport page of 20, a village (bbox 0.3°, countryside)",
      api: `/v3.0/pinpoints?bbox=${village.join(",")}`,
      bare: [
        `SELECT * FROM pinpoints WHERE id IN (${rtree(account, village)}) AND account_id = ? AND ${inBox(village)} ORDER BY id LIMIT 21`,
        [account],
      ],
      scan: [`SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(village)} ORDER BY id LIMIT 21`, [account]],
    },
    {
      key: "nearby-2km",
      label: "nearby page of 20, radius 2 km",
      api: `/v3.0/pinpoints?latitude=${lat}&longitude=${lon}&radius=2000`,
      bare: [
        `SELECT *, ${dist(lat, lon)} AS d FROM pinpoints WHERE id IN (${rtree(account, box(lat, lon, 2000))}) AND account_id = ? AND ${dist(lat, lon)} <= 2000 ORDER BY d, id LIMIT 21`,
        [account],
      ],
      scan: [
        `SELECT *, ${dist(lat, lon)} AS d FROM pinpoints WHERE account_id = ? AND ${dist(lat, lon)} <= 2000 ORDER BY d, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "nearby",
      label: "nearby page of 20, no radius",
      api: `/v3.0/pinpoints?latitude=${lat}&longitude=${lon}`,
      bare: [
        `SELECT *, ${dist(lat, lon)} AS d FROM pinpoints WHERE id IN (${rtree(account, box(lat, lon, nearestRadius))}) AND account_id = ? AND ${dist(lat, lon)} <= ${nearestRadius} ORDER BY d, id LIMIT 21`,
        [account],
      ],
      scan: [`SELECT *, ${dist(lat, lon)} AS d FROM pinpoints WHERE account_id = ? ORDER BY d, id LIMIT 21`, [account]],
    },
    {
      key: "nearby-ocean",
      label: "nearby page of 20, no radius, mid-Pacific",
      api: `/v3.0/pinpoints?latitude=-30&longitude=-130`,
      bare: [
        `SELECT *, ${dist(-30, -130)} AS d FROM pinpoints WHERE account_id = ? ORDER BY d, id LIMIT 21`,
        [account],
      ],
      scan: [
        `SELECT *, ${dist(-30, -130)} AS d FROM pinpoints WHERE account_id = ? ORDER BY d, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "text",
      label: "text page of 20, a common word (q=cafe)",
      api: `/v3.0/pinpoints?q=cafe`,
      bare: [
        `SELECT pinpoints.* FROM pinpoints_fts CROSS JOIN pinpoints ON pinpoints.id = pinpoints_fts.rowid WHERE pinpoints_fts MATCH '{name} : ("cafe"*)' AND account_id = ? ORDER BY pinpoints_fts.rowid LIMIT 21`,
        [account],
      ],
      scan: [
        `SELECT * FROM pinpoints WHERE account_id = ? AND (name LIKE '%caf%' OR address LIKE '%caf%' OR tags LIKE '%caf%' OR description_text LIKE '%caf%') ORDER BY name LIKE '%caf%' DESC, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "text-bbox",
      label: "text + bbox page of 20 (q=cafe in the city)",
      api: `/v3.0/pinpoints?q=cafe&bbox=${city.join(",")}`,
      bare: [
        `SELECT pinpoints.* FROM pinpoints_fts CROSS JOIN pinpoints ON pinpoints.id = pinpoints_fts.rowid WHERE pinpoints_fts MATCH '{name} : ("cafe"*)' AND account_id = ? AND ${inBox(city)} ORDER BY pinpoints_fts.rowid LIMIT 21`,
        [account],
      ],
      scan: [
        `SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(city)} AND (name LIKE '%caf%' OR address LIKE '%caf%' OR tags LIKE '%caf%' OR description_text LIKE '%caf%') ORDER BY name LIKE '%caf%' DESC, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "events-weekend",
      label: "events page of 20, one weekend",
      api: `/v3.0/events?from=${new Date(weekend[0]).toISOString()}&to=${new Date(weekend[1]).toISOString()}`,
      bare: [occurrence, [account, ...weekend]],
      scan: [
        `SELECT events.*, min(json_extract(d.value, '$.start')) AS s FROM events, json_each(events.dates) AS d
        WHERE events.account_id = ?1 AND json_extract(d.value, '$.start') < ?3 AND json_extract(d.value, '$.end') > ?2
        GROUP BY events.id ORDER BY s, events.id LIMIT 21`,
        [account, ...weekend],
      ],
    },
  ];
}

/** Mean milliseconds per request of `send`, repeated for SECONDS. */
async function timeIt(send: () => Promise<Response>): Promise<number> {
  const warm = await send();
  if (warm.status !== 200) throw new Error(`${warm.status} ${await warm.text()}`);
  await warm.arrayBuffer();
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000 || n < 3) {
    const r = await send();
    await r.arrayBuffer();
    n++;
  }
  return (performance.now() - t0) / n;
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[v.length >> 1]!;

async function measureSize(dir: string, bundle: ReturnType<typeof buildBundle>, size: number) {
  const rt: Runtime = await startRuntime(join(dir, `state-${size}`), { api: bundle, baselines: true });
  try {
    const db = (await rt.mf.getD1Database("DB", "api")) as unknown as D1;
    await migrate(db);
    const t0 = performance.now();
    const { account, clientId, secret } = await seed(db, size);
    const seedSeconds = (performance.now() - t0) / 1000;
    log(`seeded ${size} pinpoints and ${size / 10} events in ${seedSeconds.toFixed(0)} s`);
    const tokenResponse = await fetch(new URL("/v3.0/oauth2/token", rt.api), {
      method: "POST",
      headers: {
        Authorization: `Basic ${btoa(`${clientId}:${secret}`)}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
    const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
    const headers = { Authorization: `Bearer ${token}` };
    // The circle the service settles on for the no-radius question, for its bare SQL: twice the first probe circle holding a page.
    let nearestRadius = 125;
    for (; nearestRadius < 2e7; nearestRadius *= 2) {
      const n = await db
        .prepare(`SELECT count(*) AS n FROM (${rtree(account, box(48.8566, 2.3522, nearestRadius))} LIMIT 21)`)
        .first<{ n: number }>();
      if (n!.n >= 21) break;
    }
    nearestRadius *= 2;
    const sql = (query: [string, unknown[]]) => () =>
      fetch(new URL("/sql", rt.bare), { method: "POST", body: JSON.stringify({ sql: query[0], params: query[1] }) });
    const out: Record<string, { label: string; api: number; bare: number; scan: number }> = {};
    for (const q of questions(account, nearestRadius)) {
      const samples = { api: [] as number[], bare: [] as number[], scan: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        samples.api.push(await timeIt(() => fetch(new URL(q.api, rt.api), { headers })));
        samples.bare.push(await timeIt(sql(q.bare)));
        samples.scan.push(await timeIt(sql(q.scan)));
      }
      out[q.key] = { label: q.label, api: median(samples.api), bare: median(samples.bare), scan: median(samples.scan) };
      log(
        `  ${q.key}: api ${out[q.key]!.api.toFixed(2)} ms, bare ${out[q.key]!.bare.toFixed(2)} ms, scan ${out[q.key]!.scan.toFixed(2)} ms`,
      );
    }
    const writes = await measureWrites(rt, db, headers);
    return { size, seedSeconds, nearestRadius, questions: out, writes };
  } finally {
    await rt.dispose();
  }
}

/** Create, update and delete through the API, with the search triggers and then without them. */
async function measureWrites(rt: Runtime, db: D1, headers: Record<string, string>) {
  const body = JSON.stringify({
    name: "Scale café",
    latitude: 48.85,
    longitude: 2.35,
    description: "<p>A <b>new</b> place to try.</p>",
    tags: ["food"],
  });
  const json = { ...headers, "Content-Type": "application/json" };
  const create = async () => {
    const r = await fetch(new URL("/v3.0/pinpoints", rt.api), { method: "POST", headers: json, body });
    return r;
  };
  const cycle = async () => {
    const created = (await (await create()).json()) as { id: number };
    const url = new URL(`/v3.0/pinpoints/${created.id}`, rt.api);
    await (
      await fetch(url, {
        method: "PUT",
        headers: json,
        body: JSON.stringify({ name: "Renamed café", latitude: 48.86 }),
      })
    ).arrayBuffer();
    return fetch(url, { method: "DELETE", headers });
  };
  const createOnly = async () => {
    const r = await create();
    return new Response(await r.arrayBuffer(), { status: r.status === 201 ? 200 : r.status });
  };
  const cycleOk = async () => {
    const r = await cycle();
    return new Response(null, { status: r.status === 204 ? 200 : r.status });
  };
  const withIndexes = { create: await timeIt(createOnly), cycle: await timeIt(cycleOk) };
  const { results } = await db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all<{ name: string }>();
  for (const { name } of results) await db.prepare(`DROP TRIGGER "${name}"`).run();
  const without = { create: await timeIt(createOnly), cycle: await timeIt(cycleOk) };
  log(`  writes: with indexes ${JSON.stringify(withIndexes)}, without ${JSON.stringify(without)}`);
  return { withIndexes, without };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "poi-scale-"));
  try {
    const bundle = buildBundle(join(dir, "bundle"));
    const sizes = [];
    for (const size of SIZES) sizes.push(await measureSize(dir, bundle, size));
    const report = { date: new Date().toISOString(), machine: machine(), seconds: SECONDS, rounds: ROUNDS, sizes };
    mkdirSync("bench/results", { recursive: true });
    writeFileSync("bench/results/scale.json", `${JSON.stringify(report, null, 2)}\n`);
    printTable(report.sizes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function printTable(sizes: Awaited<ReturnType<typeof measureSize>>[]) {
  const [small, large] = [sizes[0]!, sizes[sizes.length - 1]!];
  console.log(
    `| question | API ms (${small.size}) | API ms (${large.size}) | growth | bare ms | API / bare throughput | full scan ms | scan / API |`,
  );
  console.log("| --- | --: | --: | --: | --: | --: | --: | --: |");
  for (const key of Object.keys(large.questions)) {
    const l = large.questions[key]!;
    const s = small.questions[key]!;
    console.log(
      `| ${l.label} | ${s.api.toFixed(2)} | ${l.api.toFixed(2)} | ${(l.api / s.api).toFixed(2)}× | ${l.bare.toFixed(2)} | ${(l.bare / l.api).toFixed(2)} | ${l.scan.toFixed(1)} | ${(l.scan / l.api).toFixed(0)}× |`,
    );
  }
  for (const s of sizes) {
    const w = s.writes;
    console.log(
      `writes at ${s.size}: create ${w.withIndexes.create.toFixed(2)} ms (without triggers ${w.without.create.toFixed(2)}; ratio ${(w.without.create / w.withIndexes.create).toFixed(2)}), ` +
        `create+update+delete ${w.withIndexes.cycle.toFixed(2)} ms (without ${w.without.cycle.toFixed(2)}; ratio ${(w.without.cycle / w.withIndexes.cycle).toFixed(2)})`,
    );
  }
}

await main();
