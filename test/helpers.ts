/**
 * Test helpers: accounts and clients created directly in D1 (as the
 * registration tool does), tokens obtained from the real token endpoint, and
 * a fetch that goes through the Worker's own default export.
 */
import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, inject } from "vitest";
import { app } from "../src/app";
import worker from "../src/index";
import { mintPersonToken } from "../src/auth/person-token";
import type { ListRole, Role } from "../src/core/env";
import { signingKeys } from "../src/core/signing";
import { hashPassword } from "../src/people/passwords";
import { generateClientId, generateClientSecret, hashSecret } from "../src/core/secrets";
import type { Batch, Row } from "../src/db/id-ranges";
import { DIRECTORY, shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";

export const BASE = "https://api.example.test";

export function call(path: string, init: RequestInit = {}): Promise<Response> {
  return exports.default.fetch(new Request(new URL(path, BASE), init));
}

/**
 * A POST of `body` (a stream, sent without buffering, or bytes) with the caller's token, as JSON
 * unless `headers` say otherwise; `headers` add to or replace those.
 */
export function postBody(
  who: { token: string },
  path: string,
  body: ReadableStream<Uint8Array> | Uint8Array,
  headers: Record<string, string> = {},
): Promise<Response> {
  const all = { Authorization: `Bearer ${who.token}`, "Content-Type": "application/json", ...headers };
  return call(path, { method: "POST", headers: all, body, duplex: "half" } as RequestInit);
}

/**
 * The app run with some bindings replaced (vars, secrets), as a deployment
 * configured differently would run it; resolves once its background work is done.
 */
export async function fetchWith(
  bindings: Record<string, unknown>,
  request: Request | string,
  init: RequestInit = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const req = typeof request === "string" ? new Request(new URL(request, BASE), init) : request;
  // [vars] are typed as their wrangler.toml values; the config parser takes any string.
  const response = await app.fetch(req, { ...env, ...bindings } as Cloudflare.Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/**
 * Bindings for `fetchWith` that put the small limiters vitest.config.ts binds in place of
 * wrangler.toml's, and [vars] stating them as a deployment would: what the tests of the limits run on.
 */
export function smallLimits(): Record<string, unknown> {
  const bound = env as unknown as Record<string, unknown>;
  return Object.fromEntries(
    env.TEST_SMALL_LIMITS.flatMap(({ name, variable, simple }) => [
      [name, bound[`SMALL_${name}`]],
      [variable, `${simple.limit}/${simple.period}`],
    ]),
  );
}

/**
 * Miniflare's limiter counts in windows aligned to the clock (Date.now() / period). A test that must see
 * one window from its first request to its last waits for a fresh one when less than `neededMs` are left.
 */
export async function windowWithRoom(neededMs: number, periodSeconds: number): Promise<void> {
  const periodMs = periodSeconds * 1000;
  const left = periodMs - (Date.now() % periodMs);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

export type Problem = {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { pointer?: string; parameter?: string; detail: string }[];
} & Record<string, unknown>;

/**
 * Asserts RFC 9457 problem details with `status` and returns the body; with
 * `code`, its type too, and with `pointers`, the pointers (or parameters) its
 * `errors` name, in any order.
 */
export async function expectProblem(
  response: Response,
  status: number,
  expected: { code?: string; pointers?: readonly string[] } = {},
): Promise<Problem> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("Content-Type")).toBe("application/problem+json");
  const body = JSON.parse(text) as Problem;
  expect(body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    detail: expect.any(String),
  });
  expect(body.title.length).toBeGreaterThan(0);
  expect(body.detail.length).toBeGreaterThan(0);
  if (expected.code) expect(body.type).toBe(`urn:poi-api:problem:${expected.code}`);
  if (expected.pointers) {
    expect((body.errors ?? []).map((e) => e.pointer ?? e.parameter).sort()).toEqual([...expected.pointers].sort());
  }
  return body;
}

let accounts = 0;

/**
 * A new account, in the directory and in every other shard (as the registration tool does: its content
 * references it there, its categories on every shard), placed on `shard` or, by default, the shards of
 * `SHARDS` in turn, so with several shards the tests' accounts live on different ones.
 */
export async function createAccount(shard?: string): Promise<number> {
  const shards = shardNames(env.SHARDS);
  const placed = shard ?? shards[accounts % shards.length]!;
  const row = await env.DB.prepare("INSERT INTO accounts (name, shard) VALUES (?, ?) RETURNING id, name, created_at")
    .bind(`account-${++accounts}-${crypto.randomUUID()}`, placed)
    .first<{ id: number; name: string; created_at: number }>();
  for (const name of shards.filter((name) => name !== DIRECTORY)) {
    await bindingNamed(env, name)
      .prepare("INSERT INTO accounts (id, name, created_at, shard) VALUES (?, ?, ?, ?)")
      .bind(row!.id, row!.name, row!.created_at, placed)
      .run();
  }
  return row!.id;
}

/** A D1 database as a `Batch` (src/db/id-ranges.ts), as the move and the range claims run on bindings. */
export const batchOf =
  (db: D1Database): Batch =>
  async (statements) =>
    (await db.batch(statements.map(({ sql, params }) => db.prepare(sql).bind(...params)))).map(
      (result) => result.results as Row[],
    );

/** The binding name of the database holding the account's content. */
export async function shardOf(accountId: number): Promise<string> {
  const row = await env.DB.prepare("SELECT shard FROM accounts WHERE id = ?")
    .bind(accountId)
    .first<{ shard: string }>();
  return row?.shard ?? DIRECTORY;
}

/** The database holding the account's content: what a test reads to check stored rows. */
export async function contentDb(accountId: number): Promise<D1Database> {
  return bindingNamed(env, await shardOf(accountId));
}

/** The database that holds row `id` of `table` (a content table): for helpers that know an id, not its account. */
export async function databaseHolding(table: string, id: number): Promise<D1Database> {
  for (const name of shardNames(env.SHARDS)) {
    const db = bindingNamed(env, name);
    if (await db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).bind(id).first()) return db;
  }
  return env.DB;
}

