/**
 * Bearer access (CONTRACT "Clients, tokens, scopes", "Errors"): RFC 6750
 * challenges, token verification (signature, algorithm, key, expiry, shape),
 * scopes per method, the `access_token` query parameter (an empty one, or an
 * empty `key=`, being none), and revocation and rotation taking effect within
 * 60 seconds.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { FRESH_MS, MAX_AGE_MS } from "../src/auth/client-status";
import { base64urlDecode, base64urlEncode, utf8 } from "../src/core/crypto";
import { generateClientSecret, hashSecret } from "../src/core/secrets";
import { signingKeys, type SigningKey } from "../src/core/signing";
import { signToken, type TokenClaims } from "../src/auth/tokens";
import { clock } from "../src/core/clock";
import {
  BASE,
  call,
  caller,
  createClient,
  createPinpoint,
  expectProblem,
  requestToken,
  type Caller,
  type TestClient,
} from "./helpers";
import { openApiRequests, type Json } from "./openapi-requests";

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** Moves the service's clock `ms` ahead of real time. */
function advance(ms: number): void {
  const base = clock.now();
  const offset = base - realNow();
  clock.now = () => realNow() + offset + ms;
}

const REALM = 'Bearer realm="api"';

function withToken(token: string, init: RequestInit = {}): RequestInit {
  return { ...init, headers: { ...init.headers, Authorization: `Bearer ${token}` } };
}

function get(path: string, token: string): Promise<Response> {
  return call(path, withToken(token));
}

async function tokenFor(client: TestClient, form: Record<string, string> = {}): Promise<string> {
  const response = await requestToken(client, form);
  expect(response.status).toBe(200);
  return (await response.json<{ access_token: string }>()).access_token;
}

function decodePart(part: string): Record<string, unknown> {
  return JSON.parse(utf8.decode(base64urlDecode(part)!)) as Record<string, unknown>;
}

function encodePart(value: unknown): string {
  return base64urlEncode(utf8.encode(JSON.stringify(value)));
}

async function currentKey(): Promise<SigningKey> {
  return (await signingKeys(env)).current;
}

/** An HMAC key the service does not know; `kid` chosen by the caller. */
async function foreignKey(kid: string): Promise<SigningKey> {
  const raw = crypto.getRandomValues(new Uint8Array(32));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return { kid, key };
}

/** Claims for `client`, valid for an hour from the service's now. */
function claimsFor(client: TestClient, overrides: Partial<TokenClaims> = {}): TokenClaims {
  const iat = Math.floor(clock.now() / 1000);
  return {
    sub: client.clientId,
    acc: client.accountId,
    scope: client.scope,
    ver: 1,
    iat,
    exp: iat + 3600,
    ...overrides,
  };
}

/** HS256 over `header.payload` with the service's own key, so only the content under test is wrong. */
async function signRaw(header: unknown, payload: unknown): Promise<string> {
  const key = await currentKey();
  const input = `${encodePart(header)}.${encodePart(payload)}`;
  const mac = await crypto.subtle.sign("HMAC", key.key, utf8.encode(input));
  return `${input}.${base64urlEncode(new Uint8Array(mac))}`;
}

/** 401 whose challenge carries `error="invalid_token"` (RFC 6750 §3.1). */
async function expectInvalidToken(response: Response): Promise<void> {
  await expectProblem(response, 401);
  const challenge = response.headers.get("WWW-Authenticate");
  expect(challenge).toMatch(/^Bearer realm="api", /);
  expect(challenge).toContain('error="invalid_token"');
}

async function expectInsufficientScope(response: Response, needed: "read" | "write"): Promise<void> {
  await expectProblem(response, 403);
  const challenge = response.headers.get("WWW-Authenticate");
  expect(challenge).toMatch(/^Bearer realm="api", /);
  expect(challenge).toContain('error="insufficient_scope"');
  expect(challenge).toContain(`scope="${needed}"`);
}

async function expectOk(response: Response, status = 200): Promise<void> {
  expect(response.status, await response.clone().text()).toBe(status);
  await response.body?.cancel();
}

