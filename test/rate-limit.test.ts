/**
 * Rate limits (src/http/middleware/rate-limit.ts) with the real Workers Rate Limiting
 * binding as Miniflare runs it: per client id on every authenticated route;
 * on the token endpoint per source address before the secret is checked and
 * per client id on tokens issued; 429 problem details with Retry-After, and
 * the RateLimit fields. The bursts run on the small limiters of the test
 * configuration (test/helpers.ts `smallLimits`); the limits wrangler.toml
 * states are checked against its own bindings.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { app } from "../src/app";
import { defaults, parseConfig, type Config, type RateLimit } from "../src/core/config";
import { addressKey } from "../src/http/middleware/rate-limit";
import {
  BASE,
  basic,
  call,
  caller,
  createClient,
  fetchWith,
  smallLimits,
  windowWithRoom,
  type Caller,
  type TestClient,
} from "./helpers";

const CLIENT_POLICY = "client;q=1200;w=60";
const TOKEN_POLICY = "token-address;q=30;w=60, token-client;q=60;w=60";

const SMALL = smallLimits();
/** The small limits as the service reads them from its [vars]. */
const limits = parseConfig(SMALL).rateLimits;
const policy = (name: string, { limit, period }: RateLimit) => `${name};q=${limit};w=${period}`;

/** A request to the app running on the small limiters. */
const send = (path: string, init: RequestInit = {}) => fetchWith(SMALL, path, init);
const sendAs = (who: Caller, method: string, path: string, body?: unknown) =>
  send(path, {
    method,
    headers: { Authorization: `Bearer ${who.token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Sends `count` requests, `batch` at a time, and returns their statuses in order. */
async function burst(count: number, request: () => Promise<Response>, batch: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += batch) {
    const responses = await Promise.all(Array.from({ length: Math.min(batch, count - sent) }, request));
    for (const response of responses) {
      statuses.push(response.status);
      await response.body?.cancel();
    }
  }
  return statuses;
}

const countOf = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

/** A token request, on the small limiters unless `via` says otherwise. */
function tokenRequest(
  client: TestClient,
  address?: string,
  secret = client.clientSecret,
  via: (path: string, init: RequestInit) => Promise<Response> = send,
): Promise<Response> {
  return via("/v3.0/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: basic(client.clientId, secret),
      "Content-Type": "application/x-www-form-urlencoded",
      ...(address ? { "CF-Connecting-IP": address } : {}),
    },
    body: new URLSearchParams({ grant_type: "client_credentials" }),
  });
}

async function expectTooMany(response: Response, policies: string, wait: number): Promise<void> {
  expect(response.status).toBe(429);
  expect(response.headers.get("Content-Type")).toBe("application/problem+json");
  expect(response.headers.get("Retry-After")).toBe(String(wait));
  expect(response.headers.get("RateLimit")).toBe(policies);
  const body = await response.json<{ type: string; status: number; detail: string }>();
  expect(body.type).toBe("urn:poi-api:problem:too_many_requests");
  expect(body.status).toBe(429);
  expect(body.detail).toContain(`retry after ${wait} seconds`);
}

/** The limits of a configuration under the names of the bindings that enforce them. */
const byBinding = (rateLimits: Config["rateLimits"]) => ({
  CLIENT_LIMITER: rateLimits.client,
  PUBLIC_LIMITER: rateLimits.public,
  TOKEN_LIMITER: rateLimits.token,
  TOKEN_ADDRESS_LIMITER: rateLimits.tokenAddress,
  SIGN_IN_ADDRESS_LIMITER: rateLimits.signInAddress,
  SIGN_IN_EMAIL_LIMITER: rateLimits.signInEmail,
});

describe("configuration", () => {
  it("reads each limit as <requests>/<seconds> and falls back to its default when malformed", () => {
    const client = (value: string | undefined) => parseConfig({ RATE_LIMIT_CLIENT: value }).rateLimits.client;
    expect(client("500/10")).toEqual({ limit: 500, period: 10 });
    expect(client(" 7 / 60 ")).toEqual({ limit: 7, period: 60 });
    for (const bad of [undefined, "", "0/60", "-1/60", "100/30", "100", "1.5/60", "x/60", "100/60/60"]) {
      expect(client(bad), String(bad)).toEqual(defaults.rateLimits.client);
    }
  });

  it("states in [vars] exactly the limits the [[ratelimits]] bindings enforce", () => {
    const bindings = Object.fromEntries(env.TEST_RATE_LIMIT_BINDINGS.map((b) => [b.name, b.simple]));
    const { rateLimits } = parseConfig(env as unknown as Record<string, unknown>);
    expect(rateLimits).toEqual(defaults.rateLimits);
    expect(bindings).toEqual(byBinding(rateLimits));
  });

  it("states the small limiters the tests below run on as their bindings enforce them", () => {
    const bindings = Object.fromEntries(env.TEST_SMALL_LIMITS.map((b) => [b.name, b.simple]));
    expect(bindings).toEqual(byBinding(limits));
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

  it("states both token policies on every token endpoint response, as configured", async () => {
    const client = await createClient();
    const configured = [
      [call, TOKEN_POLICY],
      [send, `${policy("token-address", limits.tokenAddress)}, ${policy("token-client", limits.token)}`],
    ] as const;
    for (const [via, expected] of configured) {
      const responses = [
        await tokenRequest(client, "192.0.2.201", client.clientSecret, via),
        await tokenRequest(client, "192.0.2.201", "wrong", via),
        await via("/v3.0/oauth2/token", { method: "POST" }),
      ];
      expect(responses.map((r) => r.status)).toEqual([200, 401, 400]);
      for (const response of responses) {
        expect(response.headers.get("RateLimit-Policy")).toBe(expected);
        await response.body?.cancel();
      }
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
  it("answers 429 past the client's limit, and one client's burst does not limit another", async () => {
    const { limit, period } = limits.client;
    await windowWithRoom(5_000, period);
    const [a, b] = [await caller(), await caller()];
    const missing = (who: Caller) => () => sendAs(who, "GET", "/v3.0/pinpoints/999999999");
    // a's burst, with b's requests in between: b is never limited.
    const [statusesA, statusesB] = await Promise.all([
      burst(limit + 5, missing(a), 5),
      burst(Math.floor(limit / 2), missing(b), 2),
    ]);
    expect(countOf(statusesA, 404)).toBe(limit);
    expect(countOf(statusesA, 429)).toBe(5);
    expect(statusesB.every((s) => s === 404)).toBe(true);

    await expectTooMany(await sendAs(a, "GET", "/v3.0/pinpoints"), `client;r=0;t=${period}`, period);
    // Every method counts against the same client id, and so does a fresh token for it.
    const refused = await sendAs(a, "POST", "/v3.0/lists", { name: "x" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("RateLimit-Policy")).toBe(policy("client", limits.client));
    await refused.body?.cancel();
    const token = await tokenRequest(a, "192.0.2.240");
    expect(token.status).toBe(200);
    const { access_token } = await token.json<{ access_token: string }>();
    const again = await send("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${access_token}` } });
    expect(again.status).toBe(429);
    await again.body?.cancel();
    // Nothing was written by a refused request.
    expect((await sendAs(b, "GET", "/v3.0/lists")).status).toBe(200);
    const lists = await env.DB.prepare("SELECT COUNT(*) AS n FROM lists WHERE account_id = ?")
      .bind(a.accountId)
      .first<{ n: number }>();
    expect(lists!.n).toBe(0);
  });
});

