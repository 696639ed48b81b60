/**
 * Bulk import of a GeoJSON FeatureCollection: ids in order, the same field
 * rules as a single create, all or nothing with a pointer per bad feature,
 * limits (1,001 features, an oversized body), categories of other accounts,
 * and retries under one Idempotency-Key (what `npm run import` sends).
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../src/app";
import { mediaFile } from "./media-fixtures";
import { bindingNamed } from "../src/db/shards";
import { BASE, call, type Caller, caller, contentDb, json, shardOf } from "./helpers";

type Problem = { status: number; detail: string; errors: { pointer: string; detail: string }[] };

const point = (i: number, properties: Record<string, unknown> = {}, coordinates?: unknown) => ({
  type: "Feature",
  geometry: { type: "Point", coordinates: coordinates ?? [-(i % 180), (i % 90) / 2] },
  properties: { name: `Place ${i}`, ...properties },
});

const collection = (features: unknown[]) => ({ type: "FeatureCollection", features });

const importBody = (who: Caller, body: unknown, headers: Record<string, string> = {}) =>
  who.send("POST", "/v3.0/pinpoints", body, { "Content-Type": "application/geo+json", ...headers });

/**
 * Sends an import through the app with the real database, running `meanwhile`
 * when the import starts writing its features (its second D1 batch: the first
 * claims the Idempotency-Key), before the write: a retry landing while the
 * first request is still running, made deterministic.
 */
