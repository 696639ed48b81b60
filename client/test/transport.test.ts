/**
 * The client's request handling against a fake fetch, where the service's
 * timing cannot be arranged: waits after `Retry-After`, retries that are safe
 * and those that are not, token sharing, renewal and replacement, and how
 * a publishable key is sent.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createPoiClient, retryAfterMs, type Fetch } from "poi-content-api-client";

const BASE = "https://api.example.test";

type Seen = { method: string; url: URL; headers: Headers; at: number };

/** A fake service: records every request and answers with `answer(request, n)` (n counts from 0). */
function fakeService(answer: (seen: Seen, n: number) => Response | Promise<Response>) {
  const seen: Seen[] = [];
  const fetch: Fetch = async (request) => {
    const entry = { method: request.method, url: new URL(request.url), headers: request.headers, at: Date.now() };
    seen.push(entry);
    return answer(entry, seen.length - 1);
  };
  return { seen, fetch, api: () => seen.filter((s) => !s.url.pathname.endsWith("/oauth2/token")) };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers });
const tokenAnswer = (token: string, expiresIn = 36000) =>
  json({ access_token: token, token_type: "Bearer", expires_in: expiresIn, scope: "read write" });
const tooMany = (retryAfter: string) =>
  json({ type: "urn:poi-api:problem:too_many_requests", status: 429 }, 429, { "Retry-After": retryAfter });

test("Retry-After is read as seconds or as an HTTP date", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  assert.equal(retryAfterMs("7", now), 7000);
  assert.equal(retryAfterMs(" 0 ", now), 0);
  assert.equal(retryAfterMs("Wed, 25 Nov 2026 12:00:03 GMT", now), 3000);
  assert.equal(retryAfterMs("Wed, 25 Nov 2026 11:00:00 GMT", now), 0);
  assert.equal(retryAfterMs("soon", now), undefined);
  assert.equal(retryAfterMs(null, now), undefined);
});

test("a 429 is retried after the seconds its Retry-After names, then the answer is returned", async () => {
  const service = fakeService((_, n) => (n < 2 ? tooMany("1") : json({ id: 1 })));
  const poi = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: service.fetch });
  const { data, response } = await poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: 1 } } });
  assert.equal(response.status, 200);
  assert.deepEqual(data, { id: 1 });
  assert.equal(service.seen.length, 3);
  assert.ok(service.seen[1]!.at - service.seen[0]!.at >= 990, "waited a second before the first retry");
  assert.ok(service.seen[2]!.at - service.seen[1]!.at >= 990, "waited a second before the second retry");
});

test("a 503 is retried as its Retry-After date says; without one, after a backoff", async () => {
  const inOneSecond = new Date(Date.now() + 1500).toUTCString();
  const service = fakeService((_, n) =>
    n === 0
      ? new Response(null, { status: 503, headers: { "Retry-After": inOneSecond } })
      : n === 1
        ? new Response(null, { status: 503 })
        : json({ results: [], next: null, previous: null }),
  );
  const poi = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: service.fetch });
  const { response } = await poi.GET("/v3.0/lists");
  assert.equal(response.status, 200);
  assert.equal(service.seen.length, 3);
  assert.ok(service.seen[1]!.at - service.seen[0]!.at >= 400);
  assert.ok(service.seen[2]!.at - service.seen[1]!.at >= 990, "backs off 1 s without Retry-After");
});

test("retries stop after the configured number, and never wait longer than allowed", async () => {
  const always = fakeService(() => tooMany("0"));
  const poi = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: always.fetch, retry: { retries: 2 } });
  const { error, response } = await poi.GET("/v3.0/lists");
  assert.equal(response.status, 429);
  assert.equal(error?.type, "urn:poi-api:problem:too_many_requests");
  assert.equal(always.seen.length, 3);

  const long = fakeService(() => tooMany("3600"));
  const started = Date.now();
  const patient = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: long.fetch });
  assert.equal((await patient.GET("/v3.0/lists")).response.status, 429);
  assert.equal(long.seen.length, 1, "an hour is longer than maxDelaySeconds: answered at once");
  assert.ok(Date.now() - started < 500);
});

test("every POST gets its own Idempotency-Key, kept across retries; a network failure is retried only with one", async () => {
  const service = fakeService((seen, n) => {
    if (n === 0) throw new TypeError("fetch failed");
    return json({ id: n }, seen.method === "POST" ? 201 : 200);
  });
  const poi = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: service.fetch });
  const body = { name: "Café", latitude: 48.85, longitude: 2.35 };
  assert.equal((await poi.POST("/v3.0/pinpoints", { body })).response.status, 201);
  assert.equal((await poi.POST("/v3.0/pinpoints", { body })).response.status, 201);
  const keys = service.seen.map((s) => s.headers.get("Idempotency-Key"));
  assert.equal(keys.length, 3);
  assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
  assert.equal(keys[1], keys[0], "the retry repeats the key");
  assert.notEqual(keys[2], keys[0], "another call, another key");

  const given = fakeService(() => json({ id: 1 }, 201));
  const own = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: given.fetch });
  await own.POST("/v3.0/pinpoints", { body, params: { header: { "Idempotency-Key": "mine" } } });
  assert.equal(given.seen[0]!.headers.get("Idempotency-Key"), "mine");

  const failing = fakeService(() => {
    throw new TypeError("fetch failed");
  });
  const without = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: failing.fetch, idempotencyKeys: false });
  await assert.rejects(without.POST("/v3.0/pinpoints", { body }), TypeError);
  assert.equal(failing.seen.length, 1, "a POST without a key could be done twice: not retried");
  assert.equal(failing.seen[0]!.headers.get("Idempotency-Key"), null);
});

