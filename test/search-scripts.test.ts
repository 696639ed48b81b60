/**
 * `q=` in every script (docs/map-queries.md "Text search in every script"): real place names in Chinese, Japanese,
 * Thai, Lao, Khmer, Burmese, Korean, Arabic, Russian, Greek and Hebrew, mixed scripts and Latin
 * transliterations, written through every path (a create, an update, an import, events), searched for
 * words inside names, addresses, tags and descriptions. Each answer is checked against a brute-force
 * one computed here from the texts, by the rule of test/text-match.ts, stated independently of the index.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { SPACED_RANGES, searchForm, spaced } from "../src/core/search-form";
import { batchOn, runFills } from "../src/db/fills";
import { COVERING_BLOCKS } from "../src/db/search/search-form-sql";
import { caller, json, walkBothWays, type Caller } from "./helpers";
import { matches, NO_SPACES } from "./text-match";

describe("the characters that become words of their own", () => {
  it("are the letters and digits of Chinese, Japanese, Thai, Lao, Khmer and Burmese, not Latin", () => {
    const listed = (code: number) => SPACED_RANGES.some(([from, to]) => code >= from && code <= to);
    const differ: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      if (NO_SPACES.test(String.fromCodePoint(code)) !== listed(code)) differ.push(code.toString(16));
    }
    expect(differ).toEqual([]);
  });

  it("lie in the five blocks whose characters the data fill walks", () => {
    for (const [from, to] of SPACED_RANGES) {
      expect(
        COVERING_BLOCKS.some(([low, high]) => from >= low && to <= high),
        from.toString(16),
      ).toBe(true);
    }
  });

  it("the data fill of migration 0012 writes the forms the app writes, character for character, and changes nothing the app wrote", async () => {
    // Every range's first and last character and their neighbours, alone, in pairs and among Latin letters.
    const edges = SPACED_RANGES.flatMap(([from, to]) => [from - 1, from, to, to + 1]).filter(
      (code) => code >= 0x20 && (code < 0xd800 || code > 0xdfff) && code <= 0x10ffff,
    );
    const chars = edges.map((code) => String.fromCodePoint(code));
    const texts = [
      ...chars.map((c, i) => `a${c}${chars[(i + 1) % chars.length]}b ${c}`),
      "東京国立博物館",
      "วัดพระแก้ว",
      "Tour Eiffel",
      "Café 東京Tower",
      "ရွှေတိဂုံဘုရား",
      "",
    ];
    const account = await env.DB.prepare("INSERT INTO accounts (name) VALUES ('migration-forms') RETURNING id").first<{
      id: number;
    }>();
    // Rows as migration 0012 finds them: no search forms, the description's text as written. The last
    // one's description the app wrote already (spaced), which the fill must leave as it is.
    const rows = [...texts.map((text) => [text, text] as const), ["東京", spaced("東京")] as const];
    await env.DB.batch(
      rows.map(([text, description]) =>
        env.DB.prepare(
          "INSERT INTO pinpoints (account_id, name, address, tags, description_text, latitude, longitude) VALUES (?, ?, ?, ?, ?, 0, 0)",
        ).bind(account!.id, text, text, JSON.stringify([text]), description),
      ),
    );
    const others = () =>
      env.DB.prepare("SELECT * FROM pinpoints WHERE account_id <> ? ORDER BY id")
        .bind(account!.id)
        .all()
        .then((r) => r.results);
    const before = await others();
    expect(before.length).toBeGreaterThan(30);
    const changes = await env.DB.prepare("SELECT count(*) AS n, max(seq) AS last FROM changes").first();
    await env.DB.prepare(
      "INSERT INTO data_fills (name, blocks) VALUES ('search_forms_pinpoints', 'text_search')",
    ).run();

    const run = await runFills(batchOn(env.DB), { rows: 25 });
    expect(run).toMatchObject({ finished: ["search_forms_pinpoints"], pending: [] });
    expect(run.batches).toBeGreaterThan(3);
    const { results } = await env.DB.prepare(
      "SELECT name_search, address_search, tags_search, description_text FROM pinpoints WHERE account_id = ? ORDER BY id",
    )
      .bind(account!.id)
      .all<Record<string, string | null>>();
    expect(results.map((r) => r.name_search)).toEqual(rows.map(([text]) => searchForm(text)));
    expect(results.map((r) => r.address_search)).toEqual(rows.map(([text]) => searchForm(text)));
    expect(results.map((r) => r.tags_search)).toEqual(rows.map(([text]) => searchForm(JSON.stringify([text]))));
    expect(results.map((r) => r.description_text)).toEqual(rows.map(([text]) => spaced(text)));
    expect(results.filter((r) => r.name_search !== null).length).toBeGreaterThan(rows.length / 2);
    // The rows the app wrote are as it wrote them, and filling logged no change.
    expect(await others()).toEqual(before);
    expect(await env.DB.prepare("SELECT count(*) AS n, max(seq) AS last FROM changes").first()).toEqual(changes);
  });
});

type Place = { name: string; address?: string; tags?: string[]; description?: string };

/** Real places; `description` is plain text inside a paragraph. */
const PLACES: Place[] = [
  { name: "北京故宫博物院", address: "北京市东城区景山前街4号", description: "明清两代的皇家宫殿" },
  { name: "上海自然博物馆", tags: ["博物馆"] },
  { name: "北京朝阳公园", description: "北京最大的城市公园之一" },
  { name: "香港國際機場", tags: ["機場"] },
  { name: "東京国立博物館", address: "東京都台東区上野公園13-9", description: "日本で最も古い博物館" },
  { name: "京都駅" },
  { name: "東京都庁", description: "新宿にある東京都の本庁舎" },
  { name: "東京スカイツリー", tags: ["タワー"] },
  { name: "วัดพระแก้ว", address: "กรุงเทพมหานคร", description: "วัดในพระบรมมหาราชวัง" },
  { name: "ตลาดนัดจตุจักร" },
  { name: "สวนลุมพินี", description: "สวนสาธารณะใจกลางกรุงเทพ" },
  { name: "ພະທາດຫຼວງ" },
  { name: "អង្គរវត្ត" },
  { name: "ရွှေတိဂုံဘုရား" },
  { name: "국립중앙박물관", address: "서울특별시 용산구" },
  { name: "서울 올림픽 공원" },
  { name: "경복궁", description: "조선 왕조의 법궁" },
  { name: "المسجد الحرام", address: "مكة" },
  { name: "متحف اللوفر أبوظبي", tags: ["متحف"] },
  { name: "برج خليفة", description: "أطول مبنى في العالم" },
  { name: "Государственный Эрмитаж", description: "Музей в Санкт-Петербурге" },
  { name: "Красная площадь", address: "Москва" },
  { name: "Большой театр" },
  { name: "Ακρόπολη Αθηνών" },
  { name: "Μουσείο της Ακρόπολης", description: "Αρχαιολογικό μουσείο στην Αθήνα" },
  { name: "Λευκός Πύργος", address: "Θεσσαλονίκη" },
  { name: "הכותל המערבי", address: "ירושלים" },
  { name: "מוזיאון ישראל", description: "המוזיאון הגדול בישראל" },
  { name: "מגדל דוד" },
  // Mixed scripts, and the transliterations, which stay as they are written.
  { name: "東京Tower Café", description: "Tokyoの展望台" },
  { name: "Tokyo 東京 Station 駅" },
  { name: "Bangkok สนามบินสุวรรณภูมิ Airport" },
  { name: "Tōkyō Kokuritsu Hakubutsukan" },
  { name: "Wat Phra Kaew", tags: ["วัด"] },
  { name: "Gyeongbokgung" },
  { name: "Gosudarstvenny Ermitazh" },
];