async function importDuringWrite(
  who: Caller,
  body: unknown,
  key: string,
  meanwhile: () => Promise<unknown>,
): Promise<Response> {
  let batches = 0;
  // The app runs every request in a D1 session (http/middleware/d1-session.ts): the session's batch is the one held.
  const held = <T extends object>(database: T): T =>
    new Proxy(database, {
      get(target, property) {
        if (property === "batch") {
          return async (...args: Parameters<D1Database["batch"]>) => {
            if (++batches === 2) await meanwhile();
            return (target as unknown as D1Database).batch(...args);
          };
        }
        if (property === "withSession") {
          return (...args: Parameters<D1Database["withSession"]>) =>
            held((target as unknown as D1Database).withSession(...args));
        }
        const value: unknown = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  // The account's database, where the import writes (the directory too when it is the same one).
  const shard = await shardOf(who.accountId);
  const db = held(bindingNamed(env, shard));
  const request = new Request(new URL("/v3.0/pinpoints", BASE), {
    method: "POST",
    headers: {
      Authorization: `Bearer ${who.token}`,
      "Content-Type": "application/geo+json",
      "Idempotency-Key": key,
    },
    body: JSON.stringify(body),
  });
  const ctx = createExecutionContext();
  const response = await app.fetch(request, { ...env, [shard]: db }, ctx);
  await waitOnExecutionContext(ctx);
  expect(batches, "the import wrote through the held batch").toBeGreaterThanOrEqual(2);
  return response;
}

const idsOf = async (accountId: number) =>
  (
    await (
      await contentDb(accountId)
    )
      .prepare("SELECT id FROM pinpoints WHERE account_id = ? ORDER BY id")
      .bind(accountId)
      .all<{ id: number }>()
  ).results.map((row) => row.id);

/** A body sent as given, not serialized. */
const importText = (who: Caller, text: string) =>
  call("/v3.0/pinpoints", {
    method: "POST",
    headers: { Authorization: `Bearer ${who.token}`, "Content-Type": "application/geo+json" },
    body: text,
  });

const countOf = async (accountId: number) =>
  (await (
    await contentDb(accountId)
  )
    .prepare("SELECT count(*) AS n FROM pinpoints WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>())!.n;

async function expectInvalid(response: Response, pointers: string[]): Promise<Problem> {
  const body = await json<Problem>(response);
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(body.errors.map((e) => e.pointer)).toEqual(pointers);
  expect(body.detail).toMatch(/^Nothing was imported/);
  return body;
}

describe("POST /v3.0/pinpoints with a FeatureCollection", () => {
  it("creates every feature, answering the ids in order, each readable with its fields", async () => {
    const a = await caller();
    const features = [
      point(1, { address: "1 Main St", tags: ["a", " a ", "b"], description: "<p>Hi<script>x</script></p>" }),
      point(2, { altitude: 999, media_credits: "me", category: 1 }, [43.21, -22.95, 12.5]),
      point(3, { created_at: "ignored", id: 77 }, [-179.5, 89.5]),
    ];
    const response = await importBody(a, collection(features));
    const { ids } = await json<{ ids: number[] }>(response);
    expect(response.status).toBe(201);
    expect(ids).toHaveLength(3);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    const [first, second, third] = await Promise.all(ids.map(async (id) => json(await a.get(`/v3.0/pinpoints/${id}`))));
    expect(first).toMatchObject({
      name: "Place 1",
      address: "1 Main St",
      tags: ["a", "b"],
      latitude: 0.5,
      longitude: -1,
    });
    expect(first!.description).not.toContain("script");
    // The geometry's altitude wins over a property of that name: coordinates are the location.
    expect(second).toMatchObject({
      latitude: -22.95,
      longitude: 43.21,
      altitude: 12.5,
      media_credits: "me",
      category: 1,
    });
    expect(third).toMatchObject({ id: ids[2], latitude: 89.5, longitude: -179.5, altitude: null });
    // Imported rows are in the search indexes like any other: text (description too) and box.
    const found = await json<{ results: { id: number }[] }>(await a.get("/v3.0/pinpoints?q=hi"));
    expect(found.results.map((p) => p.id)).toEqual([ids[0]]);
    const boxed = await json<{ results: { id: number }[] }>(await a.get("/v3.0/pinpoints?bbox=43,-23,44,-22"));
    expect(boxed.results.map((p) => p.id)).toEqual([ids[1]]);
  });

  it("imports 1,000 features in one request", async () => {
    const a = await caller();
    const response = await importBody(a, collection(Array.from({ length: 1000 }, (_, i) => point(i))));
    expect(response.status).toBe(201);
    const { ids } = await json<{ ids: number[] }>(response);
    expect(new Set(ids).size).toBe(1000);
    expect(await countOf(a.accountId)).toBe(1000);
    const last = await json(await a.get(`/v3.0/pinpoints/${ids[999]}`));
    expect(last).toMatchObject({ name: "Place 999", longitude: -(999 % 180), latitude: (999 % 90) / 2 });
  });

  it("writes nothing when the 1,000th feature is bad, and names it", async () => {
    const a = await caller();
    await importBody(a, collection([point(0)]));
    const features = Array.from({ length: 1000 }, (_, i) => point(i));
    features[999] = point(999, {}, [10, 91]);
    await expectInvalid(await importBody(a, collection(features)), ["/features/999/geometry/coordinates/1"]);
    expect(await countOf(a.accountId)).toBe(1);
  });

  it("lists every bad feature with a pointer into the body", async () => {
    const a = await caller();
    const features: unknown[] = [
      point(0),
      point(1, { name: " " }),
      { type: "Feature", geometry: { type: "LineString", coordinates: [[0, 0]] }, properties: { name: "x" } },
      point(3, { tags: "not-a-list", "we/ird": 1 }, [200, 0]),
      point(4, { media_file: { content_type: "image/png", data: "" } }),
      "not a feature",
      point(6, {}, [1]),
      { type: "Feature", geometry: { type: "Point", coordinates: [1, 2] }, properties: null },
    ];
    const problem = await expectInvalid(await importBody(a, collection(features)), [
      "/features/1/properties/name",
      "/features/2/geometry/type",
      "/features/3/geometry/coordinates/0",
      "/features/3/properties/tags",
      "/features/4/properties/media_file",
      "/features/5",
      "/features/6/geometry/coordinates",
      "/features/7/properties/name",
    ]);
    expect(problem.errors[1]!.detail).toMatch(/only points/);
    expect(await countOf(a.accountId)).toBe(0);
  });

  it("refuses a category that does not exist, and may use another account's (categories are shared)", async () => {
    const a = await caller();
    const b = await caller();
    // Through the API, as a client makes one: shared categories are on every shard (docs/scaling.md).
    const created = await a.send("POST", "/v3.0/categories", {
      name: "Theirs",
      image_file: mediaFile("image/png", "theirs.png"),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const theirs = (await (
      await contentDb(b.accountId)
    )
      .prepare("SELECT * FROM categories WHERE id = ?")
      .bind((await json<{ id: number }>(created)).id)
      .first<Record<string, unknown>>())!;
    await expectInvalid(
      await importBody(b, collection([point(0, { category: theirs.id }), point(1, { category: 999_999_999 })])),
      ["/features/1/properties/category"],
    );
    expect(await countOf(b.accountId)).toBe(0);
    const response = await importBody(b, collection([point(0, { category: theirs.id })]));
    expect(response.status).toBe(201);
    const after = await (
      await contentDb(a.accountId)
    )
      .prepare("SELECT * FROM categories WHERE id = ?")
      .bind(theirs.id)
      .first();
    expect(after).toEqual(theirs);
    expect(await countOf(a.accountId)).toBe(0);
  });

  it("refuses 1,001 features, an empty collection and other documents", async () => {
    const a = await caller();
    await expectInvalid(await importBody(a, collection(Array.from({ length: 1001 }, (_, i) => point(i)))), [
      "/features",
    ]);
    await expectInvalid(await importBody(a, collection([])), ["/features"]);
    await expectInvalid(await importBody(a, point(0)), ["/type", "/features"]);
    const broken = await importText(a, '{"type": "FeatureCollection", "features": [');
    expect(broken.status).toBe(400);
    expect((await json<{ type: string }>(broken)).type).toBe("urn:poi-api:problem:malformed_json");
    expect(await countOf(a.accountId)).toBe(0);
  });

  it("refuses a 20 MB body before reading it (413)", async () => {
    const a = await caller();
    const features = Array.from({ length: 1000 }, (_, i) => point(i, { description: "x".repeat(20 * 1024) }));
    const big = JSON.stringify(collection(features));
    expect(big.length).toBeGreaterThan(20_000_000);
    const response = await importText(a, big);
    expect(response.status).toBe(413);
    expect(await countOf(a.accountId)).toBe(0);
  });

  it("parallel retries with one Idempotency-Key import once", async () => {
    const a = await caller();
    const key = crypto.randomUUID();
    const body = collection(Array.from({ length: 300 }, (_, i) => point(i)));
    const responses = await Promise.all(
      Array.from({ length: 16 }, () => importBody(a, body, { "Idempotency-Key": key })),
    );
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.every((s) => s === 201 || s === 409),
      statuses.join(),
    ).toBe(true);
    const firsts = responses.filter((r) => r.status === 201 && r.headers.get("Idempotent-Replayed") === null);
    expect(firsts).toHaveLength(1);
    const first = await firsts[0]!.text();
    for (const other of responses.filter((r) => r !== firsts[0])) {
      expect(await other.text()).toEqual(
        other.status === 201 ? first : expect.stringContaining("idempotency_key_in_use"),
      );
    }
    const { ids } = JSON.parse(first) as { ids: number[] };
    expect(ids).toHaveLength(300);
    expect(await idsOf(a.accountId)).toEqual(ids);
  });

  it("retries while the import is writing get 409; later ones replay it; another body under the key is a 422", async () => {
    const a = await caller();
    const key = crypto.randomUUID();
    const body = collection(Array.from({ length: 1000 }, (_, i) => point(i)));
    const retry = () => importBody(a, body, { "Idempotency-Key": key });
    let during: Response[] = [];
    const first = await importDuringWrite(a, body, key, async () => {
      during = await Promise.all(Array.from({ length: 16 }, retry));
    });
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = await first.text();
    expect(during).toHaveLength(16);
    for (const response of during) {
      expect(response.status).toBe(409);
      expect((await json<{ type: string }>(response)).type).toBe("urn:poi-api:problem:idempotency_key_in_use");
      expect(response.headers.get("Retry-After")).toBe("1");
    }
    const after = await Promise.all(Array.from({ length: 16 }, retry));
    for (const response of after) {
      expect(response.status).toBe(201);
      expect(response.headers.get("Idempotent-Replayed")).toBe("true");
      expect(response.headers.get("Content-Type")).toBe(first.headers.get("Content-Type"));
      expect(await response.text()).toBe(firstBody);
    }
    const { ids } = JSON.parse(firstBody) as { ids: number[] };
    expect(ids).toHaveLength(1000);
    expect(await idsOf(a.accountId)).toEqual(ids);

    const other = await importBody(a, collection([point(1000)]), { "Idempotency-Key": key });
    expect(other.status).toBe(422);
    expect((await json<{ type: string }>(other)).type).toBe("urn:poi-api:problem:idempotency_key_reused");
    expect(await idsOf(a.accountId)).toEqual(ids);
  });

  it("needs the write scope", async () => {
    const reader = await caller("read");
    expect((await importBody(reader, collection([point(0)]))).status).toBe(403);
  });
});
