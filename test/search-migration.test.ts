/**
 * The search indexes on a database populated before them (migrations 0004 and
 * 0012) and the data fill that brings its rows to today's form in batches
 * (src/db/fills.ts):
 * - no row of any table is lost, and the indexes cover the rows that were there;
 * - the fill run in small batches ends in the state the first version of 0012,
 *   which filled every row in one statement per column, left: the same rows,
 *   the same schema, the same index answers (test/fixtures/0012-first-version/);
 * - while it runs, text search answers 503 text_index_filling and everything
 *   else works; writes made meanwhile are neither lost nor undone, the fill logs
 *   no change, a fenced account stops it and an account that left is skipped;
 *   afterwards every answer of q= is the brute-force one (test/text-match.ts).
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { searchForm } from "../src/core/search-form";
import { batchOn, fillStep, runFills, unfinishedFills } from "../src/db/fills";
import { textQuery } from "../src/db/search/text-search";
import { caller, json, walkBothWays, type Caller } from "./helpers";
import { emptyDatabase } from "./migration-safety";
import { matches } from "./text-match";

const BASE_TABLES = ["accounts", "clients", "categories", "pinpoints", "lists", "list_pinpoints", "events"];
const FIRST_NEW = "0003_query_columns.sql";
const SEARCH_FORMS = "0012_search_forms.sql";
const migrations = env.TEST_MIGRATIONS;
const at = (name: string) => migrations.findIndex((m) => m.name === name);

/** Places in the scripts written without spaces, and others: [name, address, tag, description]. */
const TEXTS: [string, string, string, string][] = [
  ["東京国立博物館", "東京都台東区上野公園13-9", "博物館", "日本で最も古い博物館"],
  ["北京故宫博物院", "北京市东城区景山前街4号", "博物院", "明清两代的皇家宫殿"],
  ["วัดพระแก้ว", "กรุงเทพมหานคร", "วัด", "วัดในพระบรมมหาราชวัง"],
  ["ພະທາດຫຼວງ", "ວຽງຈັນ", "ພະທາດ", "ສະຖານທີ່ສັກສິດ"],
  ["អង្គរវត្ត", "សៀមរាប", "ប្រាសាទ", "ប្រាសាទដ៏ធំ"],
  ["ရွှေတိဂုံဘုရား", "ရန်ကုန်", "ဘုရား", "ရွှေစေတီတော်"],
  ["東京Tower Café", "港区芝公園", "タワー", "Tokyoの展望台"],
  ["국립중앙박물관", "서울특별시 용산구", "박물관", "한국 최대의 박물관"],
  ["Государственный Эрмитаж", "Санкт-Петербург", "музей", "Музей искусства"],
  ["Musée d'Orsay", "1 Rue de la Légion d'Honneur", "musée", "Impressionnistes et café"],
];

/** Each place of the population as the brute force reads it: its texts, and its account. */
type Known = { account: number; name: string; address: string | null; tags: string[]; description: string | null };