describe("bearer: no or unusable credentials", () => {
  it("answers 401 problem details with a bare challenge when no token is sent", async () => {
    for (const path of ["/v3.0/pinpoints", "/v3.0/pinpoints/1", "/v3.0/lists", "/v3.0/events/1"]) {
      const response = await call(path);
      const body = await expectProblem(response, 401);
      expect(body.type).toMatch(/unauthorized$/);
      expect(response.headers.get("WWW-Authenticate")).toBe(REALM);
    }
  });

  it("answers a write without a token with 401 too", async () => {
    const response = await call("/v3.0/pinpoints", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "x", latitude: 1, longitude: 1 }),
    });
    await expectProblem(response, 401);
    expect(response.headers.get("WWW-Authenticate")).toBe(REALM);
  });

  it("treats another scheme as no token: 401 with the bare challenge (RFC 6750 §3.1)", async () => {
    const client = await createClient();
    for (const header of [`Basic ${btoa(`${client.clientId}:${client.clientSecret}`)}`, "Token abc", "Digest x=y"]) {
      const response = await call("/v3.0/pinpoints", { headers: { Authorization: header } });
      await expectProblem(response, 401);
      expect(response.headers.get("WWW-Authenticate")).toBe(REALM);
    }
  });

  it("answers a Bearer header whose credentials are not a token with invalid_token", async () => {
    for (const header of ["Bearer", "Bearer ", "Bearer a b", "Bearer ab$cd", "Bearer =abc"]) {
      await expectInvalidToken(await call("/v3.0/pinpoints", { headers: { Authorization: header } }));
    }
  });

  it("accepts the scheme name in any case", async () => {
    const a = await caller();
    await expectOk(await call("/v3.0/pinpoints", { headers: { Authorization: `bearer ${a.token}` } }));
    await expectOk(await call("/v3.0/pinpoints", { headers: { Authorization: `BEARER ${a.token}` } }));
  });
});

