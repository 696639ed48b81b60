/**
 * The backup of the base tables (scripts/lib/backup.ts) rebuilds a database:
 * export, empty the database, apply the migrations, run the backup; every row
 * of every base table comes back identical, and the search indexes (rebuilt
 * by the triggers) answer exactly as before. The secrets the database keeps
 * are sealed in it, so the backup holds none of them.
 */
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, expect, it } from "vitest";
import { backupStatements, baseTables, exportBaseTables } from "../scripts/lib/backup";
import type { Execute } from "../scripts/lib/registry";
import { sealingKeys } from "../src/core/sealed";
import { openSecret } from "../src/webhooks/sealed-secrets";
import { DIRECTORY } from "../src/db/shard-plan";
import { caller, createAccount, createPinpoint, type Caller } from "./helpers";
import { emptyDatabase } from "./migration-safety";

const execute: Execute = async (statements) => {
  const out = [];
  for (const s of statements) out.push((await env.DB.prepare(s).all<Record<string, unknown>>()).results);
  return out;
};

const QUERIES = [
  "/v3.0/pinpoints?q=musee&limit=100",
  "/v3.0/pinpoints?bbox=179,-20,-179,20&limit=100",
  "/v3.0/pinpoints?latitude=48.85&longitude=2.35&limit=100",
  "/v3.0/events?from=2027-01-01T00:00:00Z&to=2027-02-01T00:00:00Z&limit=100",
  "/v3.0/events?q=jazz&limit=100",
];

let a: Caller;
let tables: string[];
let before: Record<string, unknown[]>;
let answers: unknown[];
let backup: string;
let secrets: { key: string; first: string; rotated: string; webhook: number };
let keeperAccount: number;

async function snapshot(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of [...tables, "event_occurrences", "tile_cells"]) {
    // Category 1 comes from the migrations, with the time they ran.
    const where = t === "categories" ? " WHERE account_id IS NOT NULL" : "";
    // The tile cells have no rowid: their key orders them.
    const order = t === "tile_cells" ? "account_id, list_id, level, cell" : "rowid";
    out[t] = (await env.DB.prepare(`SELECT * FROM "${t}"${where} ORDER BY ${order}`).all()).results;
  }
  return out;
}

const search = async () => {
  const out = [];
  for (const q of QUERIES) out.push(((await (await a.get(q)).json()) as { results: unknown[] }).results);
  return out;
};

