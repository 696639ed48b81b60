/**
 * Who may do what, checked against the table in docs/people-and-roles.md, which this test reads (so the
 * docs cannot drift from the service): every operation of the table that the app has is called for real by
 * every column of it (an owner, an admin, an editor, a contributor and a viewer of the account; an editor and
 * a viewer of one of its lists), by a client of the account with `read write`, by a member removed from the
 * account and by a member of another account, and each answer is compared with the cell:
 *
 *   none   403 `role_forbidden`, naming the role (a client on an operation only people may call: 403
 *          `person_required`);
 *   all    a 2xx, on a row of the account anyone else made;
 *   own    a 2xx on a row the person created, 403 `role_forbidden` on another's, which stays unchanged;
 *   list   a 2xx on a row in (or of) the person's list, 404 on one outside it (400 at `/pinpoint` for an
 *          event placed at a pinpoint they cannot see), which stays unchanged; a collection reads exactly
 *          what the lists hold, compared with the database across every page, both ways;
 *   scope  (a client) a 2xx.
 *
 * A removed member's token is refused (401) everywhere; a member of another account reaches none of this
 * account's rows (403 or 404) but shared categories. Rows of the table whose operation the app does not have
 * yet are listed as skipped; the app's every operation that takes a token must have a row, but those on the
 * person's own standing (leaving an account, src/auth/roles.ts `OWN_STANDING`), which every person may call
 * whatever their role and are checked on their own, and what a signed-in person does with the session
 * cookie (acting in no account, accepting an invitation included) none.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import peopleAndRoles from "../docs/people-and-roles.md?raw";
import { app } from "../src/app";
import { resourceApp } from "../src/auth/resource-app";
import { COLUMNS, OWN_STANDING, PEOPLE_ONLY, PERMISSIONS, ROLES, type Column } from "../src/auth/roles";
import type { AppEnv } from "../src/core/env";
import { onError } from "../src/http/errors";
import { withConfig } from "../src/http/middleware/config";
import { d1Session } from "../src/http/middleware/d1-session";
import type { Bound } from "../src/db/keyset";
import { shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";
import { pageListsEvents } from "../src/events/store";
import { marksOf, operation } from "../src/http/route-metadata";
import { pageListsPinpoints } from "../src/pinpoints/store";
import {
  call,
  caller,
  contentDb,
  createAccount,
  createClient,
  createPerson,
  expectProblem,
  json,
  personCaller,
  type Caller,
  type PersonCaller,
} from "./helpers";

type Json = Record<string, any>;

/** The table under "Who may do what" (its first): operation → column → cell. */
function documentedTable(markdown: string): { columns: string[]; rows: Map<string, Record<string, string>> } {
  const section = markdown.split(/^## /m).find((part) => part.startsWith("Who may do what"));
  if (!section) throw new Error('docs/people-and-roles.md has no "Who may do what" section');
  // The section's first table: its lines from the first that starts with "|" to the first that does not.
  const all = section.split("\n");
  const start = all.findIndex((line) => line.startsWith("|"));
  const end = all.findIndex((line, i) => i > start && !line.startsWith("|"));
  const lines = all.slice(start, end === -1 ? undefined : end);
  const cellsOf = (line: string) =>
    line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
  const columns = cellsOf(lines[0]!).slice(1);
  const rows = new Map<string, Record<string, string>>();
  for (const line of lines.slice(2)) {
    const [first, ...cells] = cellsOf(line);
    const operation = first!.match(/^`(\w+)`$/)?.[1];
    if (!operation) throw new Error(`a row of the table names no operation: ${line}`);
    rows.set(operation, Object.fromEntries(columns.map((column, i) => [column, cells[i]!])));
  }
  return { columns, rows };
}

const TABLE = documentedTable(peopleAndRoles);

/** The operations the app has, read off its routes (as the OpenAPI document is). */
const APP_OPERATIONS = new Set(
  app.routes.flatMap(({ handler }) => {
    const id = marksOf(handler).operation?.operationId;
    return id === undefined ? [] : [id];
  }),
);

const ICON = {
  type: "image/png",
  content: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
};
const DATES = [{ start: "2030-05-01T10:00:00.000Z", end: "2030-05-01T12:00:00.000Z" }];

/** What an operation's path ids name: a row the test makes for each call. */
type Kind =
  "pinpoint" | "list" | "event" | "category" | "key" | "webhook" | "member" | "invitation" | "collaboration" | "client";
/**
 * A row of the account: its id (a client's is its client id), and for a list a pinpoint in it (for
 * events, their pinpoint); for a collaboration, the list and the person given it.
 */
type Target = { id: number | string; pinpoint?: number; person?: number };

/**
 * How to call each operation: the kind of row its path (or, for `createEvent` and `transferOwnership`, its
 * body) names, the path parameters that are not that row's id, and a valid body. `freshCaller`: the call
 * changes the caller's own role (a transfer makes its owner an admin), so each column calls it as a new
 * person of that column. `elsewhere`: what a member of another account gets, where it is not 403 or 404.
 */
type Call = {
  target?: Kind;
  params?: (target: Target | undefined) => Record<string, string | number>;
  body?: (target: Target | undefined) => unknown;
  freshCaller?: true;
  elsewhere?: number;
};
const ogc = (collectionId = "pinpoints"): Call => ({ params: () => ({ collectionId }) });
const tile: Call = { params: () => ({ z: 0, x: 0, y: 0 }) };

const CALLS: Record<string, Call> = {
  listPinpoints: {},
  getPinpoint: { target: "pinpoint" },
  createPinpoint: { body: () => ({ name: "New place", latitude: 48.8, longitude: 2.3 }) },
  updatePinpoint: { target: "pinpoint", body: () => ({ name: "Renamed place" }) },
  deletePinpoint: { target: "pinpoint" },
  listLists: {},
  getList: { target: "list" },
  createList: { body: () => ({ name: "New list" }) },
  updateList: { target: "list", body: () => ({ description: "<p>Changed</p>" }) },
  deleteList: { target: "list" },
  addListPinpoints: { target: "list", body: (t) => [{ id: t!.pinpoint }] },
  removeListPinpoints: { target: "list", body: (t) => [{ id: t!.pinpoint }] },
  // The list's newest member to its end, where it is: the order stays, and the answer is the list's.
  reorderListPinpoints: { target: "list", body: (t) => ({ move: t!.pinpoint, before: null }) },
  listEvents: {},
  getEvent: { target: "event" },
  createEvent: { target: "pinpoint", body: (t) => ({ name: "New event", pinpoint: t!.id, dates: DATES }) },
  updateEvent: { target: "event", body: () => ({ name: "Renamed event" }) },
  deleteEvent: { target: "event" },
  listCategories: {},
  getCategory: { target: "category" },
  createCategory: { body: () => ({ name: "New category", image_file: ICON }) },
  updateCategory: { target: "category", body: () => ({ name: "Renamed category" }) },
  deleteCategory: { target: "category" },
  listChanges: {},
  getTileMvt: tile,
  getTileGeojson: tile,
  getTileJson: {},
  getOgcLandingPage: {},
  getOgcConformance: {},
  getOgcApiDefinition: {},
  getOgcCollections: {},
  getOgcCollection: ogc(),
  getOgcCollectionSchema: ogc(),
  getOgcQueryables: ogc(),
  getOgcItems: ogc(),
  getOgcItem: { target: "pinpoint", params: (t) => ({ collectionId: "pinpoints", featureId: t!.id }) },
  listPublishableKeys: {},
  getPublishableKey: { target: "key" },
  createPublishableKey: { body: () => ({ name: "Site" }) },
  revokePublishableKey: { target: "key" },
  listWebhooks: {},
  getWebhook: { target: "webhook" },
  // Disabled, so that no delivery is attempted to a host the tests do not run.
  createWebhook: { body: () => ({ url: "https://hooks.example.com/poi", events: ["*"], enabled: false }) },
  updateWebhook: { target: "webhook", body: () => ({ description: "Changed" }) },
  deleteWebhook: { target: "webhook" },
  rotateWebhookSecret: { target: "webhook" },
  listWebhookDeliveries: { target: "webhook" },
  listMembers: {},
  updateMember: { target: "member", params: (t) => ({ person_id: t!.id }), body: () => ({ role: "viewer" }) },
  removeMember: { target: "member", params: (t) => ({ person_id: t!.id }) },
  // The member named is none of another account's owner's: 400 at /person_id, as for anyone not a member.
  transferOwnership: { target: "member", body: (t) => ({ person_id: t!.id }), freshCaller: true, elsewhere: 400 },
  listInvitations: {},
  createInvitation: { body: () => ({ email: `invited-${crypto.randomUUID()}@example.test`, role: "viewer" }) },
  revokeInvitation: { target: "invitation" },
  listCollaborators: { target: "list" },
  putCollaborator: {
    target: "list",
    params: () => ({ person_id: people.viewer.personId }),
    body: () => ({ role: "viewer" }),
  },
  removeCollaborator: { target: "collaboration", params: (t) => ({ person_id: t!.person! }) },
  listClients: {},
  createClient: { body: () => ({ name: "New client" }) },
  rotateClientSecret: { target: "client", params: (t) => ({ client_id: t!.id }) },
  revokeClient: { target: "client", params: (t) => ({ client_id: t!.id }) },
  leaveAccount: {},
  leaveList: {},
};

/** Collections whose `list` cell filters them; each compared with what the database holds. */
const COLLECTIONS: Record<string, { path: string; table: "pinpoints" | "lists" | "events" }> = {
  listPinpoints: { path: "/v3.0/pinpoints", table: "pinpoints" },
  listLists: { path: "/v3.0/lists", table: "lists" },
  listEvents: { path: "/v3.0/events", table: "events" },
};

type Who = Pick<Caller, "get" | "send">;
/** Where a fresh row is placed: made by someone else, created by the contributor, in one of the shared lists. */
type Placement = "account" | "own" | "list editor" | "list viewer";

let accountId: number;
let db: D1Database;
let client: Caller;
let people: Record<Column, PersonCaller>;
let removed: PersonCaller;
let elsewhere: PersonCaller;
/** The list the list editor edits and the list the list viewer reads. */
let shared: Record<"list editor" | "list viewer", number>;
/** Each operation's method and path template, from the OpenAPI document. */
let paths: Map<string, { method: string; path: string }>;
let document: Json;

beforeAll(async () => {
  document = await (await call("/v3.0/openapi.json")).json<Json>();
  paths = new Map(
    Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => [
        operation.operationId as string,
        { method: method.toUpperCase(), path },
      ]),
    ),
  );
  accountId = await createAccount();
  db = await contentDb(accountId);
  client = await caller("read write", accountId);
  shared = { "list editor": await insertList("Edited together"), "list viewer": await insertList("Read together") };
  people = {} as Record<Column, PersonCaller>;
  for (const column of COLUMNS) people[column] = await newPerson(column);
  removed = await personCaller("editor", { accountId });
  await env.DB.prepare("DELETE FROM members WHERE account_id = ? AND person_id = ?")
    .bind(accountId, removed.personId)
    .run();
  elsewhere = await personCaller("owner");
  // Rows in both lists and outside them, so that a collection's filter has something to leave out.
  for (const placement of ["account", "list editor", "list viewer", "account"] as const) {
    await makeEvent(placement);
  }
});

