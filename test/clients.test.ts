/**
 * The registration tool's operations (scripts/lib/registry.ts), run against
 * the real local D1 with the same SQL `wrangler d1 execute` receives, and
 * checked through the Worker's own token endpoint.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import {
  clientAccepts,
  createClient,
  listClients,
  RegistryError,
  revokeClient,
  rotateSecret,
  SCOPES,
  UsageError,
  type Execute,
} from "../scripts/lib/registry.ts";
import { MAX_AGE_MS } from "../src/auth/client-status";
import { SCOPES as TOKEN_SCOPES } from "../src/core/scopes";
import { clock } from "../src/core/clock";
import { call, requestToken, type TestClient } from "./helpers";

const execute: Execute = async (statements) =>
  (await env.DB.batch(statements.map((sql) => env.DB.prepare(sql)))).map((r) => r.results as Record<string, unknown>[]);

const asTestClient = (c: { client_id: string; client_secret: string; scope: string }, accountId = 0): TestClient => ({
  accountId,
  clientId: c.client_id,
  clientSecret: c.client_secret,
  scope: c.scope,
});

async function tokenFor(client: TestClient): Promise<string> {
  const response = await requestToken(client);
  expect(response.status).toBe(200);
  return (await response.json<{ access_token: string }>()).access_token;
}

/** The status of a read with `token` (the body is discarded). */
async function readStatus(token: string): Promise<number> {
  const response = await call("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  return response.status;
}

/** The status of a token request with the client's credentials. */
async function tokenStatus(client: TestClient): Promise<number> {
  const response = await requestToken(client);
  await response.body?.cancel();
  return response.status;
}

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

describe("create", () => {
  it("creates the account when missing, stores only a hash, and the secret works at the token endpoint", async () => {
    const account = `O'Brien; DROP TABLE accounts; -- ${crypto.randomUUID()}`;
    const created = await createClient(execute, { account, name: "web 'app'", scope: "write read" });
    expect(created).toMatchObject({ account, account_created: true, name: "web 'app'", scope: "read write" });
    expect(created.client_id).toMatch(/^[0-9a-f]{32}$/);
    expect(created.client_secret.length).toBeGreaterThanOrEqual(43);

    const stored = await env.DB.prepare("SELECT * FROM clients WHERE id = ?").bind(created.client_id).first();
    expect(stored).toMatchObject({ account_id: created.account_id, name: "web 'app'", scope: "read write" });
    expect(JSON.stringify(stored)).not.toContain(created.client_secret);

    const token = await tokenFor(asTestClient(created));
    expect(await readStatus(token)).toBe(200);
  });

  it("adds a client to an existing account, and both share its content", async () => {
    const account = `shared-${crypto.randomUUID()}`;
    const first = await createClient(execute, { account, name: "one", scope: "read write" });
    const second = await createClient(execute, { account, name: "two", scope: "read" });
    expect(second).toMatchObject({ account_created: false, account_id: first.account_id, scope: "read" });

    const created = await call("/v3.0/pinpoints", {
      method: "POST",
      headers: { Authorization: `Bearer ${await tokenFor(asTestClient(first))}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Shared", latitude: 1, longitude: 2 }),
    });
    const { id } = await created.json<{ id: number }>();
    const read = await call(`/v3.0/pinpoints/${id}`, {
      headers: { Authorization: `Bearer ${await tokenFor(asTestClient(second))}` },
    });
    expect(read.status).toBe(200);
    await read.body?.cancel();
  });

  it("refuses unknown or empty scopes and bad names before writing anything", async () => {
    const account = `refused-${crypto.randomUUID()}`;
    await expect(createClient(execute, { account, name: "x", scope: "read admin" })).rejects.toThrow(UsageError);
    await expect(createClient(execute, { account, name: "x", scope: "  " })).rejects.toThrow(UsageError);
    await expect(createClient(execute, { account: "  ", name: "x", scope: "read" })).rejects.toThrow(UsageError);
    await expect(createClient(execute, { account, name: "a\nb", scope: "read" })).rejects.toThrow(UsageError);
    await expect(createClient(execute, { account: "x".repeat(201), name: "x", scope: "read" })).rejects.toThrow(
      UsageError,
    );
    await expect(listClients(execute, { account })).rejects.toThrow(RegistryError);
  });

  it("grants the scopes the token endpoint knows", () => {
    expect(SCOPES).toEqual(TOKEN_SCOPES);
  });
});

describe("list", () => {
  it("shows accounts with their clients, scope and status, never a secret or hash", async () => {
    const account = `listed-${crypto.randomUUID()}`;
    const a = await createClient(execute, { account, name: "a", scope: "read" });
    const b = await createClient(execute, { account, name: "b", scope: "read write" });
    await revokeClient(execute, b.client_id);

    const [listed, ...rest] = await listClients(execute, { account });
    expect(rest).toEqual([]);
    expect(listed).toMatchObject({ name: account, id: a.account_id });
    expect(listed!.clients).toEqual([
      expect.objectContaining({ client_id: a.client_id, name: "a", scope: "read", revoked: false, secret_version: 1 }),
      expect.objectContaining({ client_id: b.client_id, name: "b", scope: "read write", revoked: true }),
    ]);
    const hash = await env.DB.prepare("SELECT secret_hash FROM clients WHERE id = ?")
      .bind(a.client_id)
      .first<string>("secret_hash");
    const everything = JSON.stringify(await listClients(execute));
    expect(everything).toContain(account);
    for (const secret of [a.client_secret, b.client_secret, hash!]) expect(everything).not.toContain(secret);
  });
});

describe("rotate", () => {
  it("replaces the secret and makes earlier tokens fail within 60 seconds", async () => {
    const created = await createClient(execute, { account: `rotate-${crypto.randomUUID()}`, name: "r", scope: "read" });
    const oldToken = await tokenFor(asTestClient(created));
    expect(await readStatus(oldToken)).toBe(200); // caches the client's standing

    const rotated = await rotateSecret(execute, created.client_id);
    expect(rotated).toMatchObject({ client_id: created.client_id, scope: "read", secret_version: 2 });
    expect(rotated.client_secret).not.toBe(created.client_secret);
    expect(await tokenStatus(asTestClient(created))).toBe(401);
    const newToken = await tokenFor(asTestClient({ ...created, client_secret: rotated.client_secret }));

    const start = realNow();
    clock.now = () => start + MAX_AGE_MS;
    expect(await readStatus(oldToken)).toBe(401);
    expect(await readStatus(newToken)).toBe(200);
    expect(await clientAccepts(execute, created.client_id, rotated.client_secret)).toBe(true);
    expect(await clientAccepts(execute, created.client_id, created.client_secret)).toBe(false);
  });

  it("reports an unknown client and refuses a revoked one", async () => {
    await expect(rotateSecret(execute, "0123456789abcdef0123456789abcdef")).rejects.toThrow(RegistryError);
    await expect(rotateSecret(execute, "")).rejects.toThrow(UsageError);
    const created = await createClient(execute, { account: `gone-${crypto.randomUUID()}`, name: "g", scope: "read" });
    await revokeClient(execute, created.client_id);
    await expect(rotateSecret(execute, created.client_id)).rejects.toThrow(/revoked/);
  });
});

describe("revoke", () => {
  it("stops new tokens at once and existing ones within 60 seconds; revoking again changes nothing", async () => {
    const created = await createClient(execute, { account: `revoke-${crypto.randomUUID()}`, name: "v", scope: "read" });
    const token = await tokenFor(asTestClient(created));
    expect(await readStatus(token)).toBe(200);

    const revoked = await revokeClient(execute, created.client_id);
    expect(revoked).toMatchObject({ client_id: created.client_id, changed: true });
    expect(await tokenStatus(asTestClient(created))).toBe(401);
    expect(await clientAccepts(execute, created.client_id, created.client_secret)).toBe(false);

    const start = realNow();
    clock.now = () => start + MAX_AGE_MS;
    expect(await readStatus(token)).toBe(401);

    const again = await revokeClient(execute, created.client_id);
    expect(again).toMatchObject({ changed: false, revoked_at: revoked.revoked_at });
    await expect(revokeClient(execute, "no-such-client")).rejects.toThrow(RegistryError);
  });
});
