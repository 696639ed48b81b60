/**
 * Text search in scripts written without spaces: four ways of indexing names, measured in Node's
 * SQLite (the FTS5 of D1) on the same data (docs/benchmarks.md "Text search in every script").
 *
 * - `words`: the index before src/core/search-form.ts, unicode61 over the text as written.
 * - `segmenter`: Intl.Segmenter (word granularity, ICU's dictionaries) cuts the stored text and the
 *   query; a query of several words is a phrase.
 * - `trigram`: FTS5's trigram tokenizer; a query word is a substring.
 * - `characters`: src/core/search-form.ts, each letter of those scripts a word of its own, a query
 *   word the phrase of its characters (what the service does).
 *
 * Correctness: real place names in each script, each with words a visitor types that occur inside it;
 * a word is expected in exactly the names that contain it (brute force, by substring). Cost: an index
 * of BENCH_TEXT_ROWS (1,000,000) names and descriptions mixing the scripts: its size, the time to
 * write it, and a first page (20) of a common and a rare word. What filling the search forms of rows
 * written before them costs is bench/fill.ts's.
 *
 *   node bench/text-scripts.ts
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { queryString, spaced } from "../src/core/search-form.ts";

/** Real names, each with words inside it. */
const NAMES: Record<string, [string, string[]][]> = {
  Chinese: [
    ["北京故宫博物院", ["故宫", "博物院", "北京"]],
    ["上海自然博物馆", ["博物馆", "自然", "上海"]],
    ["北京朝阳公园", ["公园", "朝阳"]],
    ["天安门广场", ["广场", "天安门"]],
    ["西湖风景名胜区", ["西湖", "风景", "名胜"]],
    ["香港國際機場", ["機場", "國際", "香港"]],
    ["台北市立動物園", ["動物園", "台北", "市立"]],
    ["国家体育场", ["体育场", "国家"]],
    ["南京长江大桥", ["长江", "大桥", "南京"]],
    ["成都大熊猫繁育研究基地", ["大熊猫", "熊猫", "基地", "成都", "研究"]],
    ["深圳宝安国际机场", ["机场", "国际", "宝安", "深圳"]],
    ["武汉大学", ["大学", "武汉"]],
    ["广州塔", ["广州", "塔"]],
    ["中山纪念堂", ["纪念堂", "中山"]],
  ],
  Japanese: [
    ["東京国立博物館", ["博物館", "国立", "東京"]],
    ["京都駅", ["駅", "京都"]],
    ["大阪城公園", ["公園", "大阪城", "大阪"]],
    ["浅草寺", ["浅草", "寺"]],
    ["東京スカイツリー", ["スカイツリー", "ツリー", "東京"]],
    ["新宿御苑", ["新宿", "御苑"]],
    ["奈良公園", ["公園", "奈良"]],
    ["名古屋城", ["名古屋", "城"]],
    ["横浜中華街", ["中華街", "横浜"]],
    ["札幌市時計台", ["時計台", "札幌"]],
    ["広島平和記念資料館", ["平和", "記念", "資料館", "広島"]],
    ["成田国際空港", ["空港", "国際", "成田"]],
    ["渋谷スクランブル交差点", ["交差点", "スクランブル", "渋谷"]],
    ["伏見稲荷大社", ["稲荷", "大社", "伏見"]],
    ["東京都庁", ["東京都", "都庁", "東京"]],
  ],
  Thai: [
    ["วัดพระแก้ว", ["วัด", "พระแก้ว", "แก้ว"]],
    ["วัดอรุณราชวราราม", ["วัด", "อรุณ"]],
    ["ตลาดน้ำดำเนินสะดวก", ["ตลาดน้ำ", "ตลาด", "ดำเนินสะดวก"]],
    ["สนามบินสุวรรณภูมิ", ["สนามบิน", "สุวรรณภูมิ"]],
    ["พิพิธภัณฑสถานแห่งชาติ", ["พิพิธภัณฑสถาน", "แห่งชาติ"]],
    ["อุทยานแห่งชาติเขาใหญ่", ["อุทยาน", "แห่งชาติ", "เขาใหญ่"]],
    ["มหาวิทยาลัยเชียงใหม่", ["มหาวิทยาลัย", "เชียงใหม่"]],
    ["สวนลุมพินี", ["สวน", "ลุมพินี"]],
    ["ถนนข้าวสาร", ["ถนน", "ข้าวสาร"]],
    ["ตลาดนัดจตุจักร", ["ตลาดนัด", "จตุจักร", "ตลาด"]],
    ["สถานีรถไฟหัวลำโพง", ["สถานี", "รถไฟ", "หัวลำโพง"]],
  ],
  Lao: [
    ["ພະທາດຫຼວງ", ["ພະທາດ", "ຫຼວງ"]],
    ["ວັດສີສະເກດ", ["ວັດ", "ສີສະເກດ"]],
    ["ຫໍພິພິທະພັນແຫ່ງຊາດ", ["ພິພິທະພັນ", "ແຫ່ງຊາດ"]],
    ["ສະໜາມບິນສາກົນວັດໄຕ", ["ສະໜາມບິນ", "ວັດໄຕ"]],
    ["ຕະຫຼາດເຊົ້າ", ["ຕະຫຼາດ", "ເຊົ້າ"]],
  ],
  Khmer: [
    ["អង្គរវត្ត", ["អង្គរ", "វត្ត"]],
    ["ព្រះបរមរាជវាំង", ["ព្រះ", "វាំង"]],
    ["សារមន្ទីរជាតិ", ["សារមន្ទីរ", "ជាតិ"]],
    ["ផ្សារធំថ្មី", ["ផ្សារ", "ថ្មី"]],
    ["ប្រាសាទបាយ័ន", ["ប្រាសាទ", "បាយ័ន"]],
    ["អាកាសយានដ្ឋានអន្តរជាតិភ្នំពេញ", ["អាកាសយានដ្ឋាន", "អន្តរជាតិ", "ភ្នំពេញ"]],
  ],
  Burmese: [
    ["ရွှေတိဂုံဘုရား", ["ရွှေတိဂုံ", "ဘုရား"]],
    ["ရန်ကုန်မြို့တော်ခန်းမ", ["ရန်ကုန်", "မြို့တော်", "ခန်းမ"]],
    ["ဗိုလ်ချုပ်အောင်ဆန်းဈေး", ["ဈေး", "အောင်ဆန်း", "ဗိုလ်ချုပ်"]],
    ["မန္တလေးနန်းတော်", ["မန္တလေး", "နန်းတော်"]],
    ["ရန်ကုန်အပြည်ပြည်ဆိုင်ရာလေဆိပ်", ["လေဆိပ်", "ရန်ကုန်"]],
  ],
  Korean: [
    ["국립중앙박물관", ["국립중앙박물관"]],
    ["서울 올림픽 공원", ["서울", "공원", "올림픽"]],
    ["경복궁", ["경복궁"]],
  ],
  Latin: [
    ["Musée du Louvre", ["louvre", "musee"]],
    ["Tour Eiffel", ["eiffel", "tour"]],
    ["Tokyo National Museum", ["museum", "tokyo"]],
  ],
};