const actor = (person: PersonCaller) => `person:${person.personId}`;

/** A new person of the account in `column`: a member with that role, or given its shared list. */
function newPerson(column: Column): Promise<PersonCaller> {
  return column === "list editor" || column === "list viewer"
    ? personCaller(null, { accountId, lists: [[shared[column], column === "list editor" ? "editor" : "viewer"]] })
    : personCaller(column, { accountId });
}

async function insertList(name: string, createdBy: string | null = null): Promise<number> {
  const row = await db
    .prepare("INSERT INTO lists (account_id, name, created_by) VALUES (?, ?, ?) RETURNING id")
    .bind(accountId, name, createdBy)
    .first<{ id: number }>();
  return row!.id;
}

async function insertPinpoint(createdBy: string | null, list?: number): Promise<number> {
  const row = await db
    .prepare(
      "INSERT INTO pinpoints (account_id, name, latitude, longitude, created_by) VALUES (?, 'Place', 48.85, 2.35, ?) RETURNING id",
    )
    .bind(accountId, createdBy)
    .first<{ id: number }>();
  if (list !== undefined) {
    await db.prepare("INSERT INTO list_pinpoints (list_id, pinpoint_id) VALUES (?, ?)").bind(list, row!.id).run();
  }
  return row!.id;
}

