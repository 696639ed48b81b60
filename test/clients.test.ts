/**
 * The registration tool's operations (scripts/lib/registry.ts and
 * scripts/lib/keys.ts), run against the real local D1 with the same SQL
 * `wrangler d1 execute` receives, and checked through the Worker itself: its
 * token endpoint for clients, POST /v3.0/keys and reads with `?key=` for
 * publishable keys.
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
import { createKey, listKeys, revokeKey } from "../scripts/lib/keys.ts";
import { MAX_KEY_LISTS, MAX_KEY_ORIGINS } from "../src/core/publishable-keys";
import { MAX_AGE_MS } from "../src/auth/client-status";
import { FRESH_MS } from "../src/auth/publishable-keys";
import { SCOPES as TOKEN_SCOPES } from "../src/core/scopes";
import { hashSecret } from "../src/core/secrets";
import { clock } from "../src/core/clock";
import { call, caller, createList, json, requestToken, type Caller, type TestClient } from "./helpers";

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

/** The name of a test caller's account, which the tool takes instead of an id. */
async function accountOf(who: Caller): Promise<string> {
  return (await env.DB.prepare("SELECT name FROM accounts WHERE id = ?").bind(who.accountId).first<string>("name"))!;
}

/** The ids of the lists a publishable key reads, as the API answers `GET /v3.0/lists?key=`. */
async function listsReadWith(key: string, headers: Record<string, string> = {}): Promise<number[]> {
  const response = await call(`/v3.0/lists?limit=100&key=${encodeURIComponent(key)}`, { headers });
  expect(response.status, await response.clone().text()).toBe(200);
  const page = await json<{ results: { id: number }[]; next: string | null }>(response);
  expect(page.next).toBeNull();
  return page.results.map((list) => list.id).sort((a, b) => a - b);
}

async function keyRows(keyId: number) {
  const key = await env.DB.prepare("SELECT * FROM publishable_keys WHERE id = ?").bind(keyId).first();
  const { results } = await env.DB.prepare(
    "SELECT list_id FROM publishable_key_lists WHERE key_id = ? ORDER BY list_id",
  )
    .bind(keyId)
    .all<{ list_id: number }>();
  return { key, lists: results.map((row) => row.list_id) };
}

/** Every row of both key tables, to show a refusal wrote nothing. */
async function everyKeyRow(): Promise<unknown[]> {
  const [keys, lists] = await env.DB.batch([
    env.DB.prepare("SELECT * FROM publishable_keys ORDER BY id"),
    env.DB.prepare("SELECT * FROM publishable_key_lists ORDER BY key_id, list_id"),
  ]);
  return [keys!.results, lists!.results];
}

const future = (ms = 86_400_000) => new Date(Date.now() + ms).toISOString();

