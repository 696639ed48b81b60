/**
 * /v3.0/clients with a person's token: a client's whole life (create, list, rotate, revoke) checked at the
 * token endpoint and in the directory, another account's clients out of reach, and the registration tool
 * (scripts/lib/registry.ts) and the API working on the same rows.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import {
  createClient as createWithTool,
  revokeClient as revokeWithTool,
  type Execute,
} from "../scripts/lib/registry.ts";
import { MAX_AGE_MS } from "../src/auth/client-status";
import { clock } from "../src/core/clock";
import { hashSecret } from "../src/core/secrets";
import {
  allItems,
  call,
  caller,
  expectProblem,
  json,
  membersOf,
  personCaller,
  requestToken,
  type TestClient,
} from "./helpers";

type Client = {
  id: string;
  name: string;
  scope: string;
  secret_version: number;
  status: "active" | "revoked";
  revoked_at: string | null;
  created_at: string;
  updated_at: string;
};
type WithSecret = Client & { client_secret: string };

const execute: Execute = async (statements) =>
  (await env.DB.batch(statements.map((sql) => env.DB.prepare(sql)))).map((r) => r.results as Record<string, unknown>[]);

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

const asTestClient = (client: { id: string; client_secret: string; scope: string }, accountId: number): TestClient => ({
  accountId,
  clientId: client.id,
  clientSecret: client.client_secret,
  scope: client.scope,
});

async function tokenStatus(client: TestClient): Promise<number> {
  const response = await requestToken(client);
  await response.body?.cancel();
  return response.status;
}

async function tokenOf(client: TestClient): Promise<string> {
  const response = await requestToken(client);
  expect(response.status).toBe(200);
  return (await response.json<{ access_token: string }>()).access_token;
}

async function readStatus(token: string): Promise<number> {
  const response = await call("/v3.0/lists", { headers: { Authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  return response.status;
}

describe("POST /v3.0/clients", () => {
  it("makes a client of the account whose secret, shown once, gets tokens for that account", async () => {
    const admin = await personCaller("admin");
    const response = await admin.send("POST", "/v3.0/clients", { name: "Nightly import", scope: "write read" });
    expect(response.status).toBe(201);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const made = await json<WithSecret>(response);
    expect(made).toMatchObject({ name: "Nightly import", scope: "read write", status: "active", secret_version: 1 });
    expect(made.id).toMatch(/^[0-9a-f]{32}$/);
    expect(made.client_secret.length).toBeGreaterThanOrEqual(43);

    const stored = await env.DB.prepare("SELECT account_id, secret_hash FROM clients WHERE id = ?")
      .bind(made.id)
      .first<{ account_id: number; secret_hash: string }>();
    expect(stored).toEqual({ account_id: admin.accountId, secret_hash: await hashSecret(made.client_secret) });

    const token = await tokenOf(asTestClient(made, admin.accountId));
    const place = await call("/v3.0/pinpoints", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Made by the new client", latitude: 1, longitude: 2 }),
    });
    expect(place.status).toBe(201);
    const { id } = await place.json<{ id: number }>();
    // Its content is the account's: the person reads it.
    expect((await admin.get(`/v3.0/pinpoints/${id}`)).status).toBe(200);
  });

  it("defaults to read write, and validates name and scope", async () => {
    const owner = await personCaller("owner");
    const made = await json<WithSecret>(await owner.send("POST", "/v3.0/clients", { name: "Default" }));
    expect(made.scope).toBe("read write");
    const readOnly = await json<WithSecret>(
      await owner.send("POST", "/v3.0/clients", { name: "Reader", scope: "read" }),
    );
    expect(readOnly.scope).toBe("read");

    await expectProblem(await owner.send("POST", "/v3.0/clients", {}), 400, { pointers: ["/name"] });
    await expectProblem(await owner.send("POST", "/v3.0/clients", { name: "  " }), 400, { pointers: ["/name"] });
    await expectProblem(await owner.send("POST", "/v3.0/clients", { name: "x", scope: "read admin" }), 400, {
      pointers: ["/scope"],
    });
    await expectProblem(await owner.send("POST", "/v3.0/clients", { name: "x", scope: " " }), 400, {
      pointers: ["/scope"],
    });
    await expectProblem(await owner.send("POST", "/v3.0/clients", { name: "x", scope: ["read"] }), 400, {
      pointers: ["/scope"],
    });
    const { results } = await env.DB.prepare("SELECT name FROM clients WHERE account_id = ? ORDER BY name")
      .bind(owner.accountId)
      .all<{ name: string }>();
    expect(results.map((r) => r.name)).toEqual(["Default", "Reader"]);
  });

  it("is refused to a client's token and to members who do not administer the account", async () => {
    const client = await caller();
    await expectProblem(await client.send("POST", "/v3.0/clients", { name: "x" }), 403);
    await expectProblem(await client.get("/v3.0/clients"), 403);
    const owner = await personCaller("owner");
    const [editor] = await membersOf(owner.accountId, "editor", 1);
    await expectProblem(await editor!.send("POST", "/v3.0/clients", { name: "x" }), 403);
    await expectProblem(await editor!.get("/v3.0/clients"), 403);
  });
});

describe("GET /v3.0/clients", () => {
  it("pages through the account's clients, oldest first, revoked ones included, never a secret", async () => {
    const owner = await personCaller("owner");
    const secrets: string[] = [];
    for (let i = 0; i < 7; i++) {
      const made = await json<WithSecret>(await owner.send("POST", "/v3.0/clients", { name: `client ${i}` }));
      secrets.push(made.client_secret);
    }
    // One made by the registration tool, in another account, and one revoked.
    await createWithTool(execute, { account: `other-${crypto.randomUUID()}`, name: "elsewhere", scope: "read" });
    const first = (await allItems<Client>(owner, "/v3.0/clients", 3))[0]!;
    expect((await owner.send("DELETE", `/v3.0/clients/${first.id}`)).status).toBe(204);

    const listed = await allItems<Client>(owner, "/v3.0/clients", 3);
    const { results: stored } = await env.DB.prepare(
      "SELECT id, name, scope, revoked_at, secret_hash FROM clients WHERE account_id = ? ORDER BY created_at, id",
    )
      .bind(owner.accountId)
      .all<{ id: string; name: string; scope: string; revoked_at: number | null; secret_hash: string }>();
    expect(stored).toHaveLength(7);
    expect(listed.map(({ id, name, scope }) => ({ id, name, scope }))).toEqual(
      stored.map(({ id, name, scope }) => ({ id, name, scope })),
    );
    expect(listed.map((c) => c.status)).toEqual(stored.map((s) => (s.revoked_at === null ? "active" : "revoked")));
    expect(listed[0]).toMatchObject({ id: first.id, status: "revoked" });
    const text = JSON.stringify(listed);
    for (const secret of [...secrets, ...stored.map((s) => s.secret_hash)]) expect(text).not.toContain(secret);
  });
});

describe("POST /v3.0/clients/{client_id}/secret", () => {
  it("gives a new secret, shown once; the old one and its tokens stop working", async () => {
    const owner = await personCaller("owner");
    const made = await json<WithSecret>(await owner.send("POST", "/v3.0/clients", { name: "Rotated" }));
    const before = asTestClient(made, owner.accountId);
    const oldToken = await tokenOf(before);

    const response = await owner.send("POST", `/v3.0/clients/${made.id}/secret`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const rotated = await json<WithSecret>(response);
    expect(rotated).toMatchObject({ id: made.id, secret_version: 2, status: "active" });
    expect(rotated.client_secret).not.toBe(made.client_secret);

    expect(await tokenStatus(before)).toBe(401);
    const newToken = await tokenOf(asTestClient(rotated, owner.accountId));
    expect(await readStatus(newToken)).toBe(200);
    // The old token is refused at the latest once the client-status cache has expired.
    const start = Date.now();
    clock.now = () => start + MAX_AGE_MS + 1;
    expect(await readStatus(oldToken)).toBe(401);
  });

  it("refuses a revoked client (409) and another account's or an unknown one (404)", async () => {
    const owner = await personCaller("owner");
    const elsewhere = await personCaller("owner");
    const theirs = await json<WithSecret>(await elsewhere.send("POST", "/v3.0/clients", { name: "Theirs" }));
    await expectProblem(await owner.send("POST", `/v3.0/clients/${theirs.id}/secret`), 404, { code: "not_found" });
    await expectProblem(await owner.send("POST", `/v3.0/clients/${"0".repeat(32)}/secret`), 404);
    await expectProblem(await owner.send("POST", "/v3.0/clients/not-hex/secret"), 404);
    expect(await tokenStatus(asTestClient(theirs, elsewhere.accountId))).toBe(200);

    const mine = await json<WithSecret>(await owner.send("POST", "/v3.0/clients", { name: "Mine" }));
    expect((await owner.send("DELETE", `/v3.0/clients/${mine.id}`)).status).toBe(204);
    await expectProblem(await owner.send("POST", `/v3.0/clients/${mine.id}/secret`), 409, { code: "client_revoked" });
  });
});

describe("DELETE /v3.0/clients/{client_id}", () => {
  it("revokes: no new tokens, and its tokens stop working; again, it changes nothing", async () => {
    const admin = await personCaller("admin");
    const made = await json<WithSecret>(await admin.send("POST", "/v3.0/clients", { name: "Revoked" }));
    const client = asTestClient(made, admin.accountId);
    const token = await tokenOf(client);

    expect((await admin.send("DELETE", `/v3.0/clients/${made.id}`)).status).toBe(204);
    expect(await tokenStatus(client)).toBe(401);
    const start = Date.now();
    clock.now = () => start + MAX_AGE_MS + 1;
    expect(await readStatus(token)).toBe(401);
    clock.now = realNow;

    const revokedAt = await env.DB.prepare("SELECT revoked_at FROM clients WHERE id = ?")
      .bind(made.id)
      .first<number>("revoked_at");
    expect((await admin.send("DELETE", `/v3.0/clients/${made.id}`)).status).toBe(204);
    expect(
      await env.DB.prepare("SELECT revoked_at FROM clients WHERE id = ?").bind(made.id).first<number>("revoked_at"),
    ).toBe(revokedAt);
  });

  it("answers 404 for another account's client and leaves it working", async () => {
    const owner = await personCaller("owner");
    const theirs = await createWithTool(execute, {
      account: `theirs-${crypto.randomUUID()}`,
      name: "x",
      scope: "read",
    });
    await expectProblem(await owner.send("DELETE", `/v3.0/clients/${theirs.client_id}`), 404);
    const client = {
      accountId: theirs.account_id,
      clientId: theirs.client_id,
      clientSecret: theirs.client_secret,
      scope: "read",
    };
    expect(await tokenStatus(client)).toBe(200);
  });
});

it("works on the same clients as the registration tool", async () => {
  const tool = await createWithTool(execute, {
    account: `tool-${crypto.randomUUID()}`,
    name: "from the tool",
    scope: "read",
  });
  const owner = await personCaller("owner", { accountId: tool.account_id });
  const listed = await allItems<Client>(owner, "/v3.0/clients", 10);
  expect(listed).toEqual([expect.objectContaining({ id: tool.client_id, name: "from the tool", scope: "read" })]);

  const rotated = await json<WithSecret>(await owner.send("POST", `/v3.0/clients/${tool.client_id}/secret`));
  expect(await tokenStatus(asTestClient(rotated, tool.account_id))).toBe(200);

  const made = await json<WithSecret>(await owner.send("POST", "/v3.0/clients", { name: "from the API" }));
  const revoked = await revokeWithTool(execute, made.id);
  expect(revoked).toMatchObject({ client_id: made.id, changed: true });
  const after = await allItems<Client>(owner, "/v3.0/clients", 10);
  expect(after.find((c) => c.id === made.id)?.status).toBe("revoked");
});