const createdBy = (placement: Placement) => (placement === "own" ? actor(people.contributor) : null);
const listOf = (placement: Placement) =>
  placement === "list editor" || placement === "list viewer" ? shared[placement] : undefined;

const makePinpoint = async (placement: Placement): Promise<{ id: number }> => ({
  id: await insertPinpoint(createdBy(placement), listOf(placement)),
});

async function makeEvent(placement: Placement): Promise<Target & { id: number }> {
  // An own event may be at anyone's pinpoint: what is the contributor's is the event.
  const pinpoint = (await makePinpoint(placement === "own" ? "account" : placement)).id;
  const row = await db
    .prepare(
      "INSERT INTO events (account_id, pinpoint_id, name, dates, created_by) VALUES (?, ?, 'Event', ?, ?) RETURNING id",
    )
    .bind(
      accountId,
      pinpoint,
      JSON.stringify([{ start: Date.parse(DATES[0]!.start), end: Date.parse(DATES[0]!.end) }]),
      createdBy(placement),
    )
    .first<{ id: number }>();
  return { id: row!.id, pinpoint };
}

/** A list with a pinpoint in it: a shared list itself (with a new pinpoint), or a new list. */
async function makeList(placement: Placement): Promise<Target & { id: number }> {
  const id = listOf(placement) ?? (await insertList("Target", createdBy(placement)));
  return { id, pinpoint: await insertPinpoint(null, id) };
}

async function created(response: Response): Promise<number> {
  expect(response.status, await response.clone().text()).toBe(201);
  return (await json<{ id: number }>(response)).id;
}

/** A fresh row of `kind` placed as asked (keys and webhooks are the account's only). */
async function makeTarget(kind: Kind, placement: Placement): Promise<Target> {
  switch (kind) {
    case "pinpoint":
      return makePinpoint(placement);
    case "event":
      return makeEvent(placement);
    case "list":
      return makeList(placement);
    case "category": {
      const id = await created(await client.send("POST", "/v3.0/categories", { name: "Target", image_file: ICON }));
      // Every database holds every category (docs/scaling.md): each copy names its creator.
      for (const name of shardNames(env.SHARDS)) {
        await bindingNamed(env, name)
          .prepare("UPDATE categories SET created_by = ? WHERE id = ?")
          .bind(createdBy(placement), id)
          .run();
      }
      return { id };
    }
    case "key":
      return { id: await created(await client.send("POST", "/v3.0/keys", { name: "Target" })) };
    case "webhook":
      return {
        id: await created(
          await client.send("POST", "/v3.0/webhooks", {
            url: "https://hooks.example.com/t",
            events: ["*"],
            enabled: false,
          }),
        ),
      };
    case "member":
      return { id: (await personCaller("editor", { accountId })).personId };
    case "invitation": {
      const row = await env.DB.prepare(
        `INSERT INTO invitations (account_id, email, email_key, role, token_hash, invited_by, expires_at)
         VALUES (?1, ?2, ?2, 'viewer', ?3, 'client:roles', ?4) RETURNING id`,
      )
        .bind(accountId, `target-${crypto.randomUUID()}@example.test`, crypto.randomUUID(), Date.now() + 3_600_000)
        .first<{ id: number }>();
      return { id: row!.id };
    }
    case "collaboration": {
      const list = await makeList(placement);
      const { personId } = await createPerson();
      await env.DB.prepare(
        "INSERT INTO list_collaborators (account_id, list_id, person_id, role) VALUES (?, ?, ?, 'viewer')",
      )
        .bind(accountId, list.id, personId)
        .run();
      return { id: list.id, person: personId };
    }
    case "client":
      return { id: (await createClient("read", accountId)).clientId };
  }
}

/** The row's version, or null once it is gone: what a refused write must leave as it was. */
async function versionOf(kind: Kind, target: Target): Promise<number | null> {
  const table = { pinpoint: "pinpoints", list: "lists", event: "events", category: "categories" }[kind as string];
  if (!table) return null;
  const row = await db
    .prepare(`SELECT version FROM ${table} WHERE id = ?`)
    .bind(target.id)
    .first<{ version: number }>();
  return row?.version ?? null;
}

/** Calls `operation` as `who` on `target`. */
async function callAs(who: Who, operation: string, target?: Target): Promise<Response> {
  const { method, path } = paths.get(operation)!;
  const spec = CALLS[operation]!;
  const params: Record<string, string | number> = { ...(target ? { id: target.id } : {}), ...spec.params?.(target) };
  const url = path.replaceAll(/\{(\w+)\}/g, (_, name: string) => String(params[name]));
  const body = spec.body?.(target);
  return method === "GET" ? who.get(url) : who.send(method, url, body);
}

