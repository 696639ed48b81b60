/**
 * Rate limits (src/http/middleware/rate-limit.ts) with the real Workers Rate Limiting
 * binding as Miniflare runs it: per client id on every authenticated route;
 * on the token endpoint per source address before the secret is checked and
 * per client id on tokens issued; 429 problem details with Retry-After, and
 * the RateLimit fields.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../src/app";
import { defaults, parseConfig } from "../src/core/config";
import { addressKey } from "../src/http/middleware/rate-limit";
import { BASE, basic, call, caller, createClient, type Caller, type TestClient } from "./helpers";

const CLIENT_POLICY = "client;q=1200;w=60";
const TOKEN_POLICY = "token-address;q=30;w=60, token-client;q=60;w=60";

/**
 * Miniflare's limiter counts in windows aligned to the clock (Date.now() / period). A test that must see
 * one window from its first request to its last waits for a fresh one when less than `needed` ms are left.
 */
async function windowWithRoom(neededMs: number, periodMs = 60_000): Promise<void> {
  const left = periodMs - (Date.now() % periodMs);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/** Sends `count` requests, `batch` at a time, and returns their statuses in order. */
async function burst(count: number, send: () => Promise<Response>, batch = 100): Promise<number[]> {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += batch) {
    const responses = await Promise.all(Array.from({ length: Math.min(batch, count - sent) }, send));
    for (const response of responses) {
      statuses.push(response.status);
      await response.body?.cancel();
    }
  }
  return statuses;
}

const countOf = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

function tokenRequest(client: TestClient, address?: string, secret = client.clientSecret): Promise<Response> {
  return call("/v3.0/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: basic(client.clientId, secret),
      "Content-Type": "application/x-www-form-urlencoded",
      ...(address ? { "CF-Connecting-IP": address } : {}),
    },
    body: new URLSearchParams({ grant_type: "client_credentials" }),
  });
}

async function expectTooMany(response: Response, policies: string, wait = 60): Promise<void> {
  expect(response.status).toBe(429);
  expect(response.headers.get("Content-Type")).toBe("application/problem+json");
  expect(response.headers.get("Retry-After")).toBe(String(wait));
  expect(response.headers.get("RateLimit")).toBe(policies);
  const body = await response.json<{ type: string; status: number; detail: string }>();
  expect(body.type).toBe("urn:poi-api:problem:too_many_requests");
  expect(body.status).toBe(429);
  expect(body.detail).toContain(`retry after ${wait} seconds`);
}

describe("configuration", () => {
  it("reads each limit as <requests>/<seconds> and falls back to its default when malformed", () => {
    const limits = (value: string | undefined) => parseConfig({ RATE_LIMIT_CLIENT: value }).rateLimits.client;
    expect(limits("500/10")).toEqual({ limit: 500, period: 10 });
    expect(limits(" 7 / 60 ")).toEqual({ limit: 7, period: 60 });
    for (const bad of [undefined, "", "0/60", "-1/60", "100/30", "100", "1.5/60", "x/60", "100/60/60"]) {
      expect(limits(bad), String(bad)).toEqual(defaults.rateLimits.client);
    }
  });

  it("states in [vars] exactly the limits the [[ratelimits]] bindings enforce", () => {
    const bindings = Object.fromEntries(env.TEST_RATE_LIMIT_BINDINGS.map((b) => [b.name, b.simple]));
    const { rateLimits } = parseConfig(env as unknown as Record<string, unknown>);
    expect(rateLimits).toEqual(defaults.rateLimits);
    expect(bindings).toEqual({
      CLIENT_LIMITER: rateLimits.client,
      PUBLIC_LIMITER: rateLimits.public,
      TOKEN_LIMITER: rateLimits.token,
      TOKEN_ADDRESS_LIMITER: rateLimits.tokenAddress,
    });
  });
});