describe("bearer: invalid tokens", () => {
  it("refuses a token with one payload character changed", async () => {
    const a = await caller();
    const [header, payload, signature] = a.token.split(".") as [string, string, string];
    const i = Math.floor(payload.length / 2);
    const flipped = payload.slice(0, i) + (payload[i] === "A" ? "B" : "A") + payload.slice(i + 1);
    await expectInvalidToken(await get("/v3.0/pinpoints", `${header}.${flipped}.${signature}`));
  });

  it("refuses a token whose payload was re-encoded with more scope", async () => {
    const reader = await caller("read");
    const [header, payload, signature] = reader.token.split(".") as [string, string, string];
    const claims = decodePart(payload);
    expect(claims.scope).toBe("read");
    const forged = `${header}.${encodePart({ ...claims, scope: "read write" })}.${signature}`;
    await expectInvalidToken(await get("/v3.0/pinpoints", forged));
    await expectInvalidToken(
      await call(
        "/v3.0/lists",
        withToken(forged, { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } }),
      ),
    );
  });

  it("refuses a token moved to another account", async () => {
    const a = await caller();
    const b = await caller();
    const [header, payload, signature] = a.token.split(".") as [string, string, string];
    const forged = `${header}.${encodePart({ ...decodePart(payload), acc: b.accountId })}.${signature}`;
    await expectInvalidToken(await get("/v3.0/pinpoints", forged));
  });

  it("refuses a token whose last character differs only in bits base64 ignores", async () => {
    const a = await caller();
    // 32 signature bytes are 43 characters: the last carries 2 unused bits, which atob() would ignore.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(a.token.at(-1)!);
    const respelled = a.token.slice(0, -1) + alphabet[last ^ 1];
    expect(base64urlDecode(respelled.split(".")[2]!)).toBeNull();
    await expectInvalidToken(await get("/v3.0/pinpoints", respelled));
    expect((await get("/v3.0/pinpoints", a.token)).status).toBe(200);
  });

  it("refuses a token with a changed signature", async () => {
    const a = await caller();
    const [header, payload, signature] = a.token.split(".") as [string, string, string];
    const bytes = base64urlDecode(signature)!;
    bytes[0] = bytes[0]! ^ 1;
    await expectInvalidToken(await get("/v3.0/pinpoints", `${header}.${payload}.${base64urlEncode(bytes)}`));
    await expectInvalidToken(await get("/v3.0/pinpoints", `${header}.${payload}.`));
  });

  it("refuses a token signed with another key under the service's kid", async () => {
    const client = await createClient();
    const key = await foreignKey((await currentKey()).kid);
    await expectInvalidToken(await get("/v3.0/pinpoints", await signToken(claimsFor(client), key)));
  });

  it("refuses a token signed with another key under an unknown kid", async () => {
    const client = await createClient();
    const key = await foreignKey("unknown-kid");
    await expectInvalidToken(await get("/v3.0/pinpoints", await signToken(claimsFor(client), key)));
  });

  it('refuses alg "none" and any algorithm other than HS256', async () => {
    const client = await createClient();
    const { kid } = await currentKey();
    const claims = claimsFor(client);
    const unsigned = `${encodePart({ alg: "none", typ: "at+jwt", kid })}.${encodePart(claims)}.`;
    await expectInvalidToken(await get("/v3.0/pinpoints", unsigned));
    // A MAC that is correct for the key still fails when the header names another algorithm.
    for (const alg of ["HS512", "RS256", "ES256", "none", "hs256"]) {
      await expectInvalidToken(await get("/v3.0/pinpoints", await signRaw({ alg, typ: "at+jwt", kid }, claims)));
    }
    // The control: the same construction with HS256 is accepted.
    await expectOk(await get("/v3.0/pinpoints", await signRaw({ alg: "HS256", typ: "at+jwt", kid }, claims)));
  });

  it('refuses a correctly signed token whose type is not "at+jwt"', async () => {
    const client = await createClient();
    const { kid } = await currentKey();
    const claims = claimsFor(client);
    // Signed with the right key and algorithm: only the type says it is not an access token.
    for (const typ of ["JWT", "jwt", "at+JWT", "", undefined]) {
      await expectInvalidToken(await get("/v3.0/pinpoints", await signRaw({ alg: "HS256", typ, kid }, claims)));
    }
    await expectOk(await get("/v3.0/pinpoints", await signRaw({ alg: "HS256", typ: "at+jwt", kid }, claims)));
  });

  it("refuses a correctly signed token whose claims are incomplete or mistyped", async () => {
    const client = await createClient();
    const { kid } = await currentKey();
    const header = { alg: "HS256", typ: "at+jwt", kid };
    const claims = claimsFor(client);
    const { acc: _acc, ...withoutAccount } = claims;
    for (const payload of [withoutAccount, { ...claims, acc: "1" }, { ...claims, exp: "never" }, [claims], "x", null]) {
      await expectInvalidToken(await get("/v3.0/pinpoints", await signRaw(header, payload)));
    }
  });

  it("refuses a correctly signed token for a client that does not exist", async () => {
    const client = await createClient();
    const token = await signToken(claimsFor({ ...client, clientId: "e".repeat(32) }), await currentKey());
    await expectInvalidToken(await get("/v3.0/pinpoints", token));
  });

  it("refuses malformed tokens", async () => {
    const a = await caller();
    const [header, payload] = a.token.split(".") as [string, string, string];
    for (const token of ["abc", "a.b", "a.b.c.d", `${header}.${payload}`, "...", "e30.e30.e30", `${a.token}.x`]) {
      await expectInvalidToken(await get("/v3.0/pinpoints", token));
    }
  });

  it("refuses an expired token and accepts it up to its last second", async () => {
    const client = await createClient();
    const token = await tokenFor(client);
    const { iat, exp } = decodePart(token.split(".")[1]!) as { iat: number; exp: number };
    expect(exp - iat).toBe(36000);
    clock.now = () => (exp - 1) * 1000;
    await expectOk(await get("/v3.0/pinpoints", token));
    clock.now = () => exp * 1000;
    await expectInvalidToken(await get("/v3.0/pinpoints", token));
  });

  it("refuses a token signed with an expiry in the past", async () => {
    const client = await createClient();
    const now = Math.floor(clock.now() / 1000);
    const token = await signToken(claimsFor(client, { iat: now - 100, exp: now - 1 }), await currentKey());
    await expectInvalidToken(await get("/v3.0/pinpoints", token));
  });

  it("puts the reason in the challenge without breaking its quoting", async () => {
    const response = await get("/v3.0/pinpoints", "abc");
    const challenge = response.headers.get("WWW-Authenticate")!;
    await response.body?.cancel();
    // Every quoted-string is closed: an even number of quotes, none inside error_description's value.
    expect(challenge.match(/"/g)?.length ?? 0).toBe(6);
    expect(challenge).toMatch(/error_description="[^"]*"$/);
  });
});

describe("bearer: scopes", () => {
  it("lets a read token GET and HEAD, and refuses POST, PUT and DELETE with insufficient_scope", async () => {
    const owner = await caller();
    const pinpoint = await createPinpoint(owner);
    const reader = await caller("read", owner.accountId);
    await expectOk(await reader.get("/v3.0/pinpoints"));
    await expectOk(await reader.get(`/v3.0/pinpoints/${pinpoint.id}`));
    await expectOk(await call("/v3.0/pinpoints", withToken(reader.token, { method: "HEAD" })));
    await expectInsufficientScope(
      await reader.send("POST", "/v3.0/pinpoints", { name: "x", latitude: 1, longitude: 1 }),
      "write",
    );
    await expectInsufficientScope(await reader.send("PUT", `/v3.0/pinpoints/${pinpoint.id}`, { name: "y" }), "write");
    await expectInsufficientScope(await reader.send("DELETE", `/v3.0/pinpoints/${pinpoint.id}`), "write");
    await expectInsufficientScope(await reader.send("POST", "/v3.0/lists", { name: "l" }), "write");
    // Nothing changed.
    const after = await owner.get(`/v3.0/pinpoints/${pinpoint.id}`);
    expect((await after.json<{ name: string }>()).name).toBe(pinpoint.name);
  });

  it("lets a write-only token change things and refuses it reads", async () => {
    const owner = await caller();
    const writer = await caller("write", owner.accountId);
    const created = await writer.send("POST", "/v3.0/pinpoints", { name: "w", latitude: 1, longitude: 1 });
    expect(created.status).toBe(201);
    const { id } = await created.json<{ id: number }>();
    await expectInsufficientScope(await writer.get("/v3.0/pinpoints"), "read");
    await expectInsufficientScope(await writer.get(`/v3.0/pinpoints/${id}`), "read");
    await expectOk(await writer.send("PUT", `/v3.0/pinpoints/${id}`, { name: "w2" }));
    await expectOk(await writer.send("DELETE", `/v3.0/pinpoints/${id}`), 204);
  });

  it("grants writes to a token narrowed from a read-write client only when asked", async () => {
    const client = await createClient();
    const writeOnly = await tokenFor(client, { scope: "write" });
    await expectInsufficientScope(await get("/v3.0/lists", writeOnly), "read");
    const readOnly = await tokenFor(client, { scope: "read" });
    await expectInsufficientScope(
      await call(
        "/v3.0/lists",
        withToken(readOnly, { method: "POST", body: '{"name":"n"}', headers: { "Content-Type": "application/json" } }),
      ),
      "write",
    );
  });
});

describe("bearer: access_token query parameter", () => {
  it("accepts the token in the query and marks the answer private, no-store", async () => {
    const a = await caller();
    const pinpoint = await createPinpoint(a);
    const page = await call(`/v3.0/pinpoints?access_token=${a.token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("Cache-Control")).toBe("private, no-store");
    const { results } = await page.json<{ results: { id: number }[] }>();
    expect(results.map((p) => p.id)).toContain(pinpoint.id);

    const one = await call(`/v3.0/pinpoints/${pinpoint.id}/?access_token=${encodeURIComponent(a.token)}`);
    expect(one.status).toBe(200);
    expect(one.headers.get("Cache-Control")).toBe("private, no-store");
    await one.body?.cancel();
  });

  it("works for writes too", async () => {
    const a = await caller();
    const response = await call(`/v3.0/lists?access_token=${a.token}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ name: "from query" }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("Cache-Control")).toBe("private, no-store");
    await response.body?.cancel();
  });

  it("keeps error answers to query-token requests out of caches too", async () => {
    const reader = await caller("read");
    const missing = await call(`/v3.0/pinpoints/999999999?access_token=${reader.token}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("Cache-Control")).toBe("private, no-store");
    await missing.body?.cancel();
    const denied = await call(`/v3.0/lists?access_token=${reader.token}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    await expectInsufficientScope(denied.clone(), "write");
    expect(denied.headers.get("Cache-Control")).toBe("private, no-store");
    const invalid = await call("/v3.0/pinpoints?access_token=garbage");
    expect(invalid.headers.get("Cache-Control")).toBe("private, no-store");
    await expectInvalidToken(invalid);
  });

  it("does not mark header-token answers private, no-store", async () => {
    const a = await caller();
    const response = await a.get("/v3.0/pinpoints");
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).not.toBe("private, no-store");
    await response.body?.cancel();
  });

  it("takes an empty access_token for no token: 401 with the bare challenge", async () => {
    const response = await call("/v3.0/pinpoints?access_token=");
    await expectProblem(response, 401);
    expect(response.headers.get("WWW-Authenticate")).toBe(REALM);
  });

  it("refuses a token in both the header and the query with 400 (RFC 6750 §2)", async () => {
    const a = await caller();
    const response = await call(`/v3.0/pinpoints?access_token=${a.token}`, withToken(a.token));
    const body = await expectProblem(response, 400);
    expect(body.detail).toMatch(/one credential/);
    expect(response.headers.get("WWW-Authenticate")).toContain('error="invalid_request"');
  });
});