describe("on the token endpoint", () => {
  it("limits requests from a source address, before the secret is checked", async () => {
    const { limit, period } = limits.tokenAddress;
    await windowWithRoom(3_000, period);
    const [client, other] = [await createClient(), await createClient()];
    // Wrong guesses from one address use up that address's allowance...
    const guesses = await burst(limit, () => tokenRequest(client, "198.51.100.7", "guess"), limit);
    expect(guesses).toEqual(Array(limit).fill(401));
    // ...so from there even the right secret is refused, for any client,
    await expectTooMany(await tokenRequest(client, "198.51.100.7"), `token-address;r=0;t=${period}`, period);
    await expectTooMany(await tokenRequest(other, "198.51.100.7"), `token-address;r=0;t=${period}`, period);
    // while the client from another address is served.
    expect((await tokenRequest(client, "198.51.100.8")).status).toBe(200);
  });

  it("never refuses a client's right secret because others sent wrong ones", async () => {
    await windowWithRoom(3_000, limits.token.period);
    const client = await createClient();
    // More wrong secrets for this client id than the per-client limit, from several addresses, each
    // under the address limit.
    const perAddress = limits.tokenAddress.limit - 1;
    const addresses = Math.ceil((limits.token.limit + 1) / perAddress);
    const statuses: number[] = [];
    for (let host = 1; host <= addresses; host++) {
      statuses.push(...(await burst(perAddress, () => tokenRequest(client, `203.0.113.${host}`, "guess"), perAddress)));
    }
    expect(statuses.length).toBeGreaterThan(limits.token.limit);
    expect(statuses).toEqual(Array(statuses.length).fill(401));
    // The owner, from its own address, still gets its token.
    const response = await tokenRequest(client, "203.0.113.99");
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });

  it("limits the tokens issued to a client id, from any address", async () => {
    const { limit, period } = limits.token;
    await windowWithRoom(3_000, period);
    const [client, other] = [await createClient(), await createClient()];
    // The client's limit in tokens, from several addresses, each under the address limit.
    const perAddress = limits.tokenAddress.limit - 1;
    const statuses = await Promise.all(
      Array.from({ length: limit }, async (_, i) => {
        const response = await tokenRequest(client, `192.0.2.${1 + Math.floor(i / perAddress)}`);
        await response.body?.cancel();
        return response.status;
      }),
    );
    expect(statuses).toEqual(Array(limit).fill(200));
    await expectTooMany(await tokenRequest(client, "192.0.2.99"), `token-client;r=0;t=${period}`, period);
    // A refused secret is never counted against the client, and other clients are not affected.
    const wrong = await tokenRequest(client, "192.0.2.98", "guess");
    expect(wrong.status).toBe(401);
    await wrong.body?.cancel();
    expect((await tokenRequest(other, "192.0.2.99")).status).toBe(200);
  });

  it("counts an IPv6 /64 as one address", async () => {
    const { limit, period } = limits.tokenAddress;
    await windowWithRoom(3_000, period);
    const client = await createClient();
    const hosts = Array.from({ length: limit }, (_, i) => `2001:db8:a:b:${i.toString(16)}::1`);
    const statuses = await Promise.all(hosts.map((host) => tokenRequest(client, host, "guess")));
    expect(statuses.map((r) => r.status)).toEqual(Array(limit).fill(401));
    await Promise.all(statuses.map((r) => r.body?.cancel()));
    await expectTooMany(await tokenRequest(client, "2001:db8:a:b::ffff"), `token-address;r=0;t=${period}`, period);
    expect((await tokenRequest(client, "2001:db8:a:c::1")).status).toBe(200);
  });

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