describe("the RateLimit-Policy field", () => {
  it("is on every response of an authenticated route, errors included, and readable cross-origin", async () => {
    const a = await caller();
    const origin = { Origin: "https://maps.example" };
    const responses = [
      await call("/v3.0/pinpoints", { headers: { ...origin, Authorization: `Bearer ${a.token}` } }),
      await call("/v3.0/pinpoints/999999999", { headers: { ...origin, Authorization: `Bearer ${a.token}` } }),
      await call("/v3.0/pinpoints?limit=abc", { headers: { ...origin, Authorization: `Bearer ${a.token}` } }),
      await call("/v3.0/pinpoints", { headers: origin }),
      await call("/v3.0/lists", { headers: { ...origin, Authorization: "Bearer nonsense" } }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 404, 400, 401, 401]);
    for (const response of responses) {
      expect(response.headers.get("RateLimit-Policy")).toBe(CLIENT_POLICY);
      // Only a 429 knows what is left (nothing); the binding tells no remaining count otherwise.
      expect(response.headers.get("RateLimit")).toBeNull();
      const exposed = response.headers.get("Access-Control-Expose-Headers")!.toLowerCase().split(/, */);
      expect(exposed).toEqual(expect.arrayContaining(["ratelimit", "ratelimit-policy", "retry-after"]));
      await response.body?.cancel();
    }
  });

  it("states both token policies on every token endpoint response", async () => {
    const client = await createClient();
    const responses = [
      await tokenRequest(client, "192.0.2.201"),
      await tokenRequest(client, "192.0.2.201", "wrong"),
      await call("/v3.0/oauth2/token", { method: "POST" }),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 401, 400]);
    for (const response of responses) {
      expect(response.headers.get("RateLimit-Policy")).toBe(TOKEN_POLICY);
      await response.body?.cancel();
    }
  });

  it("is not claimed by public routes, nor where the runtime has no limiter binding", async () => {
    for (const path of ["/v3.0/openapi.json", "/media/builtin/default-pin.png"]) {
      const response = await call(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("RateLimit-Policy"), path).toBeNull();
      await response.body?.cancel();
    }
    const a = await caller();
    const ctx = createExecutionContext();
    const unbound = { ...env, CLIENT_LIMITER: undefined } as unknown as Cloudflare.Env;
    const response = await app.fetch(
      new Request(new URL("/v3.0/pinpoints", BASE), { headers: { Authorization: `Bearer ${a.token}` } }),
      unbound,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    expect(response.headers.get("RateLimit-Policy")).toBeNull();
    await response.body?.cancel();
  });
});