type Way = {
  tokenizer: string;
  /** The stored form of a text. */
  store: (text: string) => string;
  /** The FTS5 expression of one query word, as the prefix the last word is. */
  query: (word: string) => string;
};

/** Lower case without Latin accents, as the index folds them: the brute-force side. */
const fold = (text: string) =>
  text
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase();

const segmenter = new Intl.Segmenter("und", { granularity: "word" });
const segments = (text: string) => [...segmenter.segment(text)].filter((s) => s.isWordLike).map((s) => s.segment);
const UNICODE61 = "unicode61 remove_diacritics 2";

const WAYS: Record<string, Way> = {
  words: { tokenizer: UNICODE61, store: (t) => t, query: (w) => `"${w}"*` },
  segmenter: {
    tokenizer: UNICODE61,
    store: (t) => segments(t).join(" "),
    query: (w) => `"${segments(w).join(" ")}"*`,
  },
  trigram: { tokenizer: "trigram remove_diacritics 1", store: (t) => t, query: (w) => `"${w}"` },
  characters: {
    tokenizer: `${UNICODE61} categories 'L* N* Co M*'`,
    store: spaced,
    query: (w) => queryString(w, true),
  },
};

function createIndex(db: DatabaseSync, way: Way) {
  db.exec("DROP TABLE IF EXISTS t");
  db.exec(
    `CREATE VIRTUAL TABLE t USING fts5(name, description, content='', contentless_delete=1, tokenize="${way.tokenizer}"${way.tokenizer.startsWith("trigram") ? "" : ", prefix='2 3 4'"})`,
  );
}

