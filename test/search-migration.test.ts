/**
 * Every migration after the first release applied to a database populated
 * under the migrations before it: no row of any table disappears, and the
 * search indexes (migration 0004) cover the rows that were already there, in
 * their search forms (migration 0012) without logging a change.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { searchForm } from "../src/core/search-form";
import { textQuery } from "../src/db/search/text-search";

const BASE_TABLES = ["accounts", "clients", "categories", "pinpoints", "lists", "list_pinpoints", "events"];
const FIRST_NEW = "0003_query_columns.sql";

async function counts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of BASE_TABLES) {
    out[table] = (await env.DB.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())!.n;
  }
  return out;
}

let before: Record<string, number>;

beforeAll(async () => {
  // Back to an empty database, then the migrations before the search indexes only.
  const { results } = await env.DB.prepare(
    "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE '%_fts_%' AND name NOT LIKE '%_rtree_%'",
  ).all<{ type: string; name: string }>();
  await env.DB.prepare("PRAGMA foreign_keys = OFF").run();
  for (const { type, name } of results) {
    await env.DB.prepare(`DROP ${type === "table" ? "TABLE" : "TRIGGER"} IF EXISTS "${name}"`).run();
  }
  const index = env.TEST_MIGRATIONS.findIndex((m) => m.name === FIRST_NEW);
  expect(index).toBeGreaterThan(0);
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS.slice(0, index));

  const seed = [
    "INSERT INTO accounts (name) VALUES ('a'), ('b')",
    "INSERT INTO clients (id, account_id, name, secret_hash, scope) VALUES ('c1', 1, 'c', 'h', 'read write')",
    "INSERT INTO categories (account_id, name) VALUES (1, 'Food')",
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
     INSERT INTO pinpoints (account_id, name, description, latitude, longitude, tags, category_id)
     SELECT 1 + i % 2, 'Musée ' || i, '<p>Le <b>café</b> &amp; <a href="https://x.test/">jardin</a></p>', -80 + i * 0.5, -170 + i, '["t' || (i % 3) || '"]', CASE WHEN i % 5 = 0 THEN 2 ELSE 1 END FROM n`,
    `INSERT INTO pinpoints (account_id, name, address, description, latitude, longitude, tags)
     VALUES (1, '東京国立博物館', '東京都台東区', '<p>日本で最も<b>古い</b>博物館</p>', 35.7, 139.8, '["博物館"]')`,
    "INSERT INTO lists (account_id, name) VALUES (1, 'l')",
    "INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT 1, id FROM pinpoints WHERE account_id = 1 AND id % 4 = 1",
    `INSERT INTO events (account_id, pinpoint_id, name, description, dates, tags)
     SELECT account_id, id, 'Concert ' || id, '<p>Live <i>music</i></p>',
       json_array(json_object('start', 1800000000000 + id * 3600000, 'end', 1800000000000 + id * 3600000 + 7200000),
                  json_object('start', 1810000000000 + id * 3600000, 'end', 1810000000000 + id * 3600000 + 60000)), '["x"]'
     FROM pinpoints WHERE id % 3 = 0`,
    `INSERT INTO events (account_id, pinpoint_id, name, description, dates, tags)
     VALUES (1, 301, 'สงกรานต์ที่วัดพระแก้ว', '<p>Live <i>music</i> ที่วัด</p>', '[{"start":1800000000000,"end":1800003600000},{"start":1810000000000,"end":1810003600000}]', '["วัด"]')`,
  ];
  for (const statement of seed) await env.DB.prepare(statement).run();
  before = await counts();
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
});

it("no row of any table is lost", async () => {
  expect(before.pinpoints).toBe(301);
  expect(await counts()).toEqual(before);
});

it("the rows already there are indexed: places, text without markup, occurrences", async () => {
  const one = (q: string) =>
    env.DB.prepare(q)
      .first<{ n: number }>()
      .then((r) => r!.n);
  expect(await one("SELECT count(*) AS n FROM pinpoints_rtree")).toBe(301);
  // Each entry half an account wide (migration 0007), so the tree organizes one account's places by their boxes.
  const widened = `SELECT count(*) AS n FROM pinpoints_rtree AS r JOIN pinpoints AS p ON p.id = r.id
    WHERE r.min_account < p.account_id AND r.max_account > p.account_id AND r.max_account - r.min_account < 1
      AND r.min_lon <= p.longitude AND r.max_lon >= p.longitude AND r.min_lat <= p.latitude AND r.max_lat >= p.latitude`;
  expect(await one(widened)).toBe(301);
  expect(await one("SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH 'musee'")).toBe(300);
  expect(await one("SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH 'cafe jardin'")).toBe(300);
  expect(await one("SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH 'href OR amp OR b'")).toBe(0);
  // Prefixes of 2 to 4 characters read the prefix index (migration 0009), longer ones the words.
  expect(await one(`SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH '"mus"*'`)).toBe(300);
  expect(await one(`SELECT count(*) AS n FROM pinpoints_fts WHERE pinpoints_fts MATCH '"jard"* "musee"*'`)).toBe(300);
  expect(await one(`SELECT count(*) AS n FROM events_fts WHERE events_fts MATCH '"mu"*'`)).toBe(before.events);
  expect(await one("SELECT count(*) AS n FROM events_fts WHERE events_fts MATCH 'music'")).toBe(before.events);
  expect(await one("SELECT count(*) AS n FROM event_occurrences")).toBe(2 * before.events!);
  const text = await env.DB.prepare("SELECT description_text AS t FROM pinpoints WHERE id = 1").first<{ t: string }>();
  expect(text!.t.replace(/\s+/g, " ")).toBe("Le café & jardin");
  // Rows written after the migrations are indexed the same way.
  await env.DB.prepare("INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (2, 'new', 1, 2)").run();
  expect(await one(widened)).toBe(302);
  const accountTwo = "SELECT count(*) AS n FROM pinpoints_rtree WHERE min_account <= 2 AND max_account >= 2";
  expect(await one(accountTwo)).toBe(151);
});

it("the rows already there get the search forms the app writes, are found by a word inside, and log no change", async () => {
  const place = await env.DB.prepare(
    "SELECT name, name_search, address_search, tags, tags_search, description_text FROM pinpoints WHERE id = 301",
  ).first<Record<string, string>>();
  expect(place).toMatchObject({
    name_search: searchForm("東京国立博物館"),
    address_search: searchForm("東京都台東区"),
    tags_search: searchForm(place!.tags),
  });
  expect(place!.description_text!.replace(/\s+/g, " ").trim()).toBe("日 本 で 最 も 古 い 博 物 館");
  // Latin rows keep no second copy.
  expect(await env.DB.prepare("SELECT name_search FROM pinpoints WHERE id = 1").first("name_search")).toBeNull();
  const match = (table: string, q: string) =>
    env.DB.prepare(`SELECT rowid AS id FROM ${table} WHERE ${table} MATCH ? ORDER BY rowid`)
      .bind(textQuery(q).terms)
      .all<{ id: number }>()
      .then((r) => r.results.map((row) => row.id));
  expect(await match("pinpoints_fts", "博物館")).toEqual([301]);
  expect(await match("pinpoints_fts", "台東")).toEqual([301]);
  expect(await match("pinpoints_fts", "古い")).toEqual([301]);
  const event = await env.DB.prepare("SELECT id FROM events WHERE pinpoint_id = 301").first<{ id: number }>();
  expect(await match("events_fts", "แก้ว")).toEqual([event!.id]);
  expect(await match("events_fts", "วัด")).toEqual([event!.id]);
  // Filling the forms replaced no entry of the change log: each still has the sequence number it got first.
  const log = await env.DB.prepare("SELECT count(*) AS n, max(seq) AS last FROM changes").first<{
    n: number;
    last: number;
  }>();
  expect(log!.n).toBeGreaterThan(before.pinpoints!);
  expect(log!.last).toBe(log!.n);
});