describe("bearer: an empty query credential is none", () => {
  it("on every operation that takes a publishable key: key= or access_token= beside the header changes nothing", async () => {
    const document = await (await call("/v3.0/openapi.json")).json<Json>();
    const a = await caller();
    const requests = openApiRequests(document, a);
    const keyed = requests
      .operations()
      .filter(
        ([method, , operation]) =>
          method === "get" && (operation.security ?? []).some((s: Json) => "publishableKey" in s),
      );
    expect(keyed.map(([, path]) => path)).toEqual(
      expect.arrayContaining(["/v3.0/pinpoints", "/v3.0/lists", "/v3.0/tiles/{z}/{x}/{y}.mvt", "/v3.0/tiles.json"]),
    );
    for (const [, path, operation] of keyed) {
      const url = await requests.urlOf(path, operation);
      const withQuery = (extra: string) => `${url}${url.includes("?") ? "&" : "?"}${extra}`;
      const plain = await a.get(url);
      const expected = await plain.text();
      expect(plain.status, `${url}: ${expected.slice(0, 200)}`).toBe(200);
      for (const empty of ["key=", "access_token=", "key=&access_token="]) {
        const response = await a.get(withQuery(empty));
        const text = await response.text();
        expect(response.status, `${withQuery(empty)}: ${text.slice(0, 200)}`).toBe(200);
        // Links and tile URLs carry no empty credential on (they carry a non-empty one); a `self` link is
        // the request's own URL, as it was sent.
        const others = text.replaceAll(new URL(withQuery(empty), BASE).href, "");
        expect(others, withQuery(empty)).not.toMatch(/[?&](key|access_token)=(&|"|$)/);
        const anonymous = await call(withQuery(empty));
        await expectProblem(anonymous, 401);
        expect(anonymous.headers.get("WWW-Authenticate"), withQuery(empty)).toBe(REALM);
      }
    }
  });

  it("on the map page: an empty key= is a missing key", async () => {
    const missing = await call("/maps/1");
    const empty = await call("/maps/1?key=");
    const [a, b] = [await expectProblem(missing, 400), await expectProblem(empty, 400)];
    expect(b.errors).toEqual(a.errors);
  });
});

describe("revocation and rotation", () => {
  async function revoke(client: TestClient): Promise<void> {
    await env.DB.prepare("UPDATE clients SET revoked_at = ? WHERE id = ?").bind(Date.now(), client.clientId).run();
  }

  /** A new secret, as the registration tool's rotate does: new hash, version + 1. */
  async function rotate(client: TestClient): Promise<TestClient> {
    const clientSecret = generateClientSecret();
    await env.DB.prepare("UPDATE clients SET secret_hash = ?, secret_version = secret_version + 1 WHERE id = ?")
      .bind(await hashSecret(clientSecret), client.clientId)
      .run();
    return { ...client, clientSecret };
  }

  it("keeps the cache windows the contract allows (revocation within 60 s)", () => {
    expect(FRESH_MS).toBeLessThan(MAX_AGE_MS);
    expect(MAX_AGE_MS).toBeLessThanOrEqual(60_000);
  });

  it("a revoked client's token works while the cache is fresh and fails 60 s later", async () => {
    const a: Caller = await caller();
    await expectOk(await a.get("/v3.0/pinpoints")); // fills the per-isolate cache
    await revoke(a);
    await expectOk(await a.get("/v3.0/pinpoints"));
    advance(MAX_AGE_MS);
    await expectInvalidToken(await a.get("/v3.0/pinpoints"));
    await expectInvalidToken(await a.send("POST", "/v3.0/lists", { name: "after revocation" }));
  });

  it("a revoked client's token fails after a background refresh once the entry is stale", async () => {
    const a = await caller();
    await expectOk(await a.get("/v3.0/pinpoints"));
    await revoke(a);
    advance(FRESH_MS + 1000);
    // Stale but not expired: answered from the cache while the refresh runs in the background (which
    // the caller's request waits for, test/helpers.ts `fetchWith`)...
    await expectOk(await a.get("/v3.0/pinpoints"));
    // ...so the next request sees the revocation.
    await expectInvalidToken(await a.get("/v3.0/pinpoints"));
  });

  it("a revoked client cannot get a new token", async () => {
    const client = await createClient();
    await revoke(client);
    expect((await requestToken(client)).status).toBe(401);
  });

  it("rotation: the old secret is refused, the new one works at once, old tokens fail within 60 s", async () => {
    const client = await createClient();
    const old = await tokenFor(client);
    await expectOk(await get("/v3.0/pinpoints", old));
    const rotated = await rotate(client);

    const stale = await requestToken(client);
    expect(stale.status).toBe(401);
    expect((await stale.json<{ error: string }>()).error).toBe("invalid_client");

    const fresh = await tokenFor(rotated);
    expect(decodePart(fresh.split(".")[1]!).ver).toBe(2);
    // Usable immediately, although the cache still held the old version.
    await expectOk(await get("/v3.0/pinpoints", fresh));
    advance(MAX_AGE_MS);
    await expectInvalidToken(await get("/v3.0/pinpoints", old));
    await expectOk(await get("/v3.0/pinpoints", fresh));
  });

  it("rotation alone (no new token used) invalidates old tokens once the cache expires", async () => {
    const client = await createClient();
    const old = await tokenFor(client);
    await expectOk(await get("/v3.0/pinpoints", old));
    await rotate(client);
    advance(MAX_AGE_MS);
    await expectInvalidToken(await get("/v3.0/pinpoints", old));
  });

  it("a token from a client of another account sees only its own account", async () => {
    const a = await caller();
    const b = await caller();
    const pinpoint = await createPinpoint(a);
    const response = await b.get(`/v3.0/pinpoints/${pinpoint.id}`);
    await expectProblem(response, 403);
  });
});