export type TestClient = { accountId: number; clientId: string; clientSecret: string; scope: string };

/** A new account with one client (scopes "read write" unless given). */
export async function createClient(scope = "read write", accountId?: number): Promise<TestClient> {
  accountId ??= await createAccount();
  const clientId = generateClientId();
  const clientSecret = generateClientSecret();
  await env.DB.prepare("INSERT INTO clients (id, account_id, name, secret_hash, scope) VALUES (?, ?, ?, ?, ?)")
    .bind(clientId, accountId, "test", await hashSecret(clientSecret), scope)
    .run();
  return { accountId, clientId, clientSecret, scope };
}

export function basic(clientId: string, clientSecret: string): string {
  return `Basic ${btoa(`${clientId}:${clientSecret}`)}`;
}

let addresses = 0;

/**
 * A source address of its own for each token request (198.18.0.0/15, RFC 2544), as Cloudflare's edge
 * sets it: the token endpoint limits requests per address, and the tests' clients are not one host.
 */
export function nextAddress(): string {
  const n = ++addresses;
  return `198.${18 + ((n >> 16) & 1)}.${(n >> 8) & 255}.${n & 255}`;
}

export async function requestToken(client: TestClient, form: Record<string, string> = {}): Promise<Response> {
  return call("/v3.0/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: basic(client.clientId, client.clientSecret),
      "Content-Type": "application/x-www-form-urlencoded",
      "CF-Connecting-IP": nextAddress(),
    },
    body: new URLSearchParams({ grant_type: "client_credentials", client_id: client.clientId, ...form }),
  });
}

/**
 * An API caller: a client of a fresh account with a token, and JSON helpers.
 * Its requests resolve once their background work (`waitUntil`: media
 * deletions, cache refreshes) is done, so a test reads its effects directly.
 */
export type Caller = TestClient & {
  token: string;
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
};

export async function caller(scope = "read write", accountId?: number): Promise<Caller> {
  const client = await createClient(scope, accountId);
  const response = await requestToken(client);
  if (response.status !== 200) throw new Error(`token request failed: ${response.status} ${await response.text()}`);
  const { access_token: token } = await response.json<{ access_token: string }>();
  return { ...client, ...bearerCalls(token) };
}