/** Tier 1-3 of a place (name; name, address, tags; anywhere), or 0. */
function tier(p: Place, q: string): number {
  const near = [p.name, p.address, ...(p.tags ?? [])];
  if (matches([p.name], q)) return 1;
  if (matches(near, q)) return 2;
  return matches([...near, p.description], q) ? 3 : 0;
}

const body = (p: Place, i: number) => ({
  name: p.name,
  latitude: (i % 80) - 40,
  longitude: i * 3 - 100,
  ...(p.address && { address: p.address }),
  ...(p.tags && { tags: p.tags }),
  ...(p.description && { description: `<p>${p.description}</p>` }),
});

let a: Caller;
/** Each place's id, in PLACES order. */
const ids: number[] = [];

beforeAll(async () => {
  a = await caller();
  // A third each: created one by one, created under another name then updated, imported in one batch.
  const third = Math.ceil(PLACES.length / 3);
  for (const [i, p] of PLACES.entries()) {
    if (i >= 2 * third) break;
    const response = await a.send("POST", "/v3.0/pinpoints", {
      ...body(p, i),
      ...(i >= third && { name: "Placeholder", description: "<p>placeholder</p>" }),
    });
    const { id } = await json<{ id: number }>(response);
    if (i >= third) {
      const updated = await a.send("PUT", `/v3.0/pinpoints/${id}`, body(p, i));
      expect(updated.status, await updated.clone().text()).toBe(200);
    }
    ids.push(id);
  }
  const features = PLACES.slice(2 * third).map((p, k) => {
    const { latitude, longitude, ...properties } = body(p, 2 * third + k);
    return { type: "Feature", geometry: { type: "Point", coordinates: [longitude, latitude] }, properties };
  });
  const imported = await a.send(
    "POST",
    "/v3.0/pinpoints",
    { type: "FeatureCollection", features },
    { "Content-Type": "application/geo+json" },
  );
  expect(imported.status, await imported.clone().text()).toBe(201);
  const { results } = await env.DB.prepare("SELECT id FROM pinpoints WHERE account_id = ? AND id > ? ORDER BY id")
    .bind(a.accountId, ids.at(-1)!)
    .all<{ id: number }>();
  ids.push(...results.map((r) => r.id));
  expect(ids.length).toBe(PLACES.length);
}, 120_000);