describe("per client on authenticated routes", () => {
  it("answers 429 past 1,200 requests a minute, and one client's burst does not limit another", async () => {
    await windowWithRoom(30_000);
    const [a, b] = [await caller(), await caller()];
    const missing = (who: Caller) => () => who.get("/v3.0/pinpoints/999999999");
    // a's burst, with b's requests in between: b is never limited.
    const [statusesA, statusesB] = await Promise.all([burst(1250, missing(a)), burst(100, missing(b), 10)]);
    expect(countOf(statusesA, 404)).toBe(1200);
    expect(countOf(statusesA, 429)).toBe(50);
    expect(statusesB.every((s) => s === 404)).toBe(true);

    await expectTooMany(await a.get("/v3.0/pinpoints"), "client;r=0;t=60");
    // Every method counts against the same client id, and so does a fresh token for it.
    const refused = await a.send("POST", "/v3.0/lists", { name: "x" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("RateLimit-Policy")).toBe(CLIENT_POLICY);
    await refused.body?.cancel();
    const token = await tokenRequest(a);
    expect(token.status).toBe(200);
    const { access_token } = await token.json<{ access_token: string }>();
    const again = await call("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${access_token}` } });
    expect(again.status).toBe(429);
    await again.body?.cancel();
    // Nothing was written by a refused request.
    expect((await b.get("/v3.0/lists")).status).toBe(200);
    const lists = await env.DB.prepare("SELECT COUNT(*) AS n FROM lists WHERE account_id = ?")
      .bind(a.accountId)
      .first<{ n: number }>();
    expect(lists!.n).toBe(0);
  }, 120_000);
});

describe("on the token endpoint", () => {
  it("limits a source address to 30 requests a minute, before the secret is checked", async () => {
    await windowWithRoom(15_000);
    const [client, other] = [await createClient(), await createClient()];
    // Thirty wrong guesses from one address use up that address's allowance...
    const guesses = await burst(30, () => tokenRequest(client, "198.51.100.7", "guess"));
    expect(guesses).toEqual(Array(30).fill(401));
    // ...so from there even the right secret is refused, for any client,
    await expectTooMany(await tokenRequest(client, "198.51.100.7"), "token-address;r=0;t=60");
    await expectTooMany(await tokenRequest(other, "198.51.100.7"), "token-address;r=0;t=60");
    // while the client from another address is served.
    expect((await tokenRequest(client, "198.51.100.8")).status).toBe(200);
  }, 60_000);

  it("never refuses a client's right secret because others sent wrong ones", async () => {
    await windowWithRoom(15_000);
    const client = await createClient();
    // More wrong secrets for this client id than the per-client limit, from several addresses.
    const statuses: number[] = [];
    for (let host = 1; host <= 3; host++) {
      statuses.push(...(await burst(25, () => tokenRequest(client, `203.0.113.${host}`, "guess"))));
    }
    expect(statuses).toEqual(Array(75).fill(401));
    // The owner, from its own address, still gets its token.
    const response = await tokenRequest(client, "203.0.113.99");
    expect(response.status).toBe(200);
    await response.body?.cancel();
  }, 60_000);

  it("limits a client id to 60 tokens issued a minute, from any address", async () => {
    await windowWithRoom(15_000);
    const [client, other] = [await createClient(), await createClient()];
    const statuses: number[] = [];
    for (let host = 1; host <= 3; host++) {
      statuses.push(...(await burst(20, () => tokenRequest(client, `192.0.2.${host}`))));
    }
    expect(statuses).toEqual(Array(60).fill(200));
    await expectTooMany(await tokenRequest(client, "192.0.2.99"), "token-client;r=0;t=60");
    // A refused secret is never counted against the client, and other clients are not affected.
    const wrong = await tokenRequest(client, "192.0.2.98", "guess");
    expect(wrong.status).toBe(401);
    await wrong.body?.cancel();
    expect((await tokenRequest(other, "192.0.2.99")).status).toBe(200);
  }, 60_000);

  it("counts an IPv6 /64 as one address", async () => {
    await windowWithRoom(15_000);
    const client = await createClient();
    const hosts = Array.from({ length: 30 }, (_, i) => `2001:db8:a:b:${i.toString(16)}::1`);
    const statuses = await Promise.all(hosts.map((host) => tokenRequest(client, host, "guess")));
    expect(statuses.map((r) => r.status)).toEqual(Array(30).fill(401));
    await Promise.all(statuses.map((r) => r.body?.cancel()));
    await expectTooMany(await tokenRequest(client, "2001:db8:a:b::ffff"), "token-address;r=0;t=60");
    expect((await tokenRequest(client, "2001:db8:a:c::1")).status).toBe(200);
  }, 60_000);

  it("keys addresses by IPv4 address and IPv6 /64, whatever the notation", () => {
    expect(addressKey("192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey(undefined)).toBe("unknown");
    for (const v6 of ["2001:db8:a:b::1", "2001:0DB8:000a:b:1:2:3:4", "2001:db8:a:b:ffff:ffff:ffff:ffff"]) {
      expect(addressKey(v6), v6).toBe("2001:db8:a:b::/64");
    }
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey("2001:db8::")).toBe("2001:db8:0:0::/64");
  });
});