/** GET and JSON-sending helpers that carry `token`. */
function bearerCalls(token: string): Pick<Caller, "token" | "get" | "send"> {
  const auth = { Authorization: `Bearer ${token}` };
  return {
    token,
    get: (path, headers = {}) => fetchWith({}, path, { headers: { ...auth, ...headers } }),
    send: (method, path, body, headers = {}) =>
      fetchWith({}, path, {
        method,
        headers: { ...auth, ...(body === undefined ? {} : { "Content-Type": "application/json" }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
  };
}

let people = 0;

/** A person, made directly in the directory as `npm run people -- create` does, with an open session. */
export async function createPerson(email = `person-${++people}-${crypto.randomUUID()}@example.test`) {
  const person = await env.DB.prepare("INSERT INTO people (email, email_key, name) VALUES (?, ?, ?) RETURNING id")
    .bind(email, email.toLowerCase(), `Person ${people}`)
    .first<{ id: number }>();
  const sessionId = crypto.randomUUID();
  const now = Date.now();
  await env.DB.prepare(
    "INSERT INTO sessions (id, person_id, second_factor, last_seen_at, expires_at) VALUES (?, ?, 'none', ?, ?)",
  )
    .bind(sessionId, person!.id, now, now + 3_600_000)
    .run();
  return { personId: person!.id, sessionId, email };
}

export type PersonCaller = Pick<Caller, "token" | "get" | "send"> & {
  accountId: number;
  personId: number;
  sessionId: string;
};

/**
 * A person acting in `accountId` (a fresh one by default) with a token minted from their session: a member
 * with `role`, or, with `role` null, someone who only collaborates on the lists `lists` gives.
 */
export async function personCaller(
  role: Role | null,
  options: { accountId?: number; lists?: [number, ListRole][]; person?: Awaited<ReturnType<typeof createPerson>> } = {},
): Promise<PersonCaller> {
  const accountId = options.accountId ?? (await createAccount());
  const person = options.person ?? (await createPerson());
  if (role !== null) {
    await env.DB.prepare("INSERT INTO members (account_id, person_id, role) VALUES (?, ?, ?)")
      .bind(accountId, person.personId, role)
      .run();
  }
  for (const [listId, listRole] of options.lists ?? []) {
    await env.DB.prepare("INSERT INTO list_collaborators (account_id, list_id, person_id, role) VALUES (?, ?, ?, ?)")
      .bind(accountId, listId, person.personId, listRole)
      .run();
  }
  const { token } = await mintPersonToken((await signingKeys(env)).current, {
    personId: person.personId,
    sessionId: person.sessionId,
    accountId,
    scope: "read write",
  });
  return { accountId, personId: person.personId, sessionId: person.sessionId, ...bearerCalls(token) };
}

export async function json<T = Record<string, unknown>>(response: Response): Promise<T> {
  return response.json<T>();
}

/** Creates a pinpoint and returns its JSON. */
export async function createPinpoint(who: Pick<Caller, "send">, fields: Record<string, unknown> = {}) {
  const response = await who.send("POST", "/v3.0/pinpoints", {
    name: "Place",
    latitude: 48.85,
    longitude: 2.35,
    ...fields,
  });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return response.json<{ id: number } & Record<string, unknown>>();
}

/** Categories of the account written straight to D1 (a category's API create needs an image); their ids in order. */
export async function createCategories(accountId: number, names: readonly string[]): Promise<number[]> {
  const ids: number[] = [];
  for (const name of names) {
    const row = await (
      await contentDb(accountId)
    )
      .prepare("INSERT INTO categories (account_id, name) VALUES (?, ?) RETURNING id")
      .bind(accountId, name)
      .first<{ id: number }>();
    ids.push(row!.id);
  }
  return ids;
}

export async function createList(who: Pick<Caller, "send">, fields: Record<string, unknown> = {}) {
  const response = await who.send("POST", "/v3.0/lists", { name: "List", ...fields });
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return response.json<{ id: number } & Record<string, unknown>>();
}

/** Follows `next` links from `path` to the end, returning every page. */
export async function allPages<T>(
  who: Pick<Caller, "get">,
  path: string,
): Promise<{ results: T[]; next: string | null; previous: string | null }[]> {
  const pages = [];
  let url: string | null = path;
  while (url) {
    const response = await who.get(url);
    if (response.status !== 200) throw new Error(`page failed: ${response.status} ${await response.text()}`);
    const page = await response.json<{ results: T[]; next: string | null; previous: string | null }>();
    pages.push(page);
    url = page.next;
  }
  return pages;
}

/** Every item of a collection, read `limit` a page from `path`; every page but the last is full. */
export async function allItems<T>(who: Pick<Caller, "get">, path: string, limit: number): Promise<T[]> {
  const pages = await allPages<T>(who, `${path}${path.includes("?") ? "&" : "?"}limit=${limit}`);
  for (const page of pages.slice(0, -1)) expect(page.results).toHaveLength(limit);
  return pages.flatMap((page) => page.results);
}

/**
 * Every page forward from `path`, then every page backward from the last; both must give the same
 * sequence. Returns the results in forward order.
 */
export async function walkBothWays<T extends { id: number }>(who: Caller, path: string): Promise<T[]> {
  type Page = { results: T[]; next: string | null; previous: string | null };
  const forward: Page[] = [];
  let url: string | null = path;
  while (url) {
    const response = await who.get(url);
    expect(response.status, await response.clone().text()).toBe(200);
    const page: Page = await response.json();
    forward.push(page);
    url = page.next;
  }
  const all = forward.flatMap((p) => p.results);
  const backward: T[][] = [];
  url = forward[forward.length - 1]!.previous;
  while (url) {
    const page: Page = await (await who.get(url)).json();
    backward.unshift(page.results);
    url = page.previous;
  }
  const last = forward[forward.length - 1]!.results;
  expect([...backward.flat(), ...last].map((r) => r.id)).toEqual(all.map((r) => r.id));
  return all;
}

/** What the test receiver (test/webhook-receiver.ts) got for one name: each request's headers and body. */
export type Received = { headers: Record<string, string>; body: string };

/** The URL of the test receiver that records deliveries under `name`. */
export const receiverUrl = (name: string) => `http://127.0.0.1:${inject("receiverPort")}/hooks/${name}`;

/** The requests the test receiver got under `name`, in arrival order. */
export async function received(name: string): Promise<Received[]> {
  return (await fetch(`http://127.0.0.1:${inject("receiverPort")}/received/${name}`)).json();
}

/** One delivery pass for a webhook, as a queue message runs it (with `bindings` in place of env's); returns the message's outcome. */
export async function deliverWebhook(
  webhook: number,
  account: number,
  { queue = "poi-webhooks", attempts = 1, bindings = {} as Partial<Cloudflare.Env> } = {},
) {
  const batch = createMessageBatch(queue, [
    { id: crypto.randomUUID(), timestamp: new Date(), attempts, body: { webhook, account } },
  ]);
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...bindings }, ctx);
  return getQueueResult(batch, ctx);
}

/**
 * Delivers until the webhook has passed every outbox row and no pass holds it: what the queue does in
 * its own time. One pass is not enough: the queue's own pass (a write's message) may hold the lease when
 * the test's pass comes, which then sends nothing.
 */
export async function settleWebhook(webhook: number, account: number): Promise<void> {
  const db = await contentDb(account);
  for (let round = 0; round < 100; round++) {
    await deliverWebhook(webhook, account);
    const state = await db
      .prepare(
        `SELECT (SELECT count(*) FROM webhook_outbox WHERE account_id = ?1 AND id > (SELECT position FROM webhooks WHERE id = ?2)) AS pending,
          (SELECT lease_until FROM webhooks WHERE id = ?2) AS lease`,
      )
      .bind(account, webhook)
      .first<{ pending: number; lease: number | null }>();
    if (state!.pending === 0 && state!.lease === null) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`webhook ${webhook} did not settle`);
}

/** The password test people sign in with unless a test gives another. */
export const PASSWORD = "a long phrase only tests know";

/** A person (as createPerson makes one, but not signed in anywhere) who signs in with `password`. */
export async function personWithPassword(password = PASSWORD, email?: string) {
  const { personId, email: address } = await createPerson(email);
  await env.DB.batch([
    env.DB.prepare("UPDATE people SET password_hash = ? WHERE id = ?").bind(await hashPassword(password), personId),
    env.DB.prepare("DELETE FROM sessions WHERE person_id = ?").bind(personId),
  ]);
  return { personId, email: address, password };
}

/** Adds a person to an account with a role, as accepting an invitation does. */
export async function addMember(accountId: number, personId: number, role: Role): Promise<void> {
  await env.DB.prepare("INSERT INTO members (account_id, person_id, role) VALUES (?, ?, ?)")
    .bind(accountId, personId, role)
    .run();
}

/** People with `role` in the account, each with a token of their own. */
export function membersOf(accountId: number, role: Role, count: number): Promise<PersonCaller[]> {
  return Promise.all(Array.from({ length: count }, () => personCaller(role, { accountId })));
}

/** The member's role in the account as stored, or null. */
export async function storedRole(accountId: number, personId: number): Promise<string | null> {
  const row = await env.DB.prepare("SELECT role FROM members WHERE account_id = ? AND person_id = ?")
    .bind(accountId, personId)
    .first<{ role: string }>();
  return row?.role ?? null;
}

/**
 * A browser on `origin`, at a source address of its own: it keeps the cookies the service sets (by name,
 * dropping those set to expire), sends them back, and sends writes as this service's own pages do, with
 * `Sec-Fetch-Site: same-origin` and the session's CSRF token, learnt from every answer that carries one.
 * `bindings` replace the Worker's, as for fetchWith (the small rate limiters).
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  csrf: string | null = null;

  constructor(
    readonly address = nextAddress(),
    readonly origin = BASE,
    readonly bindings: Record<string, unknown> = {},
  ) {}

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) {
      headers.set("Cookie", [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    headers.set("CF-Connecting-IP", this.address);
    const response = await fetchWith(this.bindings, new Request(new URL(path, this.origin), { ...init, headers }));
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";").map((part) => part.trim());
      const at = pair.indexOf("=");
      const expired = attributes.some((a) => /^max-age=(0|-)/i.test(a));
      if (expired) this.cookies.delete(pair.slice(0, at));
      else this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    if (response.ok && response.headers.get("Content-Type")?.startsWith("application/json")) {
      const body = await response.clone().json<{ csrf_token?: string }>();
      if (typeof body.csrf_token === "string") this.csrf = body.csrf_token;
    }
    return response;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(path, { headers: { "Sec-Fetch-Site": "same-origin", ...headers } });
  }

  /** A request as the service's own page sends it; `headers` add to or replace those. */
  send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return this.fetch(path, {
      method,
      headers: {
        "Sec-Fetch-Site": "same-origin",
        Origin: this.origin,
        ...(this.csrf === null ? {} : { "X-CSRF-Token": this.csrf }),
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  signIn(email: string, password: string): Promise<Response> {
    return this.send("POST", "/v3.0/auth/sign-in", { email, password });
  }

  /** A bearer token from the session (for `account` if given), as the browser app gets one. */
  async token(account?: number): Promise<string> {
    const response = await this.send("POST", "/v3.0/auth/token", account === undefined ? {} : { account });
    if (response.status !== 200) throw new Error(`token failed: ${response.status} ${await response.text()}`);
    return (await response.json<{ access_token: string }>()).access_token;
  }
}

/**
 * A person with a password, a member of a fresh account with `role`, signed in on a browser of their own
 * (whose `bindings` replace the Worker's, as for fetchWith).
 */
export async function signedIn(role: Role = "editor", bindings: Record<string, unknown> = {}) {
  const person = await personWithPassword();
  const accountId = await createAccount();
  await addMember(accountId, person.personId, role);
  const browser = new Browser(nextAddress(), BASE, bindings);
  const response = await browser.signIn(person.email, person.password);
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  return { ...person, accountId, browser };
}
