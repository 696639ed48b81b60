/**
 * Rotating the token signing key (docs/operations.md, "Rotating the signing
 * key"): tokens name their key by `kid`; after a rotation tokens and page
 * cursors encrypted with TOKEN_SIGNING_KEY_PREVIOUS keep working while it is set,
 * stop working once it is removed, and in any case stop at their own expiry,
 * at most one token lifetime after the rotation. Answers kept for idempotency
 * keys replay while the key they were sealed under is set, fail cleanly (410)
 * once it is gone, and outlive it once the cron sealed them again. Requests go
 * through the app with the secrets of each phase of a rotation.
 */
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { base64urlDecode, base64urlEncode, utf8 } from "../src/core/crypto";
import { signingKeys } from "../src/core/signing";
import { signToken } from "../src/auth/tokens";
import { clock } from "../src/core/clock";
import worker from "../src/index";
import { basic, createClient, fetchWith, type TestClient } from "./helpers";

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** Puts the service's clock at `ms` (epoch milliseconds). */
function setNow(ms: number): void {
  clock.now = () => ms;
}

const randomSecret = () => base64urlEncode(crypto.getRandomValues(new Uint8Array(48)));

/** The key before the rotation (the tests' configured key) and the one after it. */
const OLD = env.TOKEN_SIGNING_KEY!;
const NEW = randomSecret();

type Secrets = { key: string; previous?: string; ttl?: number };

/** The service as deployed with these secrets: requests go through the app with the bindings replaced. */
function fetchAs(secrets: Secrets, path: string, init: RequestInit = {}): Promise<Response> {
  const bindings: Record<string, unknown> = {
    TOKEN_SIGNING_KEY: secrets.key,
    TOKEN_SIGNING_KEY_PREVIOUS: secrets.previous,
  };
  if (secrets.ttl !== undefined) bindings.TOKEN_TTL_SECONDS = String(secrets.ttl);
  return fetchWith(bindings, path, init);
}