function correctness() {
  const db = new DatabaseSync(":memory:");
  const table: Record<string, Record<string, string>> = {};
  for (const [wayName, way] of Object.entries(WAYS)) {
    createIndex(db, way);
    const names = Object.values(NAMES).flat();
    const insert = db.prepare("INSERT INTO t (rowid, name) VALUES (?, ?)");
    names.forEach(([name], i) => insert.run(i + 1, way.store(name)));
    const match = db.prepare("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid");
    for (const [script, entries] of Object.entries(NAMES)) {
      let expected = 0;
      let found = 0;
      let wrong = 0;
      for (const word of new Set(entries.flatMap(([, words]) => words))) {
        const want = new Set(names.flatMap(([name], i) => (fold(name).includes(fold(word)) ? [i + 1] : [])));
        const got = new Set(match.all(way.query(word)).map((r) => Number(r.rowid)));
        expected += want.size;
        found += [...want].filter((id) => got.has(id)).length;
        wrong += [...got].filter((id) => !want.has(id)).length;
      }
      (table[script] ??= {})[wayName] = `${found}/${expected}${wrong ? ` +${wrong}` : ""}`;
    }
  }
  console.log("Words found inside names (found/expected, +wrongly found):");
  console.table(table);
}

/** 32-bit hash of n, so every run writes the same rows. */
const hash = (n: number) => {
  let x = Math.imul(n ^ 0x9e3779b9, 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
};

/** Names of the synthetic places: two words of one name list, the script drawn with these weights. */
const MIX: [string, number][] = [
  ["Latin", 60],
  ["Chinese", 12],
  ["Japanese", 10],
  ["Korean", 6],
  ["Thai", 6],
  ["Lao", 2],
  ["Khmer", 2],
  ["Burmese", 2],
];
const LATIN = ["Café", "Park", "Museum", "Station", "Église", "Market", "Garden", "Tower", "Bridge", "Library"];

function row(n: number): [string, string] {
  let pick = hash(n) % 100;
  const [script] = MIX.find(([, weight]) => (pick -= weight) < 0)!;
  const words =
    script === "Latin" ? LATIN : NAMES[script]!.flatMap(([name, inside]) => [name, ...inside]).filter(Boolean);
  const word = (k: number) => words[hash(n * 7 + k) % words.length]!;
  const space = script === "Latin" || script === "Korean" ? " " : "";
  return [`${word(1)}${space}${word(2)} ${n % 1000}`, `${word(3)}${space}${word(4)}${space}${word(5)} ${word(6)}`];
}

function cost(rows: number) {
  const dir = mkdtempSync(join(tmpdir(), "text-scripts-"));
  const table: Record<string, Record<string, string>> = {};
  try {
    for (const [wayName, way] of Object.entries(WAYS)) {
      const file = join(dir, `${wayName}.db`);
      const db = new DatabaseSync(file);
      db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF");
      createIndex(db, way);
      const insert = db.prepare("INSERT INTO t (rowid, name, description) VALUES (?, ?, ?)");
      const started = performance.now();
      db.exec("BEGIN");
      for (let n = 1; n <= rows; n++) {
        const [name, description] = row(n);
        insert.run(n, way.store(name), way.store(description));
      }
      db.exec("COMMIT");
      const write = performance.now() - started;
      db.exec("INSERT INTO t(t) VALUES ('optimize')");
      db.close();
      const size = statSync(file).size;
      const reopened = new DatabaseSync(file);
      const page = reopened.prepare("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid LIMIT 20");
      const time = (word: string) => {
        const expression = way.query(word);
        page.all(expression);
        const rounds = 50;
        const t0 = performance.now();
        for (let i = 0; i < rounds; i++) page.all(expression);
        return ((performance.now() - t0) / rounds).toFixed(3);
      };
      table[wayName] = {
        MB: (size / 1e6).toFixed(0),
        "µs per row written": ((write * 1000) / rows).toFixed(1),
        "page ms 博物館": time("博物館"),
        "page ms 公園": time("公園"),
        "page ms ตลาด": time("ตลาด"),
        "page ms museum": time("museum"),
        "page ms 研究基地": time("研究基地"),
      };
      reopened.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`An index of ${rows} names and descriptions:`);
  console.table(table);
}

const rows = Number(process.env.BENCH_TEXT_ROWS ?? 1_000_000);
correctness();
cost(rows);