describe("q= finds a word inside a name, an address, tags or a description, in every script", () => {
  it.each([
    ["博物館", 1],
    ["博物", 3],
    ["博物院", 1],
    ["公园", 1],
    ["宫殿", 1],
    ["機場", 1],
    ["東京", 5],
    ["京都", 3],
    ["駅", 2],
    ["東京 tow", 1],
    ["京tow", 1],
    ["展望台", 1],
    ["แก้ว", 1],
    ["ตลาด", 1],
    ["วัด", 2],
    ["กรุงเทพ", 2],
    ["สุวรรณภูมิ", 1],
    ["ຫຼວງ", 1],
    ["វត្ត", 1],
    ["ဘုရား", 1],
    ["경복궁", 1],
    ["서울", 2],
    ["박물관", 0],
    ["مكة", 1],
    ["متحف", 1],
    ["Эрмитаж", 1],
    ["музей", 1],
    ["эрми", 1],
    ["Ακρόπολη", 2],
    ["μουσείο", 1],
    ["מוזיאון", 1],
    ["ירושלים", 1],
    ["tokyo", 3],
    ["hakubutsu", 1],
    ["wat phra", 1],
    ["ermitazh", 1],
    ["bangkok 空港", 0],
  ])("%s: %i places, by tier then id, as brute force finds them", async (q, count) => {
    const expected = PLACES.map((p, i) => ({ id: ids[i]!, t: tier(p, q) }))
      .filter((r) => r.t > 0)
      .sort((x, y) => x.t - y.t || x.id - y.id)
      .map((r) => r.id);
    expect(expected.length).toBe(count);
    const found = await walkBothWays<{ id: number }>(a, `/v3.0/pinpoints?q=${encodeURIComponent(q)}&limit=2`);
    expect(found.map((r) => r.id)).toEqual(expected);
  });

  it("stores a search form only where it differs from the text", async () => {
    const { results } = await env.DB.prepare(
      "SELECT name, name_search, address_search, tags_search FROM pinpoints WHERE account_id = ? ORDER BY id",
    )
      .bind(a.accountId)
      .all<{ name: string; name_search: string | null; address_search: string | null; tags_search: string | null }>();
    for (const [i, r] of results.entries()) {
      const p = PLACES[i]!;
      expect(r.name_search, r.name).toBe(searchForm(p.name));
      expect(r.address_search, r.name).toBe(searchForm(p.address));
      expect(r.tags_search, r.name).toBe(searchForm(JSON.stringify(p.tags ?? [])));
    }
    expect(results.find((r) => r.name === "Wat Phra Kaew")).toMatchObject({
      name_search: null,
      tags_search: '[" ว ั ด "]',
    });
  });
});

describe("events", () => {
  it("are found by a word inside their name or description, after a create and an update", async () => {
    const texts = [
      { name: "東京国立博物館の特別展", description: "<p>国宝の展示</p>" },
      { name: "สงกรานต์ที่วัดพระแก้ว", description: "<p>เทศกาลสงกรานต์</p>" },
      { name: "Jazz night", description: "<p>東京のジャズ</p>" },
    ];
    const pinpoint = ids[0]!;
    const dates = [{ start: "2027-04-13T10:00:00Z", end: "2027-04-13T12:00:00Z" }];
    const made: number[] = [];
    for (const [i, text] of texts.entries()) {
      const created = await a.send("POST", "/v3.0/events", { name: "Placeholder", pinpoint, dates });
      const { id } = await json<{ id: number }>(created);
      const updated = await a.send("PUT", `/v3.0/events/${id}`, { ...text, pinpoint, dates, tags: [`t${i}`] });
      expect(updated.status, await updated.clone().text()).toBe(200);
      made.push(id);
    }
    for (const [q, want] of [
      ["博物館", [made[0]]],
      ["東京", [made[0], made[2]]],
      ["สงกรานต์", [made[1]]],
      ["แก้ว", [made[1]]],
      ["国宝", [made[0]]],
    ] as const) {
      const expected = texts
        .map((t, i) => ({ id: made[i]!, t: matches([t.name], q) ? 1 : matches([t.name, t.description], q) ? 3 : 0 }))
        .filter((r) => r.t > 0)
        .sort((x, y) => x.t - y.t || x.id - y.id)
        .map((r) => r.id);
      expect(expected, q).toEqual(want);
      const found = await walkBothWays<{ id: number }>(a, `/v3.0/events?q=${encodeURIComponent(q)}&limit=1`);
      expect(
        found.map((r) => r.id),
        q,
      ).toEqual(expected);
    }
  });
});
