/**
 * The scale group's data and questions (docs/map-queries.md): one account's pinpoints
 * spread like real places (70% in 20 dense cities, each a Gaussian cloud
 * about 3 km across, the rest uniform over the countryside; names, tags and
 * a sentence of description each) with a tenth as many events over a year,
 * and each map question as the API asks it, as its bare indexed SQL, and as
 * a full scan of the account's rows.
 *
 * Rows are generated inside SQLite (recursive CTEs, 50,000 rows a statement).
 * Every random quantity is a separate 32-bit hash of the row number (two
 * rounds of multiply and xor-shift), so they are independent and the same in
 * every run.
 */
import { generateClientId, generateClientSecret, hashSecret } from "../src/core/secrets.ts";
import type { D1 } from "./seed.ts";

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
/** A city's standard deviation, in degrees of latitude (about 3.3 km). */
const CITY_SIGMA = 0.03;

const xorShift = (x: string, by: number) => `((${x} | (${x} >> ${by})) - (${x} & (${x} >> ${by})))`;

/**
 * CTEs `h0` … `h3` over `n(i)`: `h3` has `i` and the columns `u1` … `u<streams>`,
 * independent uniform fractions in [0, 1). Products stay below 2^63, so SQLite
 * never turns them into floats.
 */
function hashes(streams: number, salt: number): string {
  const cols = Array.from({ length: streams }, (_, k) => `x${k + 1}`);
  const seed = cols.map((c, k) => `(i * 2654435761 + ${(k + 1) * 1013904223 + salt}) % 4294967296 AS ${c}`);
  const mix = cols.map((c) => `${xorShift(c, 16)} * 73244475 % 4294967296 AS ${c}`);
  const out = cols.map((c, k) => `${xorShift(c, 16)} / 4294967296.0 AS u${k + 1}`);
  return `h0 AS (SELECT i, ${seed.join(", ")} FROM n),
  h1 AS (SELECT i, ${mix.join(", ")} FROM h0),
  h2 AS (SELECT i, ${mix.join(", ")} FROM h1),
  h3 AS (SELECT i, ${out.join(", ")} FROM h2)`;
}

// u1: city or countryside; u2, u3: distance and bearing from the city's centre (Box-Muller); u4, u5: countryside.
const PINPOINTS = `
WITH RECURSIVE n(i) AS (SELECT cast(?2 AS integer) UNION ALL SELECT i + 1 FROM n WHERE i < ?3),
  ${hashes(5, 0)},
  cities(k, lat, lon) AS (VALUES ${CITIES.map(([lat, lon], k) => `(${k}, ${lat}, ${lon})`).join(", ")}),
  words(k, w) AS (VALUES ${WORDS.map((w, k) => `(${k}, '${w}')`).join(", ")}),
  tags(k, t) AS (VALUES ${TAGS.map((t, k) => `(${k}, '${t}')`).join(", ")}),
  rows AS (
    SELECT i, u1 < 0.7 AS city, c.lat AS clat, c.lon AS clon,
      ${CITY_SIGMA} * sqrt(-2 * ln(1 - u2)) * sin(2 * pi() * u3) AS dlat,
      ${CITY_SIGMA} * sqrt(-2 * ln(1 - u2)) * cos(2 * pi() * u3) / cos(radians(c.lat)) AS dlon, u4, u5,
      (SELECT w FROM words WHERE k = i % ${WORDS.length}) || ' ' || (SELECT w FROM words WHERE k = (i / 7) % ${WORDS.length}) AS name,
      (SELECT t FROM tags WHERE k = i % ${TAGS.length}) AS t1, (SELECT t FROM tags WHERE k = (i / 3) % ${TAGS.length}) AS t2,
      'A ' || lower((SELECT w FROM words WHERE k = (i / 11) % ${WORDS.length})) || ' worth a visit, open most days of the year.' AS sentence
    FROM h3 JOIN cities AS c ON c.k = i % ${CITIES.length})
INSERT INTO pinpoints (account_id, name, address, category_id, description, description_text, latitude, longitude, tags)
SELECT ?1, name || ' ' || i, i || ' Main Street', 1, '<p>' || sentence || '</p>', sentence,
  CASE WHEN city THEN max(-90, min(90, clat + dlat)) ELSE -50 + u4 * 110 END,
  CASE WHEN NOT city THEN -180 + u5 * 360 WHEN clon + dlon > 180 THEN clon + dlon - 360 ELSE clon + dlon END,
  json_array(t1, t2)
FROM rows`;

