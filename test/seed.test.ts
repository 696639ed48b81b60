/**
 * The sample city guide (`npm run seed`, scripts/seed/): the generator is
 * deterministic, and the seeded account reads back through the API as a
 * guide: icons served as PNG, pinpoints with addresses in the city, lists
 * with members, events with several future dates. Seeding a second time
 * changes nothing.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { generateGuide, type Guide } from "../scripts/seed/guide.ts";
import { SeedRefused, seedAccount, type SeedBindings, type SeedResult } from "../scripts/seed/store.ts";
import { sanitizeHtml } from "../src/fields/sanitize-html";
import { matchesType } from "../src/media/signatures";
import { allPages, call, caller, type Caller } from "./helpers";

const NOW = Date.UTC(2026, 10, 21, 9, 0, 0);
const bindings = env as unknown as SeedBindings;

type Pinpoint = {
  id: number;
  name: string;
  address: string;
  latitude: number;
  longitude: number;
  category: number;
  tags: string[];
  description: string;
};
type Category = { id: number; name: string; image_url: string };
type Event = { id: number; pinpoint: number; dates: { start: string; end: string }[] };

describe("generator", () => {
  it("gives the same guide for the same seed and another for another seed", () => {
    const guide = generateGuide({ now: NOW });
    expect(generateGuide({ now: NOW })).toEqual(guide);
    expect(generateGuide({ seed: 7, now: NOW }).pinpoints.map((p) => p.name)).not.toEqual(
      guide.pinpoints.map((p) => p.name),
    );
  });

  it("writes descriptions the API's sanitizer keeps as they are", async () => {
    const guide = generateGuide({ now: NOW });
    const descriptions = new Set([
      ...guide.pinpoints.map((p) => p.description),
      ...guide.events.map((e) => e.description),
      ...guide.lists.flatMap((l) => (l.description ? [l.description] : [])),
    ]);
    for (const html of descriptions) expect(await sanitizeHtml(html)).toBe(html);
  });
});

describe("seeded account", () => {
  let guide: Guide;
  let result: SeedResult;
  let who: Caller;
  let pinpoints: Pinpoint[];

  beforeAll(async () => {
    guide = generateGuide({ now: NOW });
    const account = `seeded-${crypto.randomUUID()}`;
    result = await seedAccount(bindings, account, guide);
    who = await caller("read write", result.accountId);
    pinpoints = (await allPages<Pinpoint>(who, "/v3.0/pinpoints?limit=1000")).flatMap((p) => p.results);
  });

  it("holds a few hundred pinpoints with addresses in the city, each in a seeded category", async () => {
    expect(pinpoints.length).toBe(guide.pinpoints.length);
    expect(pinpoints.length).toBeGreaterThanOrEqual(250);
    const categories = (await allPages<Category>(who, "/v3.0/categories?limit=1000")).flatMap((p) => p.results);
    const seeded = new Map(
      categories.filter((c) => guide.categories.some((g) => g.name === c.name)).map((c) => [c.id, c]),
    );
    expect(seeded.size).toBe(guide.categories.length);
    for (const p of pinpoints) {
      expect(p.address).toMatch(/^\d+( bis)? .+, 6900\d Lyon, France$/);
      expect(p.latitude).toBeGreaterThan(45.7);
      expect(p.latitude).toBeLessThan(45.8);
      expect(p.longitude).toBeGreaterThan(4.78);
      expect(p.longitude).toBeLessThan(4.9);
      expect(seeded.has(p.category)).toBe(true);
      expect(p.tags.length).toBeGreaterThan(0);
    }
    // Interleaved, so the first page shows several kinds of place.
    expect(new Set(pinpoints.slice(0, 20).map((p) => p.category)).size).toBeGreaterThanOrEqual(5);
  });

  it("serves every category icon as a small PNG", async () => {
    const categories = (await allPages<Category>(who, "/v3.0/categories?limit=1000")).flatMap((p) => p.results);
    for (const category of categories.filter((c) => guide.categories.some((g) => g.name === c.name))) {
      expect(category.image_url).toMatch(/\/media\/m\/[0-9a-f]{32}\.png$/);
      const response = await call(new URL(category.image_url).pathname);
      expect(response.status).toBe(200);
      expect(response.headers.get("Content-Type")).toBe("image/png");
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(matchesType("image/png", bytes)).toBe(true);
      expect(bytes.byteLength).toBeLessThan(2048);
    }
  });

  it("has themed lists with their members", async () => {
    const lists = (await allPages<{ id: number; name: string }>(who, "/v3.0/lists?limit=1000")).flatMap(
      (p) => p.results,
    );
    expect(lists.map((l) => l.name)).toEqual(guide.lists.map((l) => l.name));
    for (const list of lists) {
      const expected = guide.lists.find((l) => l.name === list.name)!.members;
      const members = (await allPages<Pinpoint>(who, `/v3.0/pinpoints?list=${list.id}&limit=1000`)).flatMap(
        (p) => p.results,
      );
      expect(members.map((m) => m.name).sort()).toEqual([...expected].sort());
    }
    expect(result.members).toBeGreaterThan(80);
  });

  it("has events at its pinpoints with several dates after now", async () => {
    const events = (await allPages<Event>(who, "/v3.0/events?limit=1000")).flatMap((p) => p.results);
    expect(events.length).toBe(guide.events.length);
    const ids = new Set(pinpoints.map((p) => p.id));
    for (const event of events) {
      expect(ids.has(event.pinpoint)).toBe(true);
      for (const date of event.dates) {
        expect(Date.parse(date.start)).toBeGreaterThan(NOW);
        expect(Date.parse(date.end)).toBeGreaterThan(Date.parse(date.start));
      }
    }
    expect(events.filter((e) => e.dates.length >= 2).length).toBe(events.length);
  });

  it("refuses to seed the account again, changing nothing", async () => {
    await expect(seedAccount(bindings, (await accountName(result.accountId))!, guide)).rejects.toBeInstanceOf(
      SeedRefused,
    );
    const again = (await allPages<Pinpoint>(who, "/v3.0/pinpoints?limit=1000")).flatMap((p) => p.results);
    expect(again.length).toBe(pinpoints.length);
  });
});

async function accountName(id: number): Promise<string | null> {
  return env.DB.prepare("SELECT name FROM accounts WHERE id = ?").bind(id).first<string>("name");
}