/** The rows a database has before the search indexes, as statements; what they hold, by id (ids are 1, 2, …). */
function population(): { statements: string[]; places: Map<number, Known> } {
  const places = new Map<number, Known>();
  const q = (s: string) => `'${s.replaceAll("'", "''")}'`;
  const statements = [
    "INSERT INTO accounts (name) VALUES ('a'), ('b'), ('c')",
    "INSERT INTO clients (id, account_id, name, secret_hash, scope) VALUES ('c1', 1, 'c', 'h', 'read write')",
    "INSERT INTO categories (account_id, name) VALUES (1, 'Food')",
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
     INSERT INTO pinpoints (account_id, name, description, latitude, longitude, tags, category_id)
     SELECT 1 + i % 2, 'Musée ' || i, '<p>Le <b>café</b> &amp; <a href="https://x.test/">jardin</a></p>', -80 + i * 0.5, -170 + i, '["t' || (i % 3) || '"]', CASE WHEN i % 5 = 0 THEN 2 ELSE 1 END FROM n`,
  ];
  for (let i = 1; i <= 300; i++) {
    places.set(i, {
      account: 1 + (i % 2),
      name: `Musée ${i}`,
      address: null,
      tags: [`t${i % 3}`],
      description: "Le café & jardin",
    });
  }
  // 400 more, in every script, over the three accounts; ids 301 to 700.
  for (let k = 0; k < 400; k++) {
    const [name, address, tag, description] = TEXTS[k % TEXTS.length]!;
    const place = { account: 1 + (k % 3), name: `${name} ${k}`, address, tags: [tag, `n${k % 7}`], description };
    places.set(301 + k, place);
    statements.push(
      `INSERT INTO pinpoints (account_id, name, address, description, latitude, longitude, tags) VALUES (${place.account}, ${q(place.name)}, ${q(address)}, ${q(`<p>${description}</p>`)}, ${(k % 160) - 80}, ${(k % 340) - 170}, ${q(JSON.stringify(place.tags))})`,
    );
  }
  statements.push(
    "INSERT INTO lists (account_id, name) VALUES (1, 'l')",
    "INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT 1, id FROM pinpoints WHERE account_id = 1 AND id % 4 = 1",
    `INSERT INTO events (account_id, pinpoint_id, name, description, dates, tags)
     SELECT account_id, id, 'Concert ' || id, '<p>Live <i>music</i></p>',
       json_array(json_object('start', 1800000000000 + id * 3600000, 'end', 1800000000000 + id * 3600000 + 7200000),
                  json_object('start', 1810000000000 + id * 3600000, 'end', 1810000000000 + id * 3600000 + 60000)), '["x"]'
     FROM pinpoints WHERE id % 3 = 0`,
    `INSERT INTO events (account_id, pinpoint_id, name, description, dates, tags)
     VALUES (1, 301, 'สงกรานต์ที่วัดพระแก้ว', '<p>Live <i>music</i> ที่วัด</p>', '[{"start":1800000000000,"end":1800003600000},{"start":1810000000000,"end":1810003600000}]', '["วัด"]')`,
  );
  return { statements, places };
}

/** The database emptied, the migrations before the search indexes applied, and the population written. */
async function populated(): Promise<Map<number, Known>> {
  await emptyDatabase(env.DB);
  await applyD1Migrations(env.DB, migrations.slice(0, at(FIRST_NEW)));
  const { statements, places } = population();
  for (const statement of statements) await env.DB.prepare(statement).run();
  return places;
}

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of BASE_TABLES) {
    out[table] = (await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())!.n;
  }
  return out;
}

const count = (sql: string) =>
  env.DB.prepare(sql)
    .first<{ n: number }>()
    .then((r) => r!.n);

/** The ids each index finds for a query (FTS5 directly, so nothing of the API's gate is involved). */
async function indexAnswers(queries: string[]): Promise<Record<string, number[][]>> {
  const out: Record<string, number[][]> = {};
  for (const q of queries) {
    out[q] = [];
    for (const table of ["pinpoints_fts", "events_fts"]) {
      const { results } = await env.DB.prepare(`SELECT rowid AS id FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`)
        .bind(textQuery(q).terms)
        .all<{ id: number }>();
      out[q].push(results.map((r) => r.id));
    }
  }
  return out;
}

const QUERIES = [
  "博物館",
  "博物",
  "台東",
  "古い",
  "故宫",
  "宫殿",
  "แก้ว",
  "วัด",
  "ຫຼວງ",
  "វត្ត",
  "ဘုရား",
  "東京 tow",
  "展望台",
];
const MORE_QUERIES = ["박물관", "эрмитаж", "musée", "cafe", "jardin", "music", "concert", "n3", "impressionnistes"];

/** Columns that hold the time a row was written: two populations a moment apart differ there only. */
const CLOCK = new Set(["created_at", "updated_at", "changed_at"]);

/** Every row of every table the migrations keep (not the indexes' own), and the schema: what two databases compare. */
async function snapshot(): Promise<Record<string, unknown>> {
  const { results: objects } = await env.DB.prepare(
    "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY type, name",
  ).all<{ type: string; name: string; sql: string | null }>();
  const rows: Record<string, unknown> = {};
  for (const table of [...BASE_TABLES, "changes", "event_occurrences", "tile_cells", "pinpoints_rtree"]) {
    const { results: columns } = await env.DB.prepare(`SELECT name FROM pragma_table_info('${table}')`).all<{
      name: string;
    }>();
    const kept = columns.map((c) => c.name).filter((name) => !CLOCK.has(name));
    rows[table] = (
      await env.DB.prepare(`SELECT ${kept.join(", ")} FROM ${table} ORDER BY ${kept.join(", ")}`).all()
    ).results;
  }
  return { objects, rows, index: await indexAnswers([...QUERIES, ...MORE_QUERIES]) };
}

/** The places each query finds anywhere in them, by brute force. */
const bruteForce = (places: Map<number, Known>, q: string, account?: number) =>
  [...places]
    .filter(([, p]) => account === undefined || p.account === account)
    .filter(([, p]) => matches([p.name, p.address ?? undefined, ...p.tags, p.description ?? undefined], q))
    .map(([id]) => id)
    .sort((x, y) => x - y);

describe("on a populated database", () => {
  let before: Record<string, number>;
  let places: Map<number, Known>;

  beforeAll(async () => {
    places = await populated();
    before = await counts();
    await applyD1Migrations(env.DB, migrations);
    const run = await runFills(batchOn(env.DB), { rows: 64 });
    expect(run.finished).toEqual(["search_forms_events", "search_forms_pinpoints"]);
  });

  it("no row of any table is lost", async () => {
    expect(before.pinpoints).toBe(700);
    expect(await counts()).toEqual(before);
  });

  it("the rows already there are indexed: places, text without markup, occurrences", async () => {
    expect(await count("SELECT count(*) AS n FROM pinpoints_rtree")).toBe(700);
    // Each entry half an account wide (migration 0007), so the tree organizes one account's places by their boxes.
    const widened = `SELECT count(*) AS n FROM pinpoints_rtree AS r JOIN pinpoints AS p ON p.id = r.id
      WHERE r.min_account < p.account_id AND r.max_account > p.account_id AND r.max_account - r.min_account < 1
        AND r.min_lon <= p.longitude AND r.max_lon >= p.longitude AND r.min_lat <= p.latitude AND r.max_lat >= p.latitude`;
    expect(await count(widened)).toBe(700);
    expect(await count("SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH 'musee'")).toBe(340);
    expect(await count("SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH 'cafe jardin'")).toBe(300);
    expect(await count("SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH 'href OR amp OR b'")).toBe(0);
    // Prefixes of 2 to 4 characters read the prefix index (migration 0009), longer ones the words.
    expect(await count(`SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH '"jard"* "musee"*'`)).toBe(
      300,
    );
    expect(await count(`SELECT count(*) AS n FROM events_fts WHERE events_fts MATCH '"mu"*'`)).toBe(before.events);
    expect(await count("SELECT count(*) AS n FROM event_occurrences")).toBe(2 * before.events!);
    const text = await env.DB.prepare("SELECT description_text AS t FROM pinpoints WHERE id = 1").first<{
      t: string;
    }>();
    expect(text!.t.replace(/\s+/g, " ")).toBe("Le café & jardin");
    await env.DB.prepare("INSERT INTO pinpoints_fts (pinpoints_fts) VALUES ('integrity-check')").run();
    await env.DB.prepare("INSERT INTO events_fts (events_fts) VALUES ('integrity-check')").run();
  });

  it("the rows already there get the search forms the app writes, are found by a word inside, and log no change", async () => {
    const place = await env.DB.prepare(
      "SELECT name, name_search, address_search, tags, tags_search, description_text FROM pinpoints WHERE id = 301",
    ).first<Record<string, string>>();
    expect(place).toMatchObject({
      name_search: searchForm("東京国立博物館 0"),
      address_search: searchForm("東京都台東区上野公園13-9"),
      tags_search: searchForm(place!.tags),
    });
    expect(place!.description_text!.replace(/\s+/g, " ").trim()).toBe("日 本 で 最 も 古 い 博 物 館");
    // Latin rows keep no second copy.
    expect(await env.DB.prepare("SELECT name_search FROM pinpoints WHERE id = 1").first("name_search")).toBeNull();
    const answers = await indexAnswers([...QUERIES, ...MORE_QUERIES]);
    for (const q of [...QUERIES, ...MORE_QUERIES]) expect(answers[q]![0], q).toEqual(bruteForce(places, q));
    expect(answers["博物館"]![0]!.length).toBe(40);
    expect(answers["แก้ว"]![1]).toEqual([await eventAt(301)]);
    // Filling the forms replaced no entry of the change log: each still has the sequence number it got first.
    const log = await env.DB.prepare("SELECT count(*) AS n, max(seq) AS last FROM changes").first<{
      n: number;
      last: number;
    }>();
    expect(log!.n).toBeGreaterThan(before.pinpoints!);
    expect(log!.last).toBe(log!.n);
  });

  it("end in the state the first version of 0012 left, which filled every row in one statement per column", async () => {
    const batched = await snapshot();
    await populated();
    const first = env.TEST_0012_FIRST_VERSION;
    expect(first.map((m) => m.name)).toEqual([SEARCH_FORMS]);
    await applyD1Migrations(env.DB, [...migrations.slice(0, at(SEARCH_FORMS)), ...first]);
    await applyD1Migrations(env.DB, migrations);
    expect(await unfinishedFills(batchOn(env.DB))).toEqual([]);
    const whole = await snapshot();
    expect(whole.objects).toEqual(batched.objects);
    expect(whole.rows).toEqual(batched.rows);
    expect(whole.index).toEqual(batched.index);
  });
});

async function eventAt(pinpoint: number): Promise<number | undefined> {
  return (
    await env.DB.prepare("SELECT id FROM events WHERE pinpoint_id = ? AND name LIKE 'สงกรานต์%'")
      .bind(pinpoint)
      .first<{ id: number }>()
  )?.id;
}

describe("while the fill runs", () => {
  let places: Map<number, Known>;
  let a: Caller;

  beforeAll(async () => {
    places = await populated();
    await applyD1Migrations(env.DB, migrations);
    a = await caller("read write", 1);
  });

  it("q= answers 503 text_index_filling on every route that searches text; every other request works", async () => {
    expect((await unfinishedFills(batchOn(env.DB))).map((f) => f.name)).toEqual([
      "search_forms_events",
      "search_forms_pinpoints",
    ]);
    for (const path of [
      "/v3.0/pinpoints?q=%E5%8D%9A%E7%89%A9",
      "/v3.0/pinpoints?q=cafe&latitude=0&longitude=0",
      "/v3.0/events?q=music",
      "/v3.0/tiles/2/1/1.mvt?q=cafe",
      "/v3.0/tiles/2/1/1.geojson?q=cafe",
    ]) {
      const response = await a.get(path);
      expect(response.status, path).toBe(503);
      expect(response.headers.get("Retry-After")).toBe("60");
      expect((await json<{ type: string }>(response)).type).toBe("urn:poi-api:problem:text_index_filling");
    }
    for (const path of [
      "/v3.0/pinpoints?limit=5",
      "/v3.0/pinpoints/301",
      "/v3.0/events?limit=5",
      "/v3.0/tiles/2/1/1.mvt",
      "/ogc/collections/pinpoints/items?limit=5",
    ]) {
      expect((await a.get(path)).status, path).toBe(200);
    }
  });

  it("writes made meanwhile stay, an account that left is skipped, a paused one stops it, and q= then answers as brute force finds", async () => {
    const batch = batchOn(env.DB);
    // Account 3 has left this shard (src/db/move.ts); its rows are not written, and must not stop the fill.
    await env.DB.prepare("INSERT INTO account_fences (account_id, state) VALUES (3, 'gone')").run();
    const gone = [...places].filter(([, p]) => p.account === 3).map(([id]) => id);
    // The change log as it was: the fill must not move an entry of a row no client wrote.
    const { results: logged } = await env.DB.prepare("SELECT type, object_id, seq FROM changes").all<{
      type: string;
      object_id: number;
      seq: number;
    }>();

    // Writes between batches, to rows the fill has not reached yet: a new address (the name's form stays
    // unwritten), a new name, a new description, a deletion, a new place.
    const touched = new Set<number>();
    const writes = [
      async () => {
        await a.send("PUT", "/v3.0/pinpoints/691", { address: "京都市東山区" });
        places.get(691)!.address = "京都市東山区";
      },
      async () => {
        await a.send("PUT", "/v3.0/pinpoints/694", { name: "横浜中華街 694" });
        places.get(694)!.name = "横浜中華街 694";
      },
      async () => {
        await a.send("PUT", "/v3.0/pinpoints/697", { description: "<p>新宿にある東京都の本庁舎</p>" });
        places.get(697)!.description = "新宿にある東京都の本庁舎";
      },
      async () => {
        expect((await a.send("DELETE", "/v3.0/pinpoints/700")).status).toBe(204);
        places.delete(700);
      },
      async () => {
        const created = await json<{ id: number }>(
          await a.send("POST", "/v3.0/pinpoints", {
            name: "札幌市時計台",
            latitude: 43,
            longitude: 141,
            tags: ["時計台"],
          }),
        );
        places.set(created.id, {
          account: 1,
          name: "札幌市時計台",
          address: null,
          tags: ["時計台"],
          description: null,
        });
        touched.add(created.id);
      },
    ];
    for (const id of [691, 694, 697, 700]) touched.add(id);

    // Account 2 paused (a move switching it away): the first batch that would write one of its rows fails
    // whole, and the run stops there; the events' fill, which writes none, is done.
    await env.DB.prepare("INSERT INTO account_fences (account_id, state) VALUES (2, 'paused')").run();
    const stopped = await runFills(batch, { rows: 40 });
    expect(stopped).toMatchObject({ finished: ["search_forms_events"], pending: ["search_forms_pinpoints"] });
    expect(stopped.failed?.name).toBe("search_forms_pinpoints");
    expect(stopped.failed?.error).toMatch(/account_fenced/);
    await env.DB.prepare("DELETE FROM account_fences WHERE account_id = 2").run();

    // The rest, a batch at a time, with a write after each of the first ones.
    let steps = 0;
    for (let done = false; !done; steps++) {
      done = (await fillStep(batch, "search_forms_pinpoints", { rows: 40 })).done;
      await writes.shift()?.();
    }
    expect(writes).toEqual([]);
    expect(steps).toBeGreaterThan(10);
    expect(await unfinishedFills(batch)).toEqual([]);

    // Nothing lost or undone: every place as the writes left it.
    const { results: rows } = await env.DB.prepare(
      "SELECT id, account_id, name, address, tags, name_search, address_search, tags_search FROM pinpoints ORDER BY id",
    ).all<Record<string, string | number | null>>();
    expect(rows.map((r) => r.id)).toEqual([...places.keys()].sort((x, y) => x - y));
    for (const row of rows) {
      const place = places.get(Number(row.id))!;
      expect([row.name, row.address, JSON.parse(String(row.tags))], String(row.id)).toEqual([
        place.name,
        place.address,
        place.tags,
      ]);
      const left = gone.includes(Number(row.id)) && !touched.has(Number(row.id));
      expect([row.name_search, row.address_search, row.tags_search], String(row.id)).toEqual(
        left ? [null, null, null] : [searchForm(place.name), searchForm(place.address), searchForm(String(row.tags))],
      );
    }
    // No entry of the change log moved but those of the writes.
    const { results: after } = await env.DB.prepare("SELECT type, object_id, seq FROM changes").all<{
      type: string;
      object_id: number;
      seq: number;
    }>();
    const untouched = (r: { type: string; object_id: number }) => !(r.type === "pinpoint" && touched.has(r.object_id));
    expect(after.filter(untouched).filter((r) => places.has(r.object_id) || r.type !== "pinpoint")).toEqual(
      logged.filter(untouched).filter((r) => places.has(r.object_id) || r.type !== "pinpoint"),
    );
    await env.DB.prepare("INSERT INTO pinpoints_fts (pinpoints_fts) VALUES ('integrity-check')").run();

    // Every answer of q= for account 1, all pages, by tier then id, as brute force finds it.
    for (const q of [...QUERIES, ...MORE_QUERIES, "京都", "横浜", "新宿", "時計台", "東京都"]) {
      const tier = (p: Known) => {
        const near = [p.name, p.address ?? undefined, ...p.tags];
        if (matches([p.name], q)) return 1;
        if (matches(near, q)) return 2;
        return matches([...near, p.description ?? undefined], q) ? 3 : 0;
      };
      const expected = [...places]
        .filter(([, p]) => p.account === 1)
        .map(([id, p]) => ({ id, t: tier(p) }))
        .filter((r) => r.t > 0)
        .sort((x, y) => x.t - y.t || x.id - y.id)
        .map((r) => r.id);
      const found = await walkBothWays<{ id: number }>(a, `/v3.0/pinpoints?q=${encodeURIComponent(q)}&limit=50`);
      expect(
        found.map((r) => r.id),
        q,
      ).toEqual(expected);
    }
  });
});