describe("keys create", () => {
  it("writes the rows POST /v3.0/keys writes, and the key reads exactly the lists named", async () => {
    const owner = await caller();
    const account = await accountOf(owner);
    // Three lists, of which the key names the first and the last.
    const [l1, , l3] = await Promise.all(["one", "two", "three"].map((name) => createList(owner, { name })));
    const origins = ["https://maps.example.com", "https://*.example.org"];
    // An offset other than Z: stored and answered as the same instant.
    const expires = new Date(Date.now() + 86_400_000).toISOString().replace(/\.\d+Z$/, "+00:00");

    const made = await createKey(execute, {
      account,
      name: "city 'map'",
      lists: [String(l3!.id), ` ${l1!.id} `, String(l3!.id)],
      origins: [...origins, origins[0]!],
      expires,
    });
    expect(made).toMatchObject({
      account,
      account_id: owner.accountId,
      name: "city 'map'",
      lists: [l3!.id, l1!.id],
      origins,
      expires_at: new Date(expires).toISOString(),
      key_prefix: made.key.slice(0, 9),
    });
    expect(made.key).toMatch(/^pk_[A-Za-z0-9_-]{32}$/);

    const response = await owner.send("POST", "/v3.0/keys", {
      name: "city 'map'",
      lists: [l3!.id, l1!.id, l3!.id],
      origins: [...origins, origins[0]!],
      expires_at: expires,
    });
    expect(response.status).toBe(201);
    const viaApi = await json<{ id: number; key: string }>(response);

    // Row for row what the API writes, except what is unique to each key.
    const tool = await keyRows(made.id);
    const api = await keyRows(viaApi.id);
    const unique = ["id", "key_hash", "key_prefix", "created_at"];
    const rest = (row: Record<string, unknown> | null) =>
      Object.fromEntries(Object.entries(row!).filter(([column]) => !unique.includes(column)));
    expect(rest(tool.key)).toEqual(rest(api.key));
    for (const column of Object.keys(api.key!)) expect(typeof tool.key![column], column).toBe(typeof api.key![column]);
    expect(tool.key).toMatchObject({ key_hash: await hashSecret(made.key), key_prefix: made.key.slice(0, 9) });
    expect(JSON.stringify(tool.key)).not.toContain(made.key);
    expect(tool.lists).toEqual([l1!.id, l3!.id]);
    expect(tool.lists).toEqual(api.lists);

    // The API shows the tool's key as it shows its own, and the key reads those lists and no other.
    const got = await json(await owner.get(`/v3.0/keys/${made.id}`));
    const { key: _key, account: _account, account_id: _accountId, ...shown } = made;
    expect(got).toEqual({ ...shown, lists: [l1!.id, l3!.id] });
    expect(await listsReadWith(made.key, { Origin: "https://a.example.org" })).toEqual([l1!.id, l3!.id]);
  });

  it("without lists, reads every list of the account, including lists made after the key", async () => {
    const owner = await caller();
    const before = await createList(owner, { name: "before" });
    const made = await createKey(execute, { account: await accountOf(owner), name: "everything" });
    expect(made).toMatchObject({ name: "everything", lists: null, origins: null, expires_at: null });
    const after = await createList(owner, { name: "after" });

    const rows = await keyRows(made.id);
    expect(rows.key).toMatchObject({ every_list: 1, origins: null, expires_at: null });
    expect(rows.lists).toEqual([]);
    expect(await listsReadWith(made.key)).toEqual([before.id, after.id]);
    const other = await caller();
    await createList(other, { name: "not theirs" });
    expect(await listsReadWith(made.key)).toEqual([before.id, after.id]);
  });

  it("refuses another account's list or a missing one, and an unknown account, writing nothing", async () => {
    const [a, b] = await Promise.all([caller(), caller()]);
    const [mine, theirs] = await Promise.all([createList(a), createList(b)]);
    const account = await accountOf(a);
    const rows = await everyKeyRow();

    const refused = createKey(execute, { account, name: "x", lists: [String(mine.id), String(theirs.id)] });
    await expect(refused).rejects.toThrow(RegistryError);
    await expect(refused).rejects.toThrow(`List ${theirs.id} is not a list of account "${account}"`);
    await expect(
      createKey(execute, { account, name: "x", lists: [String(mine.id), "987654321", String(theirs.id)] }),
    ).rejects.toThrow(`Lists 987654321, ${theirs.id} are not lists`);

    const nobody = `nobody-${crypto.randomUUID()}`;
    await expect(createKey(execute, { account: nobody, name: "x" })).rejects.toThrow(/no account named/);
    expect(await env.DB.prepare("SELECT id FROM accounts WHERE name = ?").bind(nobody).first()).toBeNull();
    expect(await everyKeyRow()).toEqual(rows);
  });

  it("refuses bad list ids, origins, expiries and names before writing anything", async () => {
    const owner = await caller();
    const account = await accountOf(owner);
    const rows = await everyKeyRow();
    const bad: Parameters<typeof createKey>[1][] = [
      ...["x", "0", "-1", "1.5", "1e3", "", "9007199254740993", "1; DROP TABLE lists"].map((id) => ({
        account,
        name: "x",
        lists: [id],
      })),
      { account, name: "x", lists: Array.from({ length: MAX_KEY_LISTS + 1 }, (_, i) => String(i + 1)) },
      { account, name: "x", lists: [] },
      ...[
        "maps.example.com",
        "https://maps.example.com/",
        "https://maps.example.com/path",
        "HTTPS://Maps.Example.com",
        "https://*.org",
        "ftp://maps.example.com",
        `https://${"a".repeat(300)}.example.com`,
      ].map((origin) => ({ account, name: "x", origins: [origin] })),
      {
        account,
        name: "x",
        origins: Array.from({ length: MAX_KEY_ORIGINS + 1 }, (_, i) => `https://m${i}.example.com`),
      },
      { account, name: "x", origins: [] },
      ...[
        new Date(Date.now() - 1000).toISOString(),
        "2030-01-01",
        "2030-01-01T00:00:00",
        "2030-02-30T00:00:00Z",
        "tomorrow",
      ].map((expires) => ({ account, name: "x", expires })),
      { account, name: " " },
      { account, name: "a\u0000b" },
    ];
    for (const input of bad) {
      await expect(createKey(execute, input), JSON.stringify(input)).rejects.toThrow(UsageError);
    }
    expect(await everyKeyRow()).toEqual(rows);
  });
});