async function tokenFrom(secrets: Secrets, client: TestClient): Promise<string> {
  const response = await fetchAs(secrets, "/v3.0/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: basic(client.clientId, client.clientSecret),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json<{ access_token: string }>()).access_token;
}

function getWith(secrets: Secrets, path: string, token: string): Promise<Response> {
  return fetchAs(secrets, path, { headers: { Authorization: `Bearer ${token}` } });
}

function headerOf(token: string): Record<string, unknown> {
  return JSON.parse(utf8.decode(base64urlDecode(token.split(".")[0]!)!)) as Record<string, unknown>;
}

async function kidOf(secret: string): Promise<string> {
  return (await signingKeys({ ...env, TOKEN_SIGNING_KEY: secret })).current.kid;
}

async function expectStatus(response: Response, status: number): Promise<void> {
  expect(response.status, await response.clone().text()).toBe(status);
  await response.body?.cancel();
}

async function expectInvalidToken(response: Response, detail: RegExp): Promise<void> {
  const body = await response.json<{ detail: string }>();
  expect(response.status, JSON.stringify(body)).toBe(401);
  expect(response.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
  expect(body.detail).toMatch(detail);
}

const before: Secrets = { key: OLD };
const during: Secrets = { key: NEW, previous: OLD };
const after: Secrets = { key: NEW };

describe("signing key rotation", () => {
  it("names the signing key in each token's kid header, and only the current key signs", async () => {
    const client = await createClient();
    const [oldKid, newKid] = await Promise.all([kidOf(OLD), kidOf(NEW)]);
    expect(oldKid).not.toBe(newKid);
    // The kid is a digest of the key, not the key.
    expect(oldKid).not.toContain(OLD.slice(0, 8));

    expect(headerOf(await tokenFrom(before, client))).toEqual({ alg: "HS256", typ: "at+jwt", kid: oldKid });
    expect(headerOf(await tokenFrom(during, client)).kid).toBe(newKid);
    expect(headerOf(await tokenFrom(after, client)).kid).toBe(newKid);
  });

  it("accepts tokens of the previous key while it is set, and refuses them once it is removed", async () => {
    const client = await createClient();
    const oldToken = await tokenFrom(before, client);
    await expectStatus(await getWith(before, "/v3.0/pinpoints", oldToken), 200);

    // Rotated: KEY = new, PREVIOUS = old. Old and new tokens both work.
    const newToken = await tokenFrom(during, client);
    await expectStatus(await getWith(during, "/v3.0/pinpoints", oldToken), 200);
    await expectStatus(await getWith(during, "/v3.0/pinpoints", newToken), 200);

    // PREVIOUS removed: only tokens of the new key work.
    await expectInvalidToken(await getWith(after, "/v3.0/pinpoints", oldToken), /signature/);
    await expectStatus(await getWith(after, "/v3.0/pinpoints", newToken), 200);
  });

  it("refuses a token whose kid names no configured key, even if it is otherwise well formed", async () => {
    const client = await createClient();
    const claims = JSON.parse(
      utf8.decode(base64urlDecode((await tokenFrom(during, client)).split(".")[1]!)!),
    ) as Parameters<typeof signToken>[0];
    const stranger = await signingKeys({ ...env, TOKEN_SIGNING_KEY: randomSecret() });
    const foreign = await signToken(claims, stranger.current);
    await expectInvalidToken(await getWith(during, "/v3.0/pinpoints", foreign), /signature/);

    // Signed by an unknown key but naming a configured kid: the named key's check fails.
    for (const named of [await kidOf(OLD), await kidOf(NEW)]) {
      const forged = await signToken(claims, { ...stranger.current, kid: named });
      await expectInvalidToken(await getWith(during, "/v3.0/pinpoints", forged), /signature/);
    }
    // Signed by the previous key but naming the current kid: the kid selects the key, so it fails.
    const { previous } = await signingKeys({ ...env, TOKEN_SIGNING_KEY: NEW, TOKEN_SIGNING_KEY_PREVIOUS: OLD });
    const mislabelled = await signToken(claims, { ...previous!, kid: await kidOf(NEW) });
    await expectInvalidToken(await getWith(during, "/v3.0/pinpoints", mislabelled), /signature/);
  });

  it("cuts previous-key tokens off at their expiry: one token lifetime after the rotation at most", async () => {
    const ttl = 600;
    const client = await createClient();
    const rotatedAt = Date.UTC(2026, 10, 21, 12, 0, 0);
    // Issued just before the rotation, so it is the last and longest-lived old-key token.
    setNow(rotatedAt - 1000);
    const oldToken = await tokenFrom({ ...before, ttl }, client);
    setNow(rotatedAt);
    const newToken = await tokenFrom({ ...during, ttl }, client);

    setNow(rotatedAt + (ttl - 2) * 1000);
    await expectStatus(await getWith({ ...during, ttl }, "/v3.0/pinpoints", oldToken), 200);
    setNow(rotatedAt + ttl * 1000);
    await expectInvalidToken(await getWith({ ...during, ttl }, "/v3.0/pinpoints", oldToken), /expired/);
    // By now no valid token depends on the previous key, so removing it logs no one out.
    setNow(rotatedAt + ttl * 1000 - 1);
    await expectStatus(await getWith({ ...after, ttl }, "/v3.0/pinpoints", newToken), 200);
  });

  it("follows page cursors encrypted with the previous key while it is set", async () => {
    const client = await createClient();
    const oldToken = await tokenFrom(before, client);
    for (const name of ["a", "b", "c"]) {
      const response = await fetchAs(before, "/v3.0/pinpoints", {
        method: "POST",
        headers: { Authorization: `Bearer ${oldToken}`, "Content-Type": "application/json" },
        body: JSON.stringify({ name, latitude: 45.76, longitude: 4.83 }),
      });
      await expectStatus(response, 201);
    }
    const first = await getWith(before, "/v3.0/pinpoints?limit=1", oldToken);
    const { next } = await first.json<{ next: string }>();
    expect(next).toContain("cursor=");

    const newToken = await tokenFrom(during, client);
    const second = await getWith(during, next, newToken);
    expect(second.status).toBe(200);
    const page = await second.json<{ results: { name: string }[] }>();
    expect(page.results.map((p) => p.name)).toEqual(["b"]);

    const refused = await getWith(after, next, newToken);
    const problem = await refused.json<{ status: number; errors: { parameter: string }[] }>();
    expect(refused.status, JSON.stringify(problem)).toBe(400);
    expect(problem.errors[0]!.parameter).toBe("cursor");
  });
});

describe("answers kept for idempotency keys, through a rotation", () => {
  const createKey = (secrets: Secrets, token: string, idempotencyKey: string) =>
    fetchAs(secrets, "/v3.0/keys", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        "Idempotency-Key": idempotencyKey,
      },
      body: JSON.stringify({ name: "rotation" }),
    });
  const keysOf = async (accountId: number) =>
    (await env.DB.prepare("SELECT count(*) AS n FROM publishable_keys WHERE account_id = ?")
      .bind(accountId)
      .first<{ n: number }>())!.n;
  const runJob = (secrets: Secrets) =>
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), {
      ...env,
      TOKEN_SIGNING_KEY: secrets.key,
      TOKEN_SIGNING_KEY_PREVIOUS: secrets.previous,
    });

  it("replay while the previous key is set, fail cleanly once it is gone, and outlive it once the cron sealed them again", async () => {
    const client = await createClient();
    const oldToken = await tokenFrom(before, client);
    const [early, late] = [crypto.randomUUID(), crypto.randomUUID()];
    const answers = new Map<string, string>();
    for (const idempotencyKey of [early, late]) {
      const first = await createKey(before, oldToken, idempotencyKey);
      expect(first.status).toBe(201);
      answers.set(idempotencyKey, await first.text());
    }
    expect(await keysOf(client.accountId)).toBe(2);

    // Rotated: both replay, sealed under the key that is now the previous one.
    const newToken = await tokenFrom(during, client);
    for (const idempotencyKey of [early, late]) {
      const replay = await createKey(during, newToken, idempotencyKey);
      expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
      expect(replay.headers.get("Cache-Control")).toBe("no-store");
      expect(await replay.text()).toBe(answers.get(idempotencyKey));
    }

    // The previous key removed before the cron ran: 410, and nothing is done again.
    const refused = await createKey(after, newToken, early);
    const problem = await refused.json<{ type: string; detail: string }>();
    expect(refused.status, JSON.stringify(problem)).toBe(410);
    expect(problem.type).toBe("urn:poi-api:problem:idempotency_answer_unreadable");
    expect(await keysOf(client.accountId)).toBe(2);

    // The cron, run while both keys are set, seals the answers again under the new key: they outlive the old one.
    await runJob(during);
    for (const idempotencyKey of [early, late]) {
      const replay = await createKey(after, newToken, idempotencyKey);
      expect(replay.status).toBe(201);
      expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
      expect(await replay.text()).toBe(answers.get(idempotencyKey));
    }
    expect(await keysOf(client.accountId)).toBe(2);
    // The same record read back under the old key alone fails: it is sealed under the new one.
    expect((await createKey(before, oldToken, late)).status).toBe(410);
  });
});