beforeAll(async () => {
  a = await caller();
  const places = [
    {
      name: "Musée d'Orsay",
      latitude: 48.86,
      longitude: 2.3266,
      description: "<p>Line one\nline two; 'quoted' \"text\"</p>",
    },
    { name: "Fiji musée", latitude: -17.7, longitude: 179.99, tags: ["x;y", "a'b"], address: "Nul\u0000char\r\nend" },
    { name: "Date line", latitude: 0.1234567890123, longitude: -179.98765432101234 },
  ];
  const pins = [];
  for (const p of places) pins.push(await createPinpoint(a, p));
  for (let i = 0; i < 30; i++)
    pins.push(await createPinpoint(a, { name: `Place ${i}`, latitude: 48.8 + i / 1000, longitude: 2.3 + i / 700 }));
  for (let i = 0; i < 10; i++) {
    const start = new Date(Date.parse("2027-01-03T20:00:00Z") + i * 86_400_000).toISOString();
    const r = await a.send("POST", "/v3.0/events", {
      name: `Jazz ${i}`,
      pinpoint: pins[i]!.id,
      dates: [
        { start, end: start },
        { start: "2027-03-01T00:00:00Z", end: "2027-03-02T00:00:00Z" },
      ],
      description: "<p>Live <b>music</b></p>",
    });
    expect(r.status).toBe(201);
  }
  const list = await a.send("POST", "/v3.0/lists", { name: "L" });
  const { id } = await list.json<{ id: number }>();
  await a.send(
    "POST",
    `/v3.0/lists/${id}/pinpoints`,
    pins.slice(0, 5).map((p) => ({ id: p.id })),
  );
  // The list's own order, not the order of addition: a position the restore must keep.
  const moved = await a.send("PUT", `/v3.0/lists/${id}/pinpoints/order`, { move: pins[4]!.id, before: pins[1]!.id });
  expect(moved.status).toBe(200);
  await env.DB.prepare("INSERT INTO categories (account_id, name, image_key) VALUES (?, 'Mine', 'm/x.png')")
    .bind(a.accountId)
    .run();

  // Secrets the database keeps, each in an answer kept for its idempotency key: an account with no
  // content, so its webhook delivers nothing, on the database this backup is of.
  const keeper = await caller("read write", await createAccount(DIRECTORY));
  const send = async (path: string, body?: unknown) => {
    const response = await keeper.send("POST", path, body, { "Idempotency-Key": crypto.randomUUID() });
    expect(response.status, path).toBeLessThan(300);
    return response.json<Record<string, string>>();
  };
  const key = await send("/v3.0/keys", { name: "map" });
  const hook = await send("/v3.0/webhooks", { url: "https://hooks.example.com/backup", events: ["*"] });
  const rotated = await send(`/v3.0/webhooks/${hook.id}/rotate`);
  secrets = { key: key.key!, first: hook.secret!, rotated: rotated.secret!, webhook: Number(hook.id) };
  keeperAccount = keeper.accountId;

  tables = await baseTables(execute);
  before = await snapshot();
  answers = await search();
  const lines: string[] = [];
  await exportBaseTables(execute, (line) => void lines.push(line));
  backup = lines.join("\n");

  await emptyDatabase(env.DB);
  await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
  const statements = backupStatements(backup);
  for (let i = 0; i < statements.length; i += 100) {
    await env.DB.batch(statements.slice(i, i + 100).map((s) => env.DB.prepare(s)));
  }
}, 120_000);

it("covers every base table, parents first, and no index or derived table", () => {
  expect(tables.slice(0, 1)).toEqual(["accounts"]);
  expect(tables).toEqual(
    expect.arrayContaining(["clients", "categories", "pinpoints", "lists", "list_pinpoints", "events"]),
  );
  expect(tables.indexOf("pinpoints")).toBeLessThan(tables.indexOf("events"));
  expect(tables.some((t) => /fts|rtree|occurrences|tile_cells|migrations/.test(t))).toBe(false);
  expect(
    backupStatements(backup).every((s) => /^(INSERT (OR REPLACE )?INTO|UPDATE "lists" SET "version")/.test(s)),
  ).toBe(true);
  expect(tables.at(-1)).toBe("changes");
});

it("restores every row of every table exactly, occurrences and tile cells included", async () => {
  const after = await snapshot();
  for (const t of Object.keys(before)) expect(after[t], t).toEqual(before[t]);
  expect(before.pinpoints!.length).toBe(33);
  expect(before.categories!.length).toBe(1);
  expect(before.event_occurrences!.length).toBe(20);
  expect(before.tile_cells!.length).toBeGreaterThan(33);
});

it("the rebuilt search indexes answer as before", async () => {
  const again = await search();
  expect(again).toEqual(answers);
  expect((answers[0] as unknown[]).length).toBe(2);
  expect((answers[4] as unknown[]).length).toBe(10);
});

it("holds no secret: webhook secrets and the answers kept for idempotency keys are sealed, and open after a restore", async () => {
  for (const secret of [secrets.key, secrets.first, secrets.rotated]) {
    expect(backup).not.toContain(secret);
    // Not in any other spelling either: the base64 part alone, or the key without its prefix.
    expect(backup).not.toContain(secret.replace(/^(whsec_|pk_)/, "").slice(0, 24));
  }
  expect(backup).toContain("sealed:v1:");
  const keys = await sealingKeys(env);
  const row = await env.DB.prepare("SELECT secret, previous_secret FROM webhooks WHERE id = ?")
    .bind(secrets.webhook)
    .first<{ secret: string; previous_secret: string }>();
  expect(await openSecret(keys, keeperAccount, row!.secret)).toBe(secrets.rotated);
  expect(await openSecret(keys, keeperAccount, row!.previous_secret)).toBe(secrets.first);
});