/** A 2xx whose batch result, if it is one, reports no failed item. */
async function expectSuccess(response: Response, label: string): Promise<void> {
  const type = response.headers.get("Content-Type") ?? "";
  // Every body is read; a vector tile's as bytes (read as text, workerd warns it is probably corrupted).
  let text = "";
  if (/json|^text\//.test(type)) text = await response.text();
  else await response.arrayBuffer();
  expect(response.status, `${label}: ${text.slice(0, 300)}`).toBeGreaterThanOrEqual(200);
  expect(response.status, `${label}: ${text.slice(0, 300)}`).toBeLessThan(300);
  const body = text && type.includes("json") ? JSON.parse(text) : null;
  if (body && typeof body.total === "number") expect(body.errors, label).toEqual([]);
}

/** Every id of a collection as `who` reads it, `limit` a page, forward, then backward from the last page. */
async function readAll(who: Who, path: string, limit: number): Promise<number[]> {
  type Page = { results: { id: number }[]; next: string | null; previous: string | null };
  const forward: Page[] = [];
  const first = `${path}${path.includes("?") ? "&" : "?"}limit=${limit}`;
  for (let url: string | null = first; url; url = forward[forward.length - 1]!.next) {
    const response = await who.get(url);
    expect(response.status, await response.clone().text()).toBe(200);
    forward.push(await json<Page>(response));
  }
  const backward: number[] = [];
  for (let url = forward[forward.length - 1]!.previous; url;) {
    const page = await json<Page>(await who.get(url));
    backward.unshift(...page.results.map((r) => r.id));
    url = page.previous;
  }
  const ids = forward.flatMap((page) => page.results.map((r) => r.id));
  expect([...backward, ...forward[forward.length - 1]!.results.map((r) => r.id)]).toEqual(ids);
  return ids;
}

/** What a collection holds for a reader of `lists` (null: the whole account), read straight from the database. */
async function expectedIds(
  table: "pinpoints" | "lists" | "events",
  lists: readonly number[] | null,
): Promise<number[]> {
  const inLists = "(SELECT pinpoint_id FROM list_pinpoints WHERE list_id IN (SELECT value FROM json_each(?2)))";
  const query = {
    pinpoints: `SELECT id FROM pinpoints WHERE account_id = ?1 AND (?2 IS NULL OR id IN ${inLists}) ORDER BY id`,
    lists:
      "SELECT id FROM lists WHERE account_id = ?1 AND (?2 IS NULL OR id IN (SELECT value FROM json_each(?2))) ORDER BY id",
    events: `SELECT id FROM events WHERE account_id = ?1 AND (?2 IS NULL OR pinpoint_id IN ${inLists}) ORDER BY id`,
  }[table];
  const { results } = await db
    .prepare(query)
    .bind(accountId, lists === null ? null : JSON.stringify(lists))
    .all<{ id: number }>();
  return results.map((r) => r.id);
}

/** The placement of a row the column's cell covers: its own, its list, or any of the account's. */
const insideFor = (column: Column, cell: string): Placement =>
  cell === "own" ? "own" : column === "list editor" || column === "list viewer" ? column : "account";

/** Checks one cell of the table: `column` calling `operation`. */
async function checkCell(operation: string, column: Column, cell: string): Promise<void> {
  const who = CALLS[operation]!.freshCaller ? await newPerson(column) : people[column];
  const kind = CALLS[operation]!.target;
  const label = `${column} ${operation}`;
  if (cell === "none") {
    const target = kind && (await makeTarget(kind, insideFor(column, cell)));
    const problem = await expectProblem(await callAs(who, operation, target), 403, { code: "role_forbidden" });
    expect(problem.detail, label).toContain(`(${column})`);
    return;
  }
  const collection = COLLECTIONS[operation];
  if (collection) {
    // A list's few rows in small pages, to walk several; the whole account's in one.
    const lists = cell === "list" ? [shared[column as "list editor" | "list viewer"]] : null;
    const ids = await readAll(who, collection.path, lists ? 2 : 1000);
    expect(ids, label).toEqual(await expectedIds(collection.table, lists));
    return;
  }
  const inside = kind && (await makeTarget(kind, insideFor(column, cell)));
  await expectSuccess(await callAs(who, operation, inside), `${label} on a row it covers`);
  if (cell === "all" || !kind) return;
  // own / list: a row of the account beyond it, which the answer must leave as it was.
  const outside = await makeTarget(kind, "account");
  const before = await versionOf(kind, outside);
  const response = await callAs(who, operation, outside);
  if (cell === "own") await expectProblem(response, 403, { code: "role_forbidden" });
  else if (operation === "createEvent") await expectProblem(response, 400, { pointers: ["/pinpoint"] });
  else await expectProblem(response, 404, { code: "not_found" });
  expect(await versionOf(kind, outside), `${label} left the row beyond it unchanged`).toBe(before);
}

describe("the table in docs/people-and-roles.md", () => {
  it("has the columns of the role table, and a client's", () => {
    expect(TABLE.columns).toEqual([...COLUMNS, "client"]);
  });

  it("is the table the service enforces (src/auth/roles.ts), cell by cell", () => {
    expect([...TABLE.rows.keys()].sort()).toEqual(Object.keys(PERMISSIONS).sort());
    for (const [operation, cells] of TABLE.rows) {
      const enforced = PERMISSIONS[operation as keyof typeof PERMISSIONS];
      for (const column of COLUMNS) expect(cells[column], `${operation} ${column}`).toBe(enforced[column]);
      const peopleOnly = PEOPLE_ONLY.has(operation as keyof typeof PERMISSIONS);
      expect(cells.client, `${operation} client`).toBe(peopleOnly ? "none" : "scope");
    }
  });

  /** The app's operations whose security includes `scheme` (OpenAPI `security`, src/openapi/document.ts). */
  const securedBy = (scheme: string) =>
    Object.values(document.paths as Record<string, Record<string, Json>>)
      .flatMap((methods) => Object.values(methods))
      .filter((operation) => (operation.security as Json[] | undefined)?.some((s) => scheme in s))
      .map((operation) => operation.operationId as string);

  it("has a row for every operation of the app that takes a token, but those on the person's own standing", () => {
    const secured = securedBy("bearer");
    expect(secured.length).toBeGreaterThan(40);
    expect(secured.filter((operation) => !TABLE.rows.has(operation))).toEqual([...OWN_STANDING]);
  });

  it("has none for what a signed-in person does in no account (the session cookie's operations)", () => {
    const personal = securedBy("session");
    expect(personal).toEqual(expect.arrayContaining(["getMe", "acceptInvitation"]));
    expect(personal.filter((operation) => TABLE.rows.has(operation))).toEqual([]);
  });

  it("has a way to call each of its operations the app has", () => {
    const operations = [...TABLE.rows.keys()].filter((operation) => APP_OPERATIONS.has(operation));
    expect(operations.filter((operation) => !CALLS[operation])).toEqual([]);
  });
});

const ROWS = [...TABLE.rows].map(([operation, cells]) => ({ operation, cells }));

describe.each(ROWS)("$operation", ({ operation, cells }) => {
  if (!APP_OPERATIONS.has(operation)) {
    it.skip(`is not in the app yet: its row is checked once it is (${JSON.stringify(cells)})`, () => {});
    return;
  }

  it.each(COLUMNS.map((column) => ({ column, cell: cells[column]! })))(
    "as $column: $cell",
    async ({ column, cell }) => {
      await checkCell(operation, column, cell);
    },
  );

  it(`as a client with read write: ${cells.client}`, async () => {
    const kind = CALLS[operation]!.target;
    const response = await callAs(client, operation, kind && (await makeTarget(kind, "account")));
    if (cells.client === "none") await expectProblem(response, 403, { code: "person_required" });
    else await expectSuccess(response, `client ${operation}`);
  });

  it("as a member removed from the account: 401", async () => {
    const kind = CALLS[operation]!.target;
    const response = await callAs(removed, operation, kind && (await makeTarget(kind, "account")));
    await expectProblem(response, 401, { code: "invalid_token" });
  });

  it("as an owner of another account: none of this account's rows", async () => {
    const kind = CALLS[operation]!.target;
    const response = await callAs(elsewhere, operation, kind && (await makeTarget(kind, "account")));
    if (!kind) return expectSuccess(response, `elsewhere ${operation}`);
    // Categories are shared: every account reads every one, and changes only its own.
    if (kind === "category" && paths.get(operation)!.method === "GET") {
      return expectSuccess(response, `elsewhere ${operation}`);
    }
    const text = await response.text();
    const beyond = CALLS[operation]!.elsewhere;
    expect(beyond === undefined ? [403, 404] : [beyond], `${operation}: ${text}`).toContain(response.status);
    expect(text).not.toContain("role_forbidden");
  });
});

describe("leaveAccount, on the person's own standing: no row of the table", () => {
  it.each(ROLES)("as a member with any role (%s): 204, and their token is refused from then on", async (role) => {
    // A member of their own, so the table's people stay; an owner beside the account's, who is not its last.
    const person = await personCaller(role, { accountId });
    expect((await callAs(person, "leaveAccount")).status).toBe(204);
    await expectProblem(await person.get("/v3.0/lists"), 401, { code: "invalid_token" });
  });

  it("as someone given lists only: 404, being no member", async () => {
    const person = await newPerson("list editor");
    await expectProblem(await callAs(person, "leaveAccount"), 404, { code: "not_found" });
  });

  it("as a client with read write: 403 person_required", async () => {
    await expectProblem(await callAs(client, "leaveAccount"), 403, { code: "person_required" });
  });

  it("as a member removed from the account: 401", async () => {
    await expectProblem(await callAs(removed, "leaveAccount"), 401, { code: "invalid_token" });
  });
});

describe("leaveList, on the person's own standing: no row of the table", () => {
  it.each(["editor", "viewer"] as const)(
    "as a list %s: 204, and the list is theirs no more; with nothing else of the account, they are refused",
    async (role) => {
      const list = await insertList(`Left by a ${role}`);
      const kept = await insertList(`Kept by a ${role}`);
      const person = await personCaller(null, {
        accountId,
        lists: [
          [list, role],
          [kept, role],
        ],
      });
      expect((await callAs(person, "leaveList", { id: list })).status).toBe(204);
      await expectProblem(await person.get(`/v3.0/lists/${list}`), 404);
      expect((await person.get(`/v3.0/lists/${kept}`)).status).toBe(200);
      // Leaving it twice, or a list never given: 404.
      await expectProblem(await callAs(person, "leaveList", { id: list }), 404, { code: "not_found" });
      expect((await callAs(person, "leaveList", { id: kept })).status).toBe(204);
      await expectProblem(await person.get("/v3.0/lists"), 401, { code: "invalid_token" });
    },
  );

  it("as a member given no list: 404, and their membership stays", async () => {
    const person = await personCaller("editor", { accountId });
    await expectProblem(await callAs(person, "leaveList", { id: shared["list editor"] }), 404, { code: "not_found" });
    expect((await person.get("/v3.0/lists")).status).toBe(200);
  });

  it("as a client with read write: 403 person_required", async () => {
    await expectProblem(await callAs(client, "leaveList", { id: shared["list editor"] }), 403, {
      code: "person_required",
    });
  });
});

/** A fresh account with its owner's client, and rows written straight to its database. */
async function account() {
  const id = await createAccount();
  const content = await contentDb(id);
  const owner = await caller("read write", id);
  const list = async (name: string, by: string | null = null) =>
    (await content
      .prepare("INSERT INTO lists (account_id, name, created_by) VALUES (?, ?, ?) RETURNING id")
      .bind(id, name, by)
      .first<{ id: number }>())!.id;
  /** A pinpoint named `name`, in `lists`, created by `by`. */
  const place = async (name: string, lists: number[] = [], by: string | null = null) => {
    const row = await content
      .prepare(
        "INSERT INTO pinpoints (account_id, name, latitude, longitude, created_by) VALUES (?, ?, 10, 20, ?) RETURNING id",
      )
      .bind(id, name, by)
      .first<{ id: number }>();
    for (const listId of lists) {
      await content
        .prepare("INSERT INTO list_pinpoints (list_id, pinpoint_id) VALUES (?, ?)")
        .bind(listId, row!.id)
        .run();
    }
    return row!.id;
  };
  const event = async (pinpoint: number, by: string | null = null) =>
    (await content
      .prepare(
        "INSERT INTO events (account_id, pinpoint_id, name, dates, created_by) VALUES (?, ?, 'Event', ?, ?) RETURNING id",
      )
      .bind(id, pinpoint, JSON.stringify([{ start: 1_900_000_000_000, end: 1_900_000_360_000 }]), by)
      .first<{ id: number }>())!.id;
  const version = async (table: string, rowId: number) =>
    (await content.prepare(`SELECT version FROM ${table} WHERE id = ?`).bind(rowId).first<{ version: number }>())
      ?.version;
  return { id, content, owner, list, place, event, version };
}

describe("a person given one list to edit and another to read", () => {
  let a: Awaited<ReturnType<typeof account>>;
  let person: PersonCaller;
  let edited: number;
  let read: number;
  let other: number;
  let places: { edited: number[]; read: number[]; both: number; outside: number[] };
  let foreign: { list: number; place: number };

  /** What the database holds for a reader of the two lists. */
  const inLists = async (query: string) =>
    (
      await a.content
        .prepare(query)
        .bind(JSON.stringify([edited, read]))
        .all<{ id: number }>()
    ).results.map((r) => r.id);
  const PLACES_IN_LISTS =
    "SELECT DISTINCT pinpoint_id AS id FROM list_pinpoints WHERE list_id IN (SELECT value FROM json_each(?)) ORDER BY id";
  const EVENTS_IN_LISTS = `SELECT id FROM events WHERE pinpoint_id IN (${PLACES_IN_LISTS.replace(" ORDER BY id", "")}) ORDER BY id`;

  beforeAll(async () => {
    a = await account();
    [edited, read, other] = [await a.list("Edited"), await a.list("Read"), await a.list("Not shared")];
    places = { edited: [], read: [], both: 0, outside: [] };
    // Interleaved, so that every page of a list's places skips rows of the account it cannot see.
    for (let i = 0; i < 5; i++) {
      places.outside.push(await a.place(`Harbour outside ${i}`, i % 2 ? [other] : []));
      places.edited.push(await a.place(`Harbour edited ${i}`, [edited]));
      places.outside.push(await a.place(`Market outside ${i}`));
      places.read.push(await a.place(`Harbour read ${i}`, [read]));
    }
    places.both = await a.place("Harbour both", [edited, read]);
    for (const place of [...places.edited, ...places.read, ...places.outside]) await a.event(place);
    person = await personCaller(null, {
      accountId: a.id,
      lists: [
        [edited, "editor"],
        [read, "viewer"],
      ],
    });
    const b = await account();
    foreign = { list: await b.list("Theirs"), place: await b.place("Theirs") };
  });

  it("reads the lists, the places in them and their events, page by page both ways, and nothing else", async () => {
    expect(await readAll(person, "/v3.0/lists", 1)).toEqual([edited, read]);
    const placesInLists = await inLists(PLACES_IN_LISTS);
    expect(placesInLists).toHaveLength(11);
    expect(await readAll(person, "/v3.0/pinpoints", 2)).toEqual(placesInLists);
    const eventsInLists = await inLists(EVENTS_IN_LISTS);
    expect(eventsInLists).toHaveLength(10);
    expect(await readAll(person, "/v3.0/events", 3)).toEqual(eventsInLists);
  });

  it("searches within the lists only", async () => {
    const found = async (path: string) =>
      (await json<{ results: { id: number }[] }>(await person.get(path))).results
        .map((r) => r.id)
        .sort((x, y) => x - y);
    const harbours = [...places.edited, ...places.read, places.both].sort((x, y) => x - y);
    expect(await found("/v3.0/pinpoints?q=harbour&limit=100")).toEqual(harbours);
    expect(await found("/v3.0/pinpoints?bbox=19,9,21,11&limit=100")).toEqual(await inLists(PLACES_IN_LISTS));
    expect(await found("/v3.0/pinpoints?latitude=10&longitude=20&limit=100")).toEqual(await inLists(PLACES_IN_LISTS));
    expect(await found("/v3.0/events?bbox=19,9,21,11&limit=100")).toEqual(await inLists(EVENTS_IN_LISTS));
  });

  it("filters by its lists and their places; any other of the account's is absent (404), another account's 403", async () => {
    expect(await readAll(person, `/v3.0/pinpoints?list=${edited}`, 2)).toEqual([...places.edited, places.both]);
    await expectProblem(await person.get(`/v3.0/pinpoints?list=${other}`), 404, { code: "not_found" });
    await expectProblem(await person.get(`/v3.0/pinpoints?list=${other}&q=harbour`), 404, { code: "not_found" });
    await expectProblem(await person.get(`/v3.0/pinpoints?list=${foreign.list}`), 403, { code: "forbidden" });
    expect((await person.get(`/v3.0/events?pinpoint=${places.read[0]}`)).status).toBe(200);
    await expectProblem(await person.get(`/v3.0/events?pinpoint=${places.outside[0]}`), 404, { code: "not_found" });
    await expectProblem(await person.get(`/v3.0/events?pinpoint=${places.outside[0]}&q=x`), 404, { code: "not_found" });
    await expectProblem(await person.get(`/v3.0/events?pinpoint=${foreign.place}`), 403, { code: "forbidden" });
    await expectProblem(await person.get(`/v3.0/pinpoints/${places.outside[1]}`), 404, { code: "not_found" });
    await expectProblem(await person.get(`/v3.0/lists/${other}`), 404, { code: "not_found" });
    await expectProblem(await person.get(`/v3.0/pinpoints/${foreign.place}`), 403, { code: "forbidden" });
  });

  it("changes what the list it edits holds; what it only reads is 403, what it cannot see 404, and stays as it was", async () => {
    const [readOnly, unseen] = [places.read[0]!, places.outside[0]!];
    const before = [await a.version("pinpoints", readOnly), await a.version("pinpoints", unseen)];
    expect((await person.send("PUT", `/v3.0/pinpoints/${places.edited[0]}`, { name: "Renamed" })).status).toBe(200);
    // Also in the list it edits: the list decides, not the one it reads it through.
    expect((await person.send("PUT", `/v3.0/pinpoints/${places.both}`, { name: "Renamed" })).status).toBe(200);
    const problem = await expectProblem(await person.send("PUT", `/v3.0/pinpoints/${readOnly}`, { name: "x" }), 403, {
      code: "role_forbidden",
    });
    expect(problem.detail).toContain("(list editor)");
    await expectProblem(await person.send("PUT", `/v3.0/pinpoints/${unseen}`, { name: "x" }), 404, {
      code: "not_found",
    });
    expect([await a.version("pinpoints", readOnly), await a.version("pinpoints", unseen)]).toEqual(before);

    expect((await person.send("PUT", `/v3.0/lists/${edited}`, { description: "Ours" })).status).toBe(200);
    await expectProblem(await person.send("PUT", `/v3.0/lists/${read}`, { name: "x" }), 403, {
      code: "role_forbidden",
    });
    await expectProblem(await person.send("PUT", `/v3.0/lists/${other}`, { name: "x" }), 404, { code: "not_found" });
  });

  it("puts in its list what it sees, and reports what it cannot see as not found", async () => {
    const response = await person.send("POST", `/v3.0/lists/${edited}/pinpoints`, [
      { id: places.read[1] },
      { id: places.outside[2] },
      { id: foreign.place },
      { id: 987654321 },
    ]);
    expect(await json(response)).toEqual({
      total: 4,
      errors: [
        { index: 1, id: places.outside[2], error: "not_found" },
        { index: 2, id: foreign.place, error: "forbidden" },
        { index: 3, id: 987654321, error: "not_found" },
      ],
    });
    const members = await a.content
      .prepare("SELECT pinpoint_id FROM list_pinpoints WHERE list_id = ?")
      .bind(edited)
      .all<{ pinpoint_id: number }>();
    expect(members.results.map((m) => m.pinpoint_id)).toContain(places.read[1]);
    expect(members.results.map((m) => m.pinpoint_id)).not.toContain(places.outside[2]);
    // Taking out what is not in the list and unseen: not found, as in a list it does not see.
    const removed = await person.send("DELETE", `/v3.0/lists/${edited}/pinpoints`, [{ id: places.outside[3] }]);
    expect(await json(removed)).toEqual({
      total: 1,
      errors: [{ index: 0, id: places.outside[3], error: "not_found" }],
    });

    const readVersion = await a.version("lists", read);
    await expectProblem(await person.send("POST", `/v3.0/lists/${read}/pinpoints`, [{ id: places.read[1] }]), 403, {
      code: "role_forbidden",
    });
    await expectProblem(await person.send("POST", `/v3.0/lists/${other}/pinpoints`, [{ id: places.read[1] }]), 404, {
      code: "not_found",
    });
    expect(await a.version("lists", read)).toBe(readVersion);
  });

  it("places events only at the places of the list it edits, creating or moving them", async () => {
    const event = (pinpoint: number) => ({ name: "Tour", pinpoint, dates: DATES });
    const made = await person.send("POST", "/v3.0/events", event(places.edited[1]!));
    expect(made.status).toBe(201);
    const { id } = await json<{ id: number }>(made);
    await expectProblem(await person.send("POST", "/v3.0/events", event(places.read[2]!)), 403, {
      code: "role_forbidden",
    });
    await expectProblem(await person.send("POST", "/v3.0/events", event(places.outside[1]!)), 400, {
      pointers: ["/pinpoint"],
    });
    await expectProblem(await person.send("PUT", `/v3.0/events/${id}`, { pinpoint: places.read[2] }), 403, {
      code: "role_forbidden",
    });
    await expectProblem(await person.send("PUT", `/v3.0/events/${id}`, { pinpoint: places.outside[1] }), 400, {
      pointers: ["/pinpoint"],
    });
    const moved = await person.send("PUT", `/v3.0/events/${id}`, { pinpoint: places.edited[2] });
    expect(moved.status).toBe(200);
    expect((await json<{ pinpoint: number }>(moved)).pinpoint).toBe(places.edited[2]);

    const atRead = (await a.content
      .prepare("SELECT id FROM events WHERE pinpoint_id = ?")
      .bind(places.read[3])
      .first<{ id: number }>())!.id;
    await expectProblem(await person.send("DELETE", `/v3.0/events/${atRead}`), 403, { code: "role_forbidden" });
    expect((await person.send("DELETE", `/v3.0/events/${id}`)).status).toBe(204);
  });
});

describe("a contributor", () => {
  it("changes what it created and what a list it edits holds, nothing else, under many parallel requests", async () => {
    const a = await account();
    const shared = await a.list("Shared with the contributor");
    const contributor = await personCaller("contributor", { accountId: a.id });
    await env.DB.prepare(
      "INSERT INTO list_collaborators (account_id, list_id, person_id, role) VALUES (?, ?, ?, 'editor')",
    )
      .bind(a.id, shared, contributor.personId)
      .run();
    const mine = `person:${contributor.personId}`;
    const own = await Promise.all(Array.from({ length: 8 }, (_, i) => a.place(`Own ${i}`, [], mine)));
    const inShared = await Promise.all(Array.from({ length: 8 }, (_, i) => a.place(`Shared ${i}`, [shared])));
    const others = await Promise.all(Array.from({ length: 8 }, (_, i) => a.place(`Other ${i}`)));
    const answers = await Promise.all(
      [...own, ...inShared, ...others].map((id) =>
        contributor.send("PUT", `/v3.0/pinpoints/${id}`, { name: "Mine now" }),
      ),
    );
    const statuses = answers.map((response) => response.status);
    expect(statuses).toEqual([...Array(16).fill(200), ...Array(8).fill(403)]);
    for (const response of answers.slice(16)) {
      expect((await json<{ type: string }>(response)).type).toBe("urn:poi-api:problem:role_forbidden");
    }
    const versions = await Promise.all([...own, ...inShared, ...others].map((id) => a.version("pinpoints", id)));
    expect(versions).toEqual([...Array(16).fill(2), ...Array(8).fill(1)]);

    // Its own list, and the one shared with it; not another's.
    const ownList = await a.list("Own list", mine);
    const othersList = await a.list("Another's list");
    expect((await contributor.send("PUT", `/v3.0/lists/${ownList}`, { name: "Renamed" })).status).toBe(200);
    expect((await contributor.send("PUT", `/v3.0/lists/${shared}`, { name: "Renamed" })).status).toBe(200);
    const problem = await expectProblem(await contributor.send("DELETE", `/v3.0/lists/${othersList}`), 403, {
      code: "role_forbidden",
    });
    expect(problem.detail).toContain("(contributor)");
    // Its own list does not make another's places its own: it may put them in, not change them.
    const added = await contributor.send("POST", `/v3.0/lists/${ownList}/pinpoints`, [{ id: others[0] }]);
    expect(await json(added)).toEqual({ total: 1, errors: [] });
    await expectProblem(await contributor.send("PUT", `/v3.0/pinpoints/${others[0]}`, { name: "x" }), 403, {
      code: "role_forbidden",
    });
    // A list editor deletes nothing of a list: being a contributor too adds only what it created.
    await expectProblem(await contributor.send("DELETE", `/v3.0/pinpoints/${inShared[0]}`), 403, {
      code: "role_forbidden",
    });
    await expectProblem(await contributor.send("DELETE", `/v3.0/lists/${shared}`), 403, { code: "role_forbidden" });
    expect((await contributor.send("DELETE", `/v3.0/pinpoints/${own[0]}`)).status).toBe(204);
  });

  it("is held to its new role at its very next request", async () => {
    const a = await account();
    const place = await a.place("Anyone's");
    const editor = await personCaller("editor", { accountId: a.id });
    expect((await editor.send("PUT", `/v3.0/pinpoints/${place}`, { name: "First" })).status).toBe(200);
    await env.DB.prepare("UPDATE members SET role = 'contributor', version = version + 1 WHERE person_id = ?")
      .bind(editor.personId)
      .run();
    await expectProblem(await editor.send("PUT", `/v3.0/pinpoints/${place}`, { name: "Second" }), 403, {
      code: "role_forbidden",
    });
    await env.DB.prepare("UPDATE members SET role = 'viewer', version = version + 1 WHERE person_id = ?")
      .bind(editor.personId)
      .run();
    const problem = await expectProblem(
      await editor.send("POST", "/v3.0/pinpoints", { name: "x", latitude: 1, longitude: 2 }),
      403,
      {
        code: "role_forbidden",
      },
    );
    expect(problem.detail).toContain("(viewer)");
    expect(problem.detail).toContain("createPinpoint");
  });
});

describe("operations at the table's edges", () => {
  const ok = (summary: string, operationId: string) =>
    operation({ summary, operationId, responses: { 200: z.object({}) } })((c) => c.json({}));
  /**
   * The app's own middleware around a resource sub-app with routes the app does not have: an operation the
   * table has no row for, a route with no operation at all, and one the table says only people may call.
   */
  const probe = new Hono<AppEnv>().use(withConfig, d1Session).route(
    "/probe",
    resourceApp()
      .get("/", ...ok("A new operation", "newOperation"))
      .get("/undocumented", (c) => c.json({}))
      .get("/members", ...ok("List the members", "listMembers")),
  );
  probe.onError(onError);
  async function send(path: string, token: string): Promise<Response> {
    const ctx = createExecutionContext();
    const request = new Request(`https://api.example.test${path}`, { headers: { Authorization: `Bearer ${token}` } });
    const response = await probe.fetch(request, env, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  it("refuses an operation without a row to every person (role_forbidden), and leaves it to a client's scopes", async () => {
    const owner = await personCaller("owner");
    const client = await caller("read", owner.accountId);
    for (const path of ["/probe", "/probe/undocumented"]) {
      await expectProblem(await send(path, owner.token), 403, { code: "role_forbidden" });
      expect((await send(path, client.token)).status).toBe(200);
    }
  });

  it("refuses what only people may call to a client whatever its scopes (person_required), not to people", async () => {
    const a = await account();
    const owner = await personCaller("owner", { accountId: a.id });
    const viewer = await personCaller("viewer", { accountId: a.id });
    const listViewer = await personCaller(null, { accountId: a.id, lists: [[await a.list("Probe"), "viewer"]] });
    const client = a.owner;
    await expectProblem(await send("/probe/members", client.token), 403, { code: "person_required" });
    expect((await send("/probe/members", owner.token)).status).toBe(200);
    expect((await send("/probe/members", viewer.token)).status).toBe(200);
    await expectProblem(await send("/probe/members", listViewer.token), 403, { code: "role_forbidden" });
  });
});

describe("a list collaborator's page", () => {
  /** A D1 database that counts the rows its statements read (D1's `meta.rows_read`). */
  function counting(db: D1Database) {
    const read = { rows: 0 };
    const d1 = {
      prepare: (query: string) => {
        const statement = db.prepare(query);
        return {
          bind: (...values: unknown[]) => {
            const bound = statement.bind(...values);
            return {
              all: async () => {
                const result = await bound.all();
                read.rows += result.meta.rows_read;
                return result;
              },
            };
          },
        };
      },
    } as unknown as D1Database;
    return { d1, read };
  }

  /**
   * An account where `outside` places (each with an event) lie before, between and after the 40 places of a
   * list (each with an event), and the rows the first page and a middle page of each collection read.
   */
  async function rowsRead(outside: number) {
    const a = await account();
    const list = await a.list("Shared");
    const insert = (n: number, name: string) =>
      a.content
        .prepare(
          `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2)
           INSERT INTO pinpoints (account_id, name, latitude, longitude) SELECT ?1, ?3 || i, 0, 0 FROM seq RETURNING id`,
        )
        .bind(a.id, n, name)
        .all<{ id: number }>();
    const members: number[] = [];
    for (let block = 0; block < 4; block++) {
      await insert(outside / 4, "outside ");
      const { results } = await insert(10, "member ");
      members.push(...results.map((r) => r.id));
    }
    await a.content
      .prepare("INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT ?, value FROM json_each(?)")
      .bind(list, JSON.stringify(members))
      .run();
    await a.content
      .prepare(
        `INSERT INTO events (account_id, pinpoint_id, name, dates)
         SELECT account_id, id, 'Event', '[{"start":1900000000000,"end":1900000360000}]' FROM pinpoints WHERE account_id = ?`,
      )
      .bind(a.id)
      .run();
    const middle = (ids: { id: number }[]) => ({ direction: "after" as const, key: [ids[19]!.id] });
    const measure = async <T extends { id: number }>(
      page: (d1: D1Database, id: number, lists: number[], bound: Bound, take: number) => Promise<T[]>,
    ) => {
      const first = counting(a.content);
      const rows = await page(first.d1, a.id, [list], null, 11);
      const later = counting(a.content);
      const all = await page(a.content, a.id, [list], null, 1000);
      const after = await page(later.d1, a.id, [list], middle(all), 11);
      return { first: first.read.rows, later: later.read.rows, ids: [rows.map((r) => r.id), after.map((r) => r.id)] };
    };
    const events = await a.content
      .prepare("SELECT id FROM events WHERE pinpoint_id IN (SELECT value FROM json_each(?)) ORDER BY id")
      .bind(JSON.stringify(members))
      .all<{ id: number }>();
    return {
      pinpoints: await measure(pageListsPinpoints),
      events: await measure(pageListsEvents),
      expected: {
        pinpoints: [members.slice(0, 11), members.slice(20, 31)],
        events: [events.results.slice(0, 11), events.results.slice(20, 31)].map((page) => page.map((r) => r.id)),
      },
    };
  }

  it("reads what its lists hold, however much else the account holds", async () => {
    const small = await rowsRead(40);
    const large = await rowsRead(4000);
    for (const measured of [small, large]) {
      expect(measured.pinpoints.ids).toEqual(measured.expected.pinpoints);
      expect(measured.events.ids).toEqual(measured.expected.events);
    }
    for (const collection of ["pinpoints", "events"] as const) {
      expect(large[collection].first, collection).toBe(small[collection].first);
      expect(large[collection].later, collection).toBe(small[collection].later);
      // A page of 11 from a list of 40: its members and their rows, never the account's 4,000 others.
      expect(large[collection].first, collection).toBeLessThan(200);
    }
  });
});