describe("keys list", () => {
  it("shows each key with its account, lists, origins and expiry, never the key or its hash", async () => {
    const [a, b] = await Promise.all([caller(), caller()]);
    const [accountA, accountB] = await Promise.all([accountOf(a), accountOf(b)]);
    const [l1, l2] = [await createList(a), await createList(a)];
    const expires = future();
    const all = await createKey(execute, { account: accountA, name: "all" });
    const some = await createKey(execute, {
      account: accountA,
      name: "some",
      lists: [String(l2.id), String(l1.id)],
      origins: ["http://localhost:5173"],
      expires,
    });
    const theirs = await createKey(execute, { account: accountB, name: "theirs" });

    const listed = await listKeys(execute, { account: accountA });
    const summary = ({ id, account, name, key_prefix, lists, origins, expires_at, created_at }: typeof all) => ({
      id,
      account,
      name,
      key_prefix,
      lists,
      origins,
      expires_at,
      created_at,
    });
    expect(listed).toEqual([summary(all), { ...summary(some), lists: [l1.id, l2.id] }]);
    expect(await listKeys(execute, { account: accountB })).toEqual([summary(theirs)]);

    const everything = await listKeys(execute);
    expect(everything.map((key) => key.id)).toEqual(expect.arrayContaining([all.id, some.id, theirs.id]));
    const text = JSON.stringify(everything);
    for (const made of [all, some, theirs]) {
      expect(text).not.toContain(made.key);
      expect(text).not.toContain(await hashSecret(made.key));
    }
  });

  it("is empty for an account without keys, and refuses an unknown account", async () => {
    const owner = await caller();
    expect(await listKeys(execute, { account: await accountOf(owner) })).toEqual([]);
    await expect(listKeys(execute, { account: `nobody-${crypto.randomUUID()}` })).rejects.toThrow(RegistryError);
  });
});

describe("keys revoke", () => {
  it("deletes the key and its list rows; the key stops working; revoking again is refused", async () => {
    const owner = await caller();
    const account = await accountOf(owner);
    const list = await createList(owner);
    const made = await createKey(execute, { account, name: "short-lived", lists: [String(list.id)] });
    expect(await listsReadWith(made.key)).toEqual([list.id]);

    expect(await revokeKey(execute, String(made.id))).toEqual({
      id: made.id,
      account,
      name: "short-lived",
      key_prefix: made.key_prefix,
    });
    expect(await keyRows(made.id)).toEqual({ key: null, lists: [] });
    const start = realNow();
    clock.now = () => start + FRESH_MS;
    const response = await call(`/v3.0/lists?key=${made.key}`);
    expect(response.status).toBe(401);
    await response.body?.cancel();

    await expect(revokeKey(execute, String(made.id))).rejects.toThrow(RegistryError);
    for (const id of ["", "abc", "0", "1.5", "1 OR 1=1"]) {
      await expect(revokeKey(execute, id), id).rejects.toThrow(UsageError);
    }
  });

  it("revokes a key made through the API", async () => {
    const owner = await caller();
    const list = await createList(owner);
    const response = await owner.send("POST", "/v3.0/keys", { name: "api", lists: [list.id] });
    const { id } = await json<{ id: number }>(response);
    await revokeKey(execute, String(id));
    expect(await keyRows(id)).toEqual({ key: null, lists: [] });
    const got = await owner.get(`/v3.0/keys/${id}`);
    expect(got.status).toBe(404);
    await got.body?.cancel();
  });
});
