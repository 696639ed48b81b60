/**
 * Idempotency keys on every POST (docs/offline-and-concurrency.md): replay without redoing the work,
 * 422 for a different request under the same key, 409 while the first is
 * running, keys scoped to the account, 24 h expiry cleaned by the cron.
 */
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { isAccountOperation, PEOPLE_ONLY } from "../src/auth/roles";
import { IDEMPOTENCY_TTL_MS } from "../src/http/middleware/idempotency";
import worker from "../src/index";
import { sealedPrefix, sealingKeys, unseal } from "../src/core/sealed";
import { openSecret } from "../src/webhooks/sealed-secrets";
import {
  call,
  caller,
  contentDb,
  createList,
  createPinpoint,
  fetchWith,
  json,
  personCaller,
  type Caller,
} from "./helpers";
import { mediaFile, sendDuringUpload } from "./media-fixtures";
import { openApiRequests, type Json } from "./openapi-requests";

let alice: Caller;
let bob: Caller;

beforeAll(async () => {
  alice = await caller();
  bob = await caller();
});

const count = async (table: string, accountId: number) =>
  (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`)
    .bind(accountId)
    .first<{ n: number }>())!.n;

const place = { name: "Retried", latitude: 10, longitude: 20 };

describe("Idempotency-Key", () => {
  it("a retried create replays the first response exactly and creates one pinpoint", async () => {
    const key = crypto.randomUUID();
    const before = await count("pinpoints", alice.accountId);
    const first = await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key });
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = await first.text();
    for (let i = 0; i < 3; i++) {
      const again = await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key });
      expect(again.status).toBe(201);
      expect(again.headers.get("Idempotent-Replayed")).toBe("true");
      for (const name of ["Location", "ETag", "Content-Type"]) {
        expect(again.headers.get(name), name).toBe(first.headers.get(name));
      }
      expect(await again.text()).toBe(firstBody);
    }
    expect(await count("pinpoints", alice.accountId)).toBe(before + 1);
    // A key in the quoted (structured field) form is the same key.
    const quoted = await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": `"${key}"` });
    expect(quoted.headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("dozens of parallel retries of one create make exactly one pinpoint", async () => {
    const key = crypto.randomUUID();
    const before = await count("pinpoints", alice.accountId);
    const responses = await Promise.all(
      Array.from({ length: 24 }, () => alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key })),
    );
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.every((s) => s === 201 || s === 409),
      statuses.join(),
    ).toBe(true);
    const created = responses.filter((r) => r.status === 201 && !r.headers.get("Idempotent-Replayed"));
    expect(created).toHaveLength(1);
    for (const r of responses.filter((r) => r.status === 409)) {
      expect((await json(r)).type).toBe("urn:poi-api:problem:idempotency_key_in_use");
      expect(r.headers.get("Retry-After")).toBe("1");
    }
    expect(await count("pinpoints", alice.accountId)).toBe(before + 1);
  });

  it("the same key with another body, path or method is a 422 and does nothing", async () => {
    const key = crypto.randomUUID();
    expect((await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key })).status).toBe(201);
    const before = await count("pinpoints", alice.accountId);
    const other = await alice.send("POST", "/v3.0/pinpoints", { ...place, name: "Other" }, { "Idempotency-Key": key });
    expect(other.status).toBe(422);
    expect((await json(other)).type).toBe("urn:poi-api:problem:idempotency_key_reused");
    const otherPath = await alice.send("POST", "/v3.0/lists", place, { "Idempotency-Key": key });
    expect(otherPath.status).toBe(422);
    expect(await count("pinpoints", alice.accountId)).toBe(before);
  });

  it("a second request while the first is still running is a 409", async () => {
    const key = crypto.randomUUID();
    const body = { ...place, media_file: mediaFile() };
    // The first request is held inside its upload while the second arrives.
    let second: Response | undefined;
    const { response: first } = await sendDuringUpload(
      alice,
      "POST",
      "/v3.0/pinpoints",
      body,
      async () => {
        second = await alice.send("POST", "/v3.0/pinpoints", body, { "Idempotency-Key": key });
      },
      { "Idempotency-Key": key },
    );
    expect(first.status).toBe(201);
    expect(second!.status).toBe(409);
    const third = await alice.send("POST", "/v3.0/pinpoints", body, { "Idempotency-Key": key });
    expect(third.headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("keys are per account: another account's identical key is another key", async () => {
    const key = crypto.randomUUID();
    const a = await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key });
    const b = await bob.send("POST", "/v3.0/pinpoints", { ...place, name: "Bob's" }, { "Idempotency-Key": key });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(b)).name).toBe("Bob's");
  });

  it("client errors are kept and replayed; a request without a key is never deduplicated", async () => {
    const key = crypto.randomUUID();
    const bad = await alice.send("POST", "/v3.0/pinpoints", { name: "No coordinates" }, { "Idempotency-Key": key });
    expect(bad.status).toBe(400);
    const again = await alice.send("POST", "/v3.0/pinpoints", { name: "No coordinates" }, { "Idempotency-Key": key });
    expect(again.status).toBe(400);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("Content-Type")).toBe("application/problem+json");
    const before = await count("pinpoints", alice.accountId);
    await createPinpoint(alice, place);
    await createPinpoint(alice, place);
    expect(await count("pinpoints", alice.accountId)).toBe(before + 2);
  });

  it("membership batches replay too", async () => {
    const list = await createList(alice);
    const pinpoint = await createPinpoint(alice);
    const key = crypto.randomUUID();
    const path = `/v3.0/lists/${list.id}/pinpoints`;
    const first = await alice.send("POST", path, [{ id: pinpoint.id }], { "Idempotency-Key": key });
    expect(first.status).toBe(200);
    const tag = (await alice.get(`/v3.0/lists/${list.id}`)).headers.get("ETag");
    const again = await alice.send("POST", path, [{ id: pinpoint.id }], { "Idempotency-Key": key });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    expect((await alice.get(`/v3.0/lists/${list.id}`)).headers.get("ETag")).toBe(tag);
  });

  it("rejects malformed keys with 400 and ignores keys on other methods", async () => {
    for (const key of ["", "   ", "a".repeat(256), "a b"]) {
      const response = await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key });
      expect(response.status, JSON.stringify(key)).toBe(400);
    }
    const pinpoint = await createPinpoint(alice);
    const key = crypto.randomUUID();
    const put1 = await alice.send("PUT", `/v3.0/pinpoints/${pinpoint.id}`, { name: "A" }, { "Idempotency-Key": key });
    const put2 = await alice.send("PUT", `/v3.0/pinpoints/${pinpoint.id}`, { name: "B" }, { "Idempotency-Key": key });
    expect([put1.status, put2.status]).toEqual([200, 200]);
  });

  it("keys expire after 24 hours: then the key runs anew, and the cron deletes expired keys", async () => {
    const key = crypto.randomUUID();
    expect((await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key })).status).toBe(201);
    // 24 hours later (moved in the table: a token would not live that long).
    await env.DB.prepare("UPDATE idempotency_keys SET expires_at = expires_at - ? WHERE account_id = ? AND key = ?")
      .bind(IDEMPOTENCY_TTL_MS, alice.accountId, key)
      .run();
    const before = await count("pinpoints", alice.accountId);
    const later = await alice.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": key });
    expect(later.status).toBe(201);
    expect(later.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await count("pinpoints", alice.accountId)).toBe(before + 1);

    const stored = () => count("idempotency_keys", alice.accountId);
    expect(await stored()).toBeGreaterThan(0);
    await worker.scheduled(
      createScheduledController({ scheduledTime: Date.now() + IDEMPOTENCY_TTL_MS + 1000, cron: "17 * * * *" }),
      env,
    );
    expect(await stored()).toBe(0);
  });
});

describe("every POST that takes an Idempotency-Key, as the OpenAPI document names them", () => {
  /** A request as sent: the body, if any, with its media type. */
  type Sent = { label: string; headers: Record<string, string>; body?: string };

  /** The ways a POST comes: without a body, with an empty one (`Content-Length: 0`), and with each example. */
  async function ways(requests: ReturnType<typeof openApiRequests>, path: string, operation: Json): Promise<Sent[]> {
    const examples = Object.entries(
      (operation.requestBody?.content ?? { "application/json": { example: {} } }) as Json,
    );
    return [
      { label: "no body", headers: {} },
      { label: "an empty body", headers: {}, body: "" },
      { label: "an empty body labelled JSON", headers: { "Content-Type": "application/json" }, body: "" },
      ...(await Promise.all(
        examples.map(async ([type, { example }]) => ({
          label: `a ${type} body`,
          headers: { "Content-Type": type },
          body: JSON.stringify(await requests.withOwnIds(path, example)),
        })),
      )),
    ];
  }

  it("works with and without a body, and replays its first answer", async () => {
    const document = await (await call("/v3.0/openapi.json")).json<Json>();
    const who = await caller();
    // What only a person may call is sent by the account's owner: a client's token is refused before the key.
    const owner = await personCaller("owner", { accountId: who.accountId });
    const tokenFor = (id: string) => (isAccountOperation(id) && PEOPLE_ONLY.has(id) ? owner : who).token;
    const requests = openApiRequests(document, who);
    const posts = requests
      .operations()
      .filter(
        ([method, , operation]) =>
          method === "post" &&
          (operation.parameters ?? []).some((p: Json) => requests.resolved(p).name === "Idempotency-Key"),
      );
    expect(posts.map(([, path]) => path)).toEqual(
      expect.arrayContaining(["/v3.0/pinpoints", "/v3.0/lists/{id}/pinpoints", "/v3.0/webhooks/{id}/rotate"]),
    );
    for (const [, path, operation] of posts) {
      const url = await requests.urlOf(path, operation);
      for (const { label, headers, body } of await ways(requests, path, operation)) {
        const key = crypto.randomUUID();
        const send = () =>
          fetchWith({}, url, {
            method: "POST",
            headers: { Authorization: `Bearer ${tokenFor(operation.operationId)}`, "Idempotency-Key": key, ...headers },
            body,
          });
        const first = await send();
        const text = await first.text();
        const where = `POST ${url} with ${label}: ${first.status} ${text.slice(0, 200)}`;
        expect(first.status, where).toBeLessThan(500);
        expect(first.headers.get("Idempotent-Replayed"), where).toBeNull();
        const again = await send();
        expect(again.status, where).toBe(first.status);
        expect(await again.text(), where).toBe(text);
        // An empty document where one is needed is refused by the body rules, before the key is looked at
        // (src/auth/resource-app.ts): refused again the same way. Every other answer is kept and replayed.
        const refusedUnread = operation.requestBody && label === "an empty body labelled JSON";
        if (refusedUnread) expect(JSON.parse(text).type, where).toBe("urn:poi-api:problem:malformed_json");
        expect(again.headers.get("Idempotent-Replayed"), where).toBe(refusedUnread ? null : "true");
      }
    }
  });
});

describe("answers kept sealed", () => {
  type Row = { account_id: number; key: string; body: string | null; status: number | null };
  const rowsOf = async (accountId: number) =>
    (
      await (
        await contentDb(accountId)
      )
        .prepare("SELECT account_id, key, body, status FROM idempotency_keys WHERE account_id = ? ORDER BY key")
        .bind(accountId)
        .all<Row>()
    ).results;
  const context = (row: { account_id: number; key: string }) =>
    `idempotent answer of account ${row.account_id} key ${row.key}`;

  /** Sends `count` identical requests at once; the first answer and every 2xx, each with its headers. */
  async function race(who: Caller, path: string, body: unknown, key: string, count: number) {
    const responses = await Promise.all(
      Array.from({ length: count }, () => who.send("POST", path, body, { "Idempotency-Key": key })),
    );
    const answers = await Promise.all(
      responses.map(async (r) => ({ status: r.status, headers: r.headers, text: await r.text() })),
    );
    expect(
      answers.every((a) => a.status < 300 || a.status === 409),
      answers.map((a) => a.status).join(),
    ).toBe(true);
    const ok = answers.filter((a) => a.status < 300);
    expect(ok.filter((a) => a.headers.get("Idempotent-Replayed") === null)).toHaveLength(1);
    return ok;
  }

  it("keeps answers that carry a secret sealed, and replays them no-store, however many retries race", async () => {
    const owner = await caller();
    const keys = await sealingKeys(env);
    const cases = [
      { path: "/v3.0/keys", body: { name: "map" }, secret: (answer: Record<string, string>) => answer.key! },
      {
        path: "/v3.0/webhooks",
        body: { url: "https://hooks.example.com/sealed", events: ["*"] },
        secret: (answer: Record<string, string>) => answer.secret!,
      },
    ];
    const webhookIds: number[] = [];
    for (const { path, body, secret } of cases) {
      const key = crypto.randomUUID();
      const ok = await race(owner, path, body, key, 16);
      const again = await owner.send("POST", path, body, { "Idempotency-Key": key });
      expect(again.headers.get("Idempotent-Replayed")).toBe("true");
      const answers = [...ok, { status: again.status, headers: again.headers, text: await again.text() }];
      for (const answer of answers) {
        expect(answer.status).toBe(201);
        expect(answer.headers.get("Cache-Control"), path).toBe("no-store");
        expect(answer.text).toBe(answers[0]!.text);
      }
      const value = secret(JSON.parse(answers[0]!.text) as Record<string, string>);
      if (path === "/v3.0/webhooks") webhookIds.push((JSON.parse(answers[0]!.text) as { id: number }).id);
      const row = (await rowsOf(owner.accountId)).find((r) => r.key === key)!;
      expect(row.body!.startsWith(sealedPrefix(keys.current))).toBe(true);
      expect(row.body).not.toContain(value);
      expect(await unseal(keys, context(row), row.body!)).toBe(answers[0]!.text);
    }
    // One key and one webhook made, whatever the retries.
    const made = await env.DB.prepare("SELECT count(*) AS n FROM publishable_keys WHERE account_id = ?")
      .bind(owner.accountId)
      .first<{ n: number }>();
    expect(made!.n).toBe(1);
    const webhooks = await (
      await contentDb(owner.accountId)
    )
      .prepare("SELECT count(*) AS n FROM webhooks WHERE account_id = ?")
      .bind(owner.accountId)
      .first<{ n: number }>();
    expect(webhooks!.n).toBe(1);

    // A rotation retried: one rotation, its secret replayed no-store.
    const key = crypto.randomUUID();
    const path = `/v3.0/webhooks/${webhookIds[0]}/rotate`;
    const ok = await race(owner, path, undefined, key, 8);
    for (const answer of ok) expect(answer.headers.get("Cache-Control")).toBe("no-store");
    expect(new Set(ok.map((a) => a.text)).size).toBe(1);
    const rotated = (JSON.parse(ok[0]!.text) as { secret: string }).secret;
    const webhook = await (
      await contentDb(owner.accountId)
    )
      .prepare("SELECT secret FROM webhooks WHERE id = ?")
      .bind(webhookIds[0])
      .first<{ secret: string }>();
    expect(await openSecret(keys, owner.accountId, webhook!.secret)).toBe(rotated);
    const row = (await rowsOf(owner.accountId)).find((r) => r.key === key)!;
    expect(row.body).not.toContain(rotated);

    // Every answer is sealed, those without a secret too (another account writes here: the webhook
    // above delivers nothing); theirs replay as they were first sent.
    const writer = await caller();
    const placeKey = crypto.randomUUID();
    const first = await writer.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": placeKey });
    const replay = await writer.send("POST", "/v3.0/pinpoints", place, { "Idempotency-Key": placeKey });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(replay.headers.get("Cache-Control")).toBe(first.headers.get("Cache-Control"));
    expect(first.headers.get("Cache-Control")).toBe("private");
    const stored = [...(await rowsOf(owner.accountId)), ...(await rowsOf(writer.accountId))];
    expect(stored).toHaveLength(4);
    for (const row of stored) {
      expect(row.body!.startsWith(sealedPrefix(keys.current)), row.key).toBe(true);
      expect(row.body).not.toContain(place.name);
    }
  });

  it("replays answers stored plain before sealing, and the cron seals every one of them, in batches", async () => {
    const keys = await sealingKeys(env);
    // A real answer, then stored back as it was before answers were sealed...
    const key = crypto.randomUUID();
    const first = await alice.send("POST", "/v3.0/keys", { name: "legacy" }, { "Idempotency-Key": key });
    expect(first.status).toBe(201);
    const firstText = await first.text();
    const aliceDb = await contentDb(alice.accountId);
    await aliceDb
      .prepare("UPDATE idempotency_keys SET body = ? WHERE account_id = ? AND key = ?")
      .bind(firstText, alice.accountId, key)
      .run();
    // ...and more than two batches of others, as the database held them.
    const legacy = Array.from({ length: 250 }, (_, i) => ({
      key: `legacy-${String(i).padStart(4, "0")}`,
      body: JSON.stringify({ id: i, key: `pk_plain_${i}_${crypto.randomUUID()}` }),
    }));
    const bobDb = await contentDb(bob.accountId);
    await bobDb
      .prepare(
        `INSERT INTO idempotency_keys (account_id, key, fingerprint, status, headers, body, created_at, expires_at)
          SELECT ?1, value ->> 'key', 'legacy', 201, '[]', value ->> 'body', ?2, ?3 FROM json_each(?4)`,
      )
      .bind(bob.accountId, Date.now(), Date.now() + IDEMPOTENCY_TTL_MS, JSON.stringify(legacy))
      .run();

    // Plain, it replays as it is.
    const replay = await alice.send("POST", "/v3.0/keys", { name: "legacy" }, { "Idempotency-Key": key });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await replay.text()).toBe(firstText);

    // The cron finds them through the index that holds exactly them.
    const plan = await bobDb
      .prepare(
        "EXPLAIN QUERY PLAN SELECT account_id, key, fingerprint, body FROM idempotency_keys WHERE substr(body, 1, 10) <> 'sealed:v1:' LIMIT 100",
      )
      .all<{ detail: string }>();
    expect(plan.results.map((r) => r.detail).join()).toContain("idempotency_keys_plain_idx");
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), env);

    const expected = new Map<string, string>([[`${alice.accountId} ${key}`, firstText]]);
    for (const row of legacy) expected.set(`${bob.accountId} ${row.key}`, row.body);
    const rows = [...(await rowsOf(alice.accountId)), ...(await rowsOf(bob.accountId))].filter((r) =>
      expected.has(`${r.account_id} ${r.key}`),
    );
    expect(rows).toHaveLength(expected.size);
    for (const row of rows) {
      expect(row.body!.startsWith(sealedPrefix(keys.current)), row.key).toBe(true);
      expect(await unseal(keys, context(row), row.body!)).toBe(expected.get(`${row.account_id} ${row.key}`));
    }
    const left = await bobDb
      .prepare("SELECT count(*) AS n FROM idempotency_keys WHERE substr(body, 1, 10) <> 'sealed:v1:'")
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
    // Sealed, it still replays what was first answered.
    const sealed = await alice.send("POST", "/v3.0/keys", { name: "legacy" }, { "Idempotency-Key": key });
    expect(sealed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await sealed.text()).toBe(firstText);
  });
});