const start = (u: string) => `${YEAR} + cast(${u} * 8760 AS integer) * 3600000`;
const EVENTS = `
WITH RECURSIVE n(i) AS (SELECT cast(?2 AS integer) UNION ALL SELECT i + 1 FROM n WHERE i < ?3),
  ${hashes(2, 77)}
INSERT INTO events (account_id, pinpoint_id, name, description, description_text, dates, tags)
SELECT ?1, ?4 + i * 10, 'Concert ' || i, '<p>Live music.</p>', 'Live music.',
  CASE WHEN i % 3 = 0
    THEN json_array(json_object('start', ${start("u1")}, 'end', ${start("u1")} + 7200000),
                    json_object('start', ${start("u2")}, 'end', ${start("u2")} + 3600000))
    ELSE json_array(json_object('start', ${start("u1")}, 'end', ${start("u1")} + 10800000))
  END,
  '["music"]'
FROM h3`;

export type ScaleAccount = { account: number; clientId: string; secret: string };

/** Seeds one account with `size` pinpoints and `size / 10` events; `progress` hears of each chunk. */
export async function seedScale(db: D1, size: number, progress: (rows: number) => void): Promise<ScaleAccount> {
  const account = (await db
    .prepare("INSERT INTO accounts (name) VALUES ('scale') RETURNING id")
    .first<{ id: number }>())!.id;
  const secret = generateClientSecret();
  const clientId = generateClientId();
  await db
    .prepare("INSERT INTO clients (id, account_id, name, secret_hash, scope) VALUES (?, ?, 'scale', ?, 'read write')")
    .bind(clientId, account, await hashSecret(secret))
    .run();
  // A statement of 50,000 rows dirtied too many pages for local D1 once the tile cells' triggers wrote
  // eight cells per row: past 700,000 rows workerd dropped the connection. 20,000 a statement is safe.
  const chunk = 20_000;
  for (let from = 1; from <= size; from += chunk) {
    const to = Math.min(size, from + chunk - 1);
    await db.prepare(PINPOINTS).bind(account, from, to).run();
    progress(to);
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

export type Question = {
  key: string;
  label: string;
  /** The API's path and query. */
  api: string;
  bare: [string, unknown[]];
  scan: [string, unknown[]];
};

// The Earth radius of src/db/search/geo.ts.
const R = 6_371_008.8;
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

export const PARIS = { latitude: 48.8566, longitude: 2.3522 };
export const OCEAN = { latitude: -30, longitude: -130 };

/**
 * The radius of the smallest circle around `at` holding a page (by the bare
 * count of its box, doubled from 125 m): the circle the bare SQL of a
 * nearest-first page without a radius reads, as an oracle would pick it.
 */
export async function pageCircle(db: D1, account: number, at: { latitude: number; longitude: number }) {
  for (let radius = 125; ; radius *= 2) {
    const { n } = (await db
      .prepare(
        `SELECT count(*) AS n FROM (SELECT 1 FROM pinpoints WHERE id IN (${rtree(account, box(at.latitude, at.longitude, radius))}) AND ${dist(at.latitude, at.longitude)} <= ${radius} LIMIT 21)`,
      )
      .first<{ n: number }>())!;
    if (n >= 21 || radius > 2e7) return radius;
  }
}

/** Each question's API request, bare SQL and full scan; `circles` are the page circles (pageCircle) around Paris and the ocean point. */
export function questions(account: number, circles: { paris: number; ocean: number }): Question[] {
  const city = [2.27, 48.82, 2.43, 48.89] as const;
  const village = [24.0, 10.0, 27.0, 13.0] as const;
  const inBox = ([a, b, c, d]: readonly number[]) =>
    `latitude BETWEEN ${b} AND ${d} AND longitude BETWEEN ${a} AND ${c}`;
  const weekend = ["2027-06-12T00:00:00Z", "2027-06-14T00:00:00Z"].map(Date.parse) as [number, number];
  const occurrence = `SELECT events.*, o.start FROM event_occurrences AS o CROSS JOIN events ON events.id = o.event_id
    WHERE o.account_id = ?1 AND o.start < ?3 AND o.start >= ?2 - (SELECT max("end" - start) FROM event_occurrences WHERE account_id = ?1) AND o."end" > ?2
    ORDER BY o.start, o.event_id LIMIT 21`;
  const near = (
    { latitude, longitude }: { latitude: number; longitude: number },
    radius: number,
  ): [string, unknown[]] => [
    `SELECT *, ${dist(latitude, longitude)} AS d FROM pinpoints WHERE id IN (${rtree(account, box(latitude, longitude, radius))}) AND account_id = ? AND ${dist(latitude, longitude)} <= ${radius} ORDER BY d, id LIMIT 21`,
    [account],
  ];
  const scanNear = (
    { latitude, longitude }: { latitude: number; longitude: number },
    radius?: number,
  ): [string, unknown[]] => [
    `SELECT *, ${dist(latitude, longitude)} AS d FROM pinpoints WHERE account_id = ?${radius === undefined ? "" : ` AND ${dist(latitude, longitude)} <= ${radius}`} ORDER BY d, id LIMIT 21`,
    [account],
  ];
  const text = `pinpoints_fts MATCH '{name} : ("cafe"*)'`;
  const like = `(name LIKE '%caf%' OR address LIKE '%caf%' OR tags LIKE '%caf%' OR description_text LIKE '%caf%')`;
  return [
    {
      key: "viewport-city",
      label: "viewport, a city (bbox 0.16° × 0.07°)",
      api: `/v3.0/pinpoints?bbox=${city.join(",")}`,
      bare: [`SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(city)} ORDER BY id LIMIT 21`, [account]],
      scan: [
        `SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(city)} ORDER BY latitude, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "viewport-village",
      label: "viewport, countryside (bbox 3° × 3°)",
      api: `/v3.0/pinpoints?bbox=${village.join(",")}`,
      bare: [
        `SELECT * FROM pinpoints WHERE id IN (${rtree(account, village)}) AND account_id = ? AND ${inBox(village)} ORDER BY id LIMIT 21`,
        [account],
      ],
      scan: [`SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(village)} ORDER BY id LIMIT 21`, [account]],
    },
    {
      key: "nearby-2km",
      label: "nearby, radius 2 km (Paris)",
      api: `/v3.0/pinpoints?latitude=${PARIS.latitude}&longitude=${PARIS.longitude}&radius=2000`,
      bare: near(PARIS, Math.min(2000, circles.paris)),
      scan: scanNear(PARIS, 2000),
    },
    {
      key: "nearby",
      label: "nearby, no radius (Paris)",
      api: `/v3.0/pinpoints?latitude=${PARIS.latitude}&longitude=${PARIS.longitude}`,
      bare: near(PARIS, circles.paris),
      scan: scanNear(PARIS),
    },
    {
      key: "nearby-ocean",
      label: "nearby, no radius (mid-Pacific)",
      api: `/v3.0/pinpoints?latitude=${OCEAN.latitude}&longitude=${OCEAN.longitude}`,
      bare: near(OCEAN, circles.ocean),
      scan: scanNear(OCEAN),
    },
    {
      key: "text",
      label: "text, a common word (q=cafe)",
      api: `/v3.0/pinpoints?q=cafe`,
      bare: [
        `SELECT pinpoints.* FROM pinpoints_fts CROSS JOIN pinpoints ON pinpoints.id = pinpoints_fts.rowid WHERE ${text} AND account_id = ? ORDER BY pinpoints_fts.rowid LIMIT 21`,
        [account],
      ],
      scan: [
        `SELECT * FROM pinpoints WHERE account_id = ? AND ${like} ORDER BY name LIKE '%caf%' DESC, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "text-bbox",
      label: "text + bbox (q=cafe in the city)",
      api: `/v3.0/pinpoints?q=cafe&bbox=${city.join(",")}`,
      bare: [
        `SELECT pinpoints.* FROM pinpoints_fts CROSS JOIN pinpoints ON pinpoints.id = pinpoints_fts.rowid WHERE ${text} AND account_id = ? AND ${inBox(city)} ORDER BY pinpoints_fts.rowid LIMIT 21`,
        [account],
      ],
      scan: [
        `SELECT * FROM pinpoints WHERE account_id = ? AND ${inBox(city)} AND ${like} ORDER BY name LIKE '%caf%' DESC, id LIMIT 21`,
        [account],
      ],
    },
    {
      key: "events-weekend",
      label: "events, one weekend (`from`/`to`)",
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

/** Zooms the tile questions ask at (the issue's), and where: a city and the countryside. */
export const TILE_ZOOMS = [2, 6, 10, 14] as const;
export const TILE_PLACES = { city: PARIS, countryside: { latitude: 11.5, longitude: 25.5 } } as const;

// The tile math of src/tiles/grid.ts and the quantization of src/db/search/tile-cells.ts (migrations/0011), written
// again here: the bench may import only src/'s portable modules, and these must be the same numbers.
const LEVELS = [4, 6, 8, 10, 12, 14, 16, 18];
const QX = (lon: string) => `min(4294967295, cast((${lon} + 180.0) / 360.0 * 4294967296.0 AS integer))`;
const QY = (lat: string) => {
  const c = `max(-85.0511287798066, min(85.0511287798066, ${lat}))`;
  const s = `sin(${c} * 0.017453292519943295)`;
  return `min(4294967295, max(0, cast((0.5 - ln((1.0 + ${s}) / (1.0 - ${s})) / 12.566370614359172) * 4294967296.0 AS integer)))`;
};
const tileXY = (p: { latitude: number; longitude: number }, z: number) => {
  const φ = (p.latitude * Math.PI) / 180;
  const n = 2 ** z;
  return {
    x: Math.floor(((p.longitude + 180) / 360) * n),
    y: Math.floor(((1 - Math.log(Math.tan(φ) + 1 / Math.cos(φ)) / Math.PI) / 2) * n),
  };
};
const latOf = (y: number, z: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / 2 ** z))) * 180) / Math.PI;

/**
 * Each tile question: the API's tile; the bare SQL of the same cells (the ones the API reads: level z + 3
 * or z + 4, every one of the tile's, nothing summed or joined); and the tile rendered from a full read of
 * its places, the R*Tree's entries in the tile binned in SQL as a tile server without the cells would.
 */
export function tileQuestions(account: number): Question[] {
  const out: Question[] = [];
  for (const [where, place] of Object.entries(TILE_PLACES)) {
    for (const z of TILE_ZOOMS) {
      const { x, y } = tileXY(place, z);
      const level = LEVELS.find((l) => l >= z + 3)!;
      const width = 2 ** (level - z);
      const ranges = Array.from({ length: width }, (_, r) => {
        const start = (y * width + r) * 2 ** level + x * width;
        return [start, start + width - 1];
      });
      const box = [(x / 2 ** z) * 360 - 180, latOf(y + 1, z), ((x + 1) / 2 ** z) * 360 - 180, latOf(y, z)];
      const binShift = 32 - (z + 3);
      const tileShift = 32 - z;
      out.push({
        key: `tile-${where}-z${z}`,
        label: `tile z ${z}, ${where} (${z}/${x}/${y})`,
        api: `/v3.0/tiles/${z}/${x}/${y}.mvt`,
        bare: [
          `SELECT tile_cells.* FROM json_each(?2) AS r CROSS JOIN tile_cells WHERE tile_cells.account_id = ?1 AND tile_cells.list_id = 0 AND tile_cells.level = ${level} AND tile_cells.cell BETWEEN r.value ->> 0 AND r.value ->> 1`,
          [account, JSON.stringify(ranges)],
        ],
        scan: [
          `SELECT (qy >> ${binShift}) AS by, (qx >> ${binShift}) AS bx, count(*) AS n, sum(qx), sum(qy), min(id) FROM (
            SELECT id, ${QX("longitude")} AS qx, ${QY("latitude")} AS qy FROM pinpoints
            WHERE id IN (${rtree(account, box)}) AND account_id = ?)
           WHERE (qx >> ${tileShift}) = ${x} AND (qy >> ${tileShift}) = ${y} GROUP BY 1, 2`,
          [account],
        ],
      });
    }
  }
  return out;
}

/** Cells of each level of the account's places, for the report. */
export async function tileCellCounts(db: D1, account: number): Promise<Record<number, number>> {
  const out: Record<number, number> = {};
  for (const level of LEVELS) {
    out[level] = (await db
      .prepare("SELECT count(*) AS n FROM tile_cells WHERE account_id = ? AND list_id = 0 AND level = ?")
      .bind(account, level)
      .first<{ n: number }>())!.n;
  }
  return out;
}