test("concurrent requests share one token, which is renewed before it expires", async () => {
  let issued = 0;
  const service = fakeService((seen) =>
    seen.url.pathname === "/v3.0/oauth2/token" ? tokenAnswer(`token-${++issued}`, 2) : json({ id: 1 }),
  );
  const poi = createPoiClient({
    baseUrl: BASE,
    credentials: { clientId: "id", clientSecret: "secret" },
    fetch: service.fetch,
  });
  const read = () => poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: 1 } } });
  await Promise.all(Array.from({ length: 20 }, read));
  assert.equal(issued, 1, "one token for twenty concurrent requests");
  const tokenRequest = service.seen[0]!;
  assert.equal(tokenRequest.method, "POST");
  assert.equal(tokenRequest.headers.get("Content-Type"), "application/x-www-form-urlencoded");
  assert.ok(service.api().every((s) => s.headers.get("Authorization") === "Bearer token-1"));
  // A 2-second token is renewed after half its lifetime.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  await read();
  assert.equal(issued, 2);
  assert.equal(service.api().at(-1)!.headers.get("Authorization"), "Bearer token-2");
});

test("a token refused as invalid is replaced once; a refused client secret throws TokenError", async () => {
  let issued = 0;
  const service = fakeService((seen) => {
    if (seen.url.pathname === "/v3.0/oauth2/token") return tokenAnswer(`token-${++issued}`);
    return seen.headers.get("Authorization") === "Bearer token-1"
      ? json({ status: 401 }, 401, { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"' })
      : json({ id: 1 });
  });
  const poi = createPoiClient({
    baseUrl: BASE,
    credentials: { clientId: "id", clientSecret: "s" },
    fetch: service.fetch,
  });
  const { response } = await poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: 1 } } });
  assert.equal(response.status, 200);
  assert.equal(issued, 2);

  const refusing = fakeService(() =>
    json({ error: "invalid_client", error_description: "unknown client or wrong secret" }, 401),
  );
  const wrong = createPoiClient({
    baseUrl: BASE,
    credentials: { clientId: "id", clientSecret: "x" },
    fetch: refusing.fetch,
  });
  await assert.rejects(wrong.GET("/v3.0/lists"), { name: "TokenError", status: 401, error: "invalid_client" });
});

test("a publishable key goes into the query, never into a header, and a next link keeps its own", async () => {
  const service = fakeService((seen) =>
    json({
      results: [{ id: seen.url.searchParams.has("cursor") ? 2 : 1 }],
      next: seen.url.searchParams.has("cursor") ? null : `${BASE}/v3.0/pinpoints?list=1&cursor=c&key=pk_test`,
      previous: null,
    }),
  );
  const poi = createPoiClient({ baseUrl: BASE, publishableKey: "pk_test", fetch: service.fetch });
  const ids: number[] = [];
  for await (const pinpoint of poi.paginate("/v3.0/pinpoints", { params: { query: { list: 1 } } }))
    ids.push(pinpoint.id);
  assert.deepEqual(ids, [1, 2]);
  assert.deepEqual(
    service.seen.map((s) => [s.url.searchParams.getAll("key"), s.headers.get("Authorization")]),
    [
      [["pk_test"], null],
      [["pk_test"], null],
    ],
  );
});

test("array parameters are sent as one comma-separated value, as the document declares them", async () => {
  const service = fakeService(() => json({ results: [], next: null, previous: null }));
  const poi = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: service.fetch });
  await poi.GET("/v3.0/pinpoints", {
    params: { query: { bbox: [1.5, 2, 3, 4], tags: ["a b", "c"], category: [1, 2] } },
  });
  const query = service.seen[0]!.url.searchParams;
  assert.equal(query.get("bbox"), "1.5,2,3,4");
  assert.equal(query.get("tags"), "a b,c");
  assert.equal(query.get("category"), "1,2");
});

test("paginate throws the problem of a refused page, the first or a later one", async () => {
  const problem = { type: "urn:poi-api:problem:invalid_cursor", title: "Bad cursor", status: 400, detail: "x" };
  const service = fakeService((seen) =>
    seen.url.searchParams.has("cursor")
      ? json(problem, 400)
      : seen.url.searchParams.get("limit") === "1"
        ? json({ results: [{ id: 1 }], next: `${BASE}/v3.0/lists?limit=1&cursor=c`, previous: null })
        : json({ ...problem, type: "urn:poi-api:problem:validation_failed" }, 400),
  );
  const poi = createPoiClient({ baseUrl: BASE, accessToken: "t", fetch: service.fetch });
  const read = async (limit: number) => {
    const ids: number[] = [];
    for await (const list of poi.paginate("/v3.0/lists", { params: { query: { limit } } })) ids.push(list.id);
    return ids;
  };
  await assert.rejects(read(1), { name: "ApiError", status: 400, problem });
  await assert.rejects(read(2), {
    name: "ApiError",
    status: 400,
    problem: { ...problem, type: "urn:poi-api:problem:validation_failed" },
  });
});
