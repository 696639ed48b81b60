/**
 * Who did it (src/auth/actor.ts, docs/people-and-roles.md "Who did it"):
 * every write names its actor, a client or a person, on the rows it writes
 * (`created_by` once, `updated_by` at every write), in the change feed and in
 * webhook payloads; a response reads the names of all its actors in one
 * directory query; publishable keys see none of it; a moved account keeps it.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { NAME_FRESH_MS } from "../src/auth/actor";
import { clock } from "../src/core/clock";
import { moveAccount } from "../src/db/move";
import { shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";
import worker from "../src/index";
import {
  BASE,
  batchOf,
  call,
  caller,
  contentDb,
  createAccount,
  createClient,
  createList,
  createPerson,
  createPinpoint,
  fetchWith,
  json,
  personCaller,
  received,
  receiverUrl,
  shardOf,
  type Caller,
  type PersonCaller,
} from "./helpers";
import { base64, samples } from "./media-fixtures";

type Actor = { type: "person"; id: number; name: string | null } | { type: "client"; id: string; name: string | null };
type Written = { id: number; version?: number; created_by: Actor | null; updated_by: Actor | null };
type Entry = { type: string; id: number; op: string; version: number; actor: Actor | null; object?: Written };
type Payload = {
  type: string;
  data: { type: string; id: number; deleted: boolean; actor: Actor | null; object: Written | null };
};

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** Moves the service's clock `ms` ahead. */
function advance(ms: number): void {
  const offset = clock.now() - Date.now() + ms;
  clock.now = () => Date.now() + offset;
}

const clientActor = (who: Caller, name = "test"): Actor => ({ type: "client", id: who.clientId, name });

async function personName(personId: number): Promise<string> {
  const row = await env.DB.prepare("SELECT name FROM people WHERE id = ?").bind(personId).first<{ name: string }>();
  return row!.name;
}

async function personActor(who: PersonCaller): Promise<Actor> {
  return { type: "person", id: who.personId, name: await personName(who.personId) };
}

/** The stored columns of a content row, as the service wrote them. */
async function stored(accountId: number, table: string, id: number) {
  return (await contentDb(accountId))
    .prepare(`SELECT created_by, updated_by, version FROM ${table} WHERE id = ?`)
    .bind(id)
    .first<{ created_by: string | null; updated_by: string | null; version: number }>();
}

const icon = () => ({ name: "icon.png", type: "image/png", content: base64(samples["image/png"]) });

async function ok<T = Written>(response: Response, status = 200): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(status);
  return json<T>(response);
}

const eventBody = (pinpoint: number) => ({
  name: "Fair",
  pinpoint,
  dates: [{ start: "2030-05-01T10:00:00Z", end: "2030-05-01T12:00:00Z" }],
});

/** The feed's cursor now. */
async function feedStart(who: Pick<Caller, "get">): Promise<string> {
  return (await json<{ cursor: string }>(await who.get("/v3.0/changes"))).cursor;
}

/** Every entry after `cursor`, with the objects. */
async function feedAfter(who: Pick<Caller, "get">, cursor: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  let url: string | null = `/v3.0/changes?include=objects&limit=1000&cursor=${encodeURIComponent(cursor)}`;
  while (url) {
    const feed: { results: Entry[]; next: string | null } = await ok(await who.get(url));
    entries.push(...feed.results);
    url = feed.next;
  }
  return entries;
}

let a: Caller;
let editor: PersonCaller;
beforeAll(async () => {
  a = await caller();
  editor = await personCaller("editor", { accountId: a.accountId });
});

describe("every write names its actor", () => {
  it("a client's writes carry the client, stored as client:<id>", async () => {
    const place = await ok(await a.send("POST", "/v3.0/pinpoints", { name: "P", latitude: 1, longitude: 2 }), 201);
    const list = await ok(await a.send("POST", "/v3.0/lists", { name: "L" }), 201);
    const event = await ok(await a.send("POST", "/v3.0/events", eventBody(place.id)), 201);
    const category = await ok(await a.send("POST", "/v3.0/categories", { name: "C", image_file: icon() }), 201);
    for (const [table, object] of [
      ["pinpoints", place],
      ["lists", list],
      ["events", event],
      ["categories", category],
    ] as const) {
      expect(object.created_by, table).toEqual(clientActor(a));
      expect(object.updated_by, table).toEqual(clientActor(a));
      expect(await stored(a.accountId, table, object.id)).toMatchObject({
        created_by: `client:${a.clientId}`,
        updated_by: `client:${a.clientId}`,
      });
      // A GET shows what the write answered.
      expect(await ok<Written>(await a.get(`/v3.0/${table}/${object.id}`))).toEqual(object);
    }
  });

  it("a person's writes carry the person, with their name", async () => {
    const me = await personActor(editor);
    expect(me.name).toMatch(/^Person \d+$/);
    const place = await ok(await editor.send("POST", "/v3.0/pinpoints", { name: "P", latitude: 1, longitude: 2 }), 201);
    const list = await ok(await editor.send("POST", "/v3.0/lists", { name: "L" }), 201);
    const event = await ok(await editor.send("POST", "/v3.0/events", eventBody(place.id)), 201);
    const category = await ok(await editor.send("POST", "/v3.0/categories", { name: "C", image_file: icon() }), 201);
    for (const [table, object] of [
      ["pinpoints", place],
      ["lists", list],
      ["events", event],
      ["categories", category],
    ] as const) {
      expect(object.created_by, table).toEqual(me);
      expect(object.updated_by, table).toEqual(me);
      expect(await stored(a.accountId, table, object.id)).toMatchObject({
        created_by: `person:${editor.personId}`,
        updated_by: `person:${editor.personId}`,
      });
      // The client of the same account reads the person's name too.
      expect((await ok<Written>(await a.get(`/v3.0/${table}/${object.id}`))).created_by).toEqual(me);
    }
  });

  it("keeps created_by when another actor changes the object; updated_by follows every write", async () => {
    const me = await personActor(editor);
    const place = await createPinpoint(a);
    const list = await createList(a);
    const event = await ok(await a.send("POST", "/v3.0/events", eventBody(place.id)), 201);
    const category = await ok(await a.send("POST", "/v3.0/categories", { name: "C", image_file: icon() }), 201);
    for (const [path, body] of [
      [`/v3.0/pinpoints/${place.id}`, { name: "Renamed" }],
      [`/v3.0/lists/${list.id}`, { description: "<p>new</p>" }],
      [`/v3.0/events/${event.id}`, { tags: ["x"] }],
      [`/v3.0/categories/${category.id}`, { name: "Renamed" }],
    ] as const) {
      const changed = await ok<Written>(await editor.send("PUT", path, body));
      expect(changed.created_by, path).toEqual(clientActor(a));
      expect(changed.updated_by, path).toEqual(me);
      expect(await ok<Written>(await a.get(path))).toEqual(changed);
      // And back: the client's write makes it the last writer again, the creator unchanged.
      const again = await ok<Written>(await a.send("PUT", path, body));
      expect(again).toMatchObject({ created_by: clientActor(a), updated_by: clientActor(a) });
    }
    // An empty change is no write: it names nobody new.
    const unchanged = await ok<Written>(await editor.send("PUT", `/v3.0/pinpoints/${place.id}`, {}));
    expect(unchanged.updated_by).toEqual(clientActor(a));
  });

  it("a list's membership change makes its writer the list's updated_by, once per batch and only if it changed", async () => {
    const me = await personActor(editor);
    const list = await createList(a);
    const places = [await createPinpoint(a), await createPinpoint(a)];
    const items = places.map(({ id }) => ({ id }));
    await ok(await editor.send("POST", `/v3.0/lists/${list.id}/pinpoints`, items));
    const after = await stored(a.accountId, "lists", list.id);
    expect(after).toEqual({ created_by: `client:${a.clientId}`, updated_by: `person:${editor.personId}`, version: 2 });
    expect(await ok<Written>(await a.get(`/v3.0/lists/${list.id}`))).toMatchObject({
      created_by: clientActor(a),
      updated_by: me,
    });
    // A batch that changes nothing (members already) is no write of the list.
    await ok(await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, items));
    expect(await stored(a.accountId, "lists", list.id)).toEqual(after);
    await ok(await a.send("DELETE", `/v3.0/lists/${list.id}/pinpoints`, items.slice(0, 1)));
    expect(await stored(a.accountId, "lists", list.id)).toMatchObject({
      updated_by: `client:${a.clientId}`,
      version: 3,
    });
  });

  it("a GeoJSON import names its writer on every place", async () => {
    const response = await editor.send(
      "POST",
      "/v3.0/pinpoints",
      {
        type: "FeatureCollection",
        features: [1, 2, 3].map((n) => ({
          type: "Feature",
          geometry: { type: "Point", coordinates: [n, n] },
          properties: { name: `Imported ${n}` },
        })),
      },
      { "Content-Type": "application/geo+json" },
    );
    const { ids } = await ok<{ ids: number[] }>(response, 201);
    const me = await personActor(editor);
    for (const id of ids) {
      expect(await ok<Written>(await a.get(`/v3.0/pinpoints/${id}`))).toMatchObject({ created_by: me, updated_by: me });
    }
  });

  it("an idempotent replay writes nothing again and answers as the first time", async () => {
    const key = crypto.randomUUID();
    const body = { name: "Once", latitude: 1, longitude: 1 };
    const first = await a.send("POST", "/v3.0/pinpoints", body, { "Idempotency-Key": key });
    const created = await ok<Written>(first, 201);
    // The account's other writer replays it: the same answer, the same single row, its writer unchanged.
    const replay = await editor.send("POST", "/v3.0/pinpoints", body, { "Idempotency-Key": key });
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await ok<Written>(replay, 201)).toEqual(created);
    expect(await stored(a.accountId, "pinpoints", created.id)).toEqual({
      created_by: `client:${a.clientId}`,
      updated_by: `client:${a.clientId}`,
      version: 1,
    });
    const named = await (
      await contentDb(a.accountId)
    )
      .prepare("SELECT count(*) AS n FROM pinpoints WHERE account_id = ? AND name = 'Once'")
      .bind(a.accountId)
      .first<{ n: number }>();
    expect(named!.n).toBe(1);
  });

  it("a refused write (412) stamps nothing and logs nothing", async () => {
    const place = await createPinpoint(a);
    const list = await createList(a);
    await ok(await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: place.id }]));
    const event = await ok(await a.send("POST", "/v3.0/events", eventBody(place.id)), 201);
    const cursor = await feedStart(a);
    const before = await Promise.all([
      stored(a.accountId, "pinpoints", place.id),
      stored(a.accountId, "lists", list.id),
      stored(a.accountId, "events", event.id),
    ]);
    for (const path of [`/v3.0/pinpoints/${place.id}`, `/v3.0/lists/${list.id}`, `/v3.0/events/${event.id}`]) {
      expect((await editor.send("DELETE", path, undefined, { "If-Match": '"99"' })).status, path).toBe(412);
    }
    expect(
      await Promise.all([
        stored(a.accountId, "pinpoints", place.id),
        stored(a.accountId, "lists", list.id),
        stored(a.accountId, "events", event.id),
      ]),
    ).toEqual(before);
    expect(await feedAfter(a, cursor)).toEqual([]);
  });
});

describe("the change feed and webhooks name who did it", () => {
  it("every entry names its actor, deletions and their cascades included; objects carry created_by/updated_by", async () => {
    const me = await personActor(editor);
    const place = await createPinpoint(a);
    const list = await createList(a);
    await ok(await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: place.id }]));
    const event = await ok(await a.send("POST", "/v3.0/events", eventBody(place.id)), 201);
    const category = await ok(await a.send("POST", "/v3.0/categories", { name: "C", image_file: icon() }), 201);
    const doomed = await createList(a);
    const cursor = await feedStart(a);

    const renamed = await ok<Written>(await editor.send("PUT", `/v3.0/pinpoints/${place.id}`, { name: "R" }));
    // Deleting the place deletes its event and leaves the list: the person did all three.
    expect((await editor.send("DELETE", `/v3.0/pinpoints/${place.id}`)).status).toBe(204);
    expect((await editor.send("DELETE", `/v3.0/categories/${category.id}`)).status).toBe(204);
    expect((await a.send("DELETE", `/v3.0/lists/${doomed.id}`)).status).toBe(204);
    const created = await createPinpoint(editor);

    const entries = await feedAfter(a, cursor);
    const byKey = new Map(entries.map((entry) => [`${entry.type} ${entry.id}`, entry]));
    // The place's deletion and what it cascaded to first (in the order SQLite ran them), then the rest.
    const shown = entries.map((e) => `${e.type} ${e.id} ${e.op}`);
    expect(shown.slice(0, 3).sort()).toEqual(
      [`event ${event.id} delete`, `list ${list.id} upsert`, `pinpoint ${place.id} delete`].sort(),
    );
    expect(shown.slice(3)).toEqual([
      `category ${category.id} delete`,
      `list ${doomed.id} delete`,
      `pinpoint ${created.id} upsert`,
    ]);
    expect(renamed.updated_by).toEqual(me);
    for (const key of [`event ${event.id}`, `pinpoint ${place.id}`, `category ${category.id}`]) {
      expect(byKey.get(key)!.actor, key).toEqual(me);
    }
    expect(byKey.get(`list ${doomed.id}`)!.actor).toEqual(clientActor(a));
    // The list the place left: its new version is the person's write, its creator the client.
    const left = byKey.get(`list ${list.id}`)!;
    expect(left.actor).toEqual(me);
    expect(left.object).toMatchObject({ created_by: clientActor(a), updated_by: me });
    expect(await stored(a.accountId, "lists", list.id)).toMatchObject({ updated_by: `person:${editor.personId}` });
    const made = byKey.get(`pinpoint ${created.id}`)!;
    expect(made.actor).toEqual(me);
    expect(made.object).toMatchObject({ id: created.id, created_by: me, updated_by: me });
  });

  it("webhook payloads carry the write's actor and the object's created_by/updated_by", async () => {
    const me = await personActor(editor);
    const name = crypto.randomUUID();
    const created = await a.send("POST", "http://127.0.0.1:8787/v3.0/webhooks", {
      url: receiverUrl(name),
      events: ["*"],
    });
    const hook = await ok<{ id: number }>(created, 201);
    const place = await createPinpoint(editor);
    await ok(await a.send("PUT", `/v3.0/pinpoints/${place.id}`, { name: "By the client" }));
    expect((await editor.send("DELETE", `/v3.0/pinpoints/${place.id}`)).status).toBe(204);

    // One delivery pass, as a queue message runs it (the queue itself may have run some already).
    const batch = createMessageBatch("poi-webhooks", [
      { id: crypto.randomUUID(), timestamp: new Date(), attempts: 1, body: { webhook: hook.id, account: a.accountId } },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    await getQueueResult(batch, ctx);
    let payloads: Payload[] = [];
    for (let i = 0; i < 100 && payloads.length < 3; i++) {
      payloads = (await received(name)).map(({ body }) => JSON.parse(body) as Payload);
      if (payloads.length < 3) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(payloads.map((p) => [p.type, p.data.actor])).toEqual([
      ["pinpoint.created", me],
      ["pinpoint.updated", clientActor(a)],
      ["pinpoint.deleted", me],
    ]);
    expect(payloads[0]!.data.object).toMatchObject({ id: place.id, created_by: me, updated_by: me });
    expect(payloads[1]!.data.object).toMatchObject({ created_by: me, updated_by: clientActor(a) });
    expect(payloads[2]!.data.object).toBeNull();
  });
});

describe("names come from the directory, once per answer", () => {
  /** The directory binding, recording every statement that reads people's names (src/auth/actor.ts). */
  function countingDirectory(db: D1Database) {
    const nameQueries: string[] = [];
    const record = (sql: string) => {
      if (/\bFROM people\b/.test(sql)) nameQueries.push(sql);
    };
    const prepareOf = (target: D1Database | D1DatabaseSession) => (sql: string) => {
      record(sql);
      return target.prepare(sql);
    };
    const session = (inner: D1DatabaseSession) =>
      new Proxy(inner, {
        get(target, property) {
          if (property === "prepare") return prepareOf(target);
          const value = Reflect.get(target, property, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    const d1 = new Proxy(db, {
      get(target, property) {
        if (property === "prepare") return prepareOf(target);
        if (property === "withSession") {
          return (constraint?: string) => session(target.withSession(constraint as D1SessionConstraint));
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { d1, nameQueries };
  }

  it("resolves a page of 100 objects written by 10 actors with one directory query, then from memory", async () => {
    const accountId = await createAccount();
    const reader = await caller("read write", accountId);
    // Ten actors: five clients and five people of the account, each with a name of its own.
    const refs: string[] = [];
    const expected = new Map<string, Actor>();
    for (let i = 0; i < 5; i++) {
      const client = await createClient("read write", accountId);
      await env.DB.prepare("UPDATE clients SET name = ? WHERE id = ?").bind(`App ${i}`, client.clientId).run();
      refs.push(`client:${client.clientId}`);
      expected.set(refs.at(-1)!, { type: "client", id: client.clientId, name: `App ${i}` });
      const person = await createPerson();
      refs.push(`person:${person.personId}`);
      expected.set(refs.at(-1)!, { type: "person", id: person.personId, name: await personName(person.personId) });
    }
    // A hundred places, each created by one actor and last written by another, as writes would store them.
    const writers = Array.from({ length: 100 }, (_, i) => ({
      created: refs[i % 10]!,
      updated: refs[(i * 3 + 1) % 10]!,
    }));
    const db = await contentDb(accountId);
    const ids: number[] = [];
    for (const [i, { created, updated }] of writers.entries()) {
      const row = await db
        .prepare(
          "INSERT INTO pinpoints (account_id, name, latitude, longitude, created_by, updated_by) VALUES (?, ?, 0, 0, ?, ?) RETURNING id",
        )
        .bind(accountId, `Place ${i}`, created, updated)
        .first<{ id: number }>();
      ids.push(row!.id);
    }

    const read = async () => {
      const { d1, nameQueries } = countingDirectory(env.DB);
      const response = await fetchWith({ DB: d1 }, "/v3.0/pinpoints?limit=100", {
        headers: { Authorization: `Bearer ${reader.token}` },
      });
      const page = await ok<{ results: Written[] }>(response);
      return { page, nameQueries };
    };
    const first = await read();
    expect(first.nameQueries).toHaveLength(1);
    expect(first.page.results.map((row) => row.id)).toEqual(ids);
    first.page.results.forEach((row, i) => {
      expect(row.created_by, `row ${i}`).toEqual(expected.get(writers[i]!.created));
      expect(row.updated_by, `row ${i}`).toEqual(expected.get(writers[i]!.updated));
    });
    // The same page again within NAME_FRESH_MS: the isolate knows every name.
    const again = await read();
    expect(again.nameQueries).toHaveLength(0);
    expect(again.page).toEqual(first.page);
    // Past it, one query again, which sees a rename.
    const renamed = refs[1]!;
    await env.DB.prepare("UPDATE people SET name = 'Renamed' WHERE id = ?")
      .bind(Number(renamed.slice("person:".length)))
      .run();
    advance(NAME_FRESH_MS + 1000);
    const later = await read();
    expect(later.nameQueries).toHaveLength(1);
    const shown = later.page.results.find((_row, i) => writers[i]!.created === renamed)!;
    expect(shown.created_by).toEqual({ ...expected.get(renamed), name: "Renamed" });
  });

  it("a deleted person or client keeps its type and id, without a name", async () => {
    const accountId = await createAccount();
    const client = await caller("read write", accountId);
    const person = await personCaller("editor", { accountId });
    const byPerson = await createPinpoint(person);
    const byClient = await createPinpoint(client);
    await env.DB.prepare("DELETE FROM people WHERE id = ?").bind(person.personId).run();
    await env.DB.prepare("DELETE FROM clients WHERE id = ?").bind(client.clientId).run();
    advance(NAME_FRESH_MS + 1000);
    const reader = await caller("read write", accountId);
    expect((await ok<Written>(await reader.get(`/v3.0/pinpoints/${byPerson.id}`))).created_by).toEqual({
      type: "person",
      id: person.personId,
      name: null,
    });
    expect((await ok<Written>(await reader.get(`/v3.0/pinpoints/${byClient.id}`))).created_by).toEqual({
      type: "client",
      id: client.clientId,
      name: null,
    });
  });
});

describe("what the public and other accounts see", () => {
  it("answers to a publishable key carry no actor, in every representation", async () => {
    const me = await personActor(editor);
    const list = await createList(editor);
    const place = await createPinpoint(editor);
    await ok(await editor.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: place.id }]));
    const event = await ok(await editor.send("POST", "/v3.0/events", eventBody(place.id)), 201);
    const category = await ok(await editor.send("POST", "/v3.0/categories", { name: "C", image_file: icon() }), 201);
    const { key } = await ok<{ key: string }>(
      await a.send("POST", "/v3.0/keys", { name: "map", lists: [list.id] }),
      201,
    );

    const paths = [
      `/v3.0/lists/${list.id}`,
      "/v3.0/lists",
      `/v3.0/pinpoints/${place.id}`,
      `/v3.0/pinpoints?list=${list.id}`,
      `/v3.0/pinpoints/${place.id}?format=geojson`,
      "/v3.0/pinpoints?format=geojson",
      `/v3.0/events/${event.id}`,
      "/v3.0/events",
      `/v3.0/categories/${category.id}`,
      "/v3.0/categories?limit=1000",
      `/ogc/collections/list-${list.id}/items`,
      `/ogc/collections/list-${list.id}/items/${place.id}`,
    ];
    for (const path of paths) {
      const url = new URL(path, BASE);
      url.searchParams.set("key", key);
      const response = await call(`${url.pathname}${url.search}`);
      const text = await response.text();
      expect(response.status, `${path}: ${text}`).toBe(200);
      // Neither the person's name nor any id of a writer is in the answer.
      expect(text, path).not.toContain(me.name!);
      expect(text, path).not.toContain(`"person"`);
      expect(text, path).not.toContain(a.clientId);
      // The fields are there, null, as the reference says.
      expect(text, path).toMatch(/"created_by":null/);
      expect(text, path).not.toMatch(/"(created|updated)_by":\{/);
    }
    // The account itself sees them in the same answers.
    const own = await ok<Written>(await a.get(`/v3.0/pinpoints/${place.id}`));
    expect(own.created_by).toEqual(me);
  });

  it("GeoJSON and OGC features carry them as properties, typed as objects in the collection's schema", async () => {
    const me = await personActor(editor);
    const place = await createPinpoint(editor);
    const feature = await ok<{ properties: Written }>(
      await a.get(`/v3.0/pinpoints/${place.id}`, { Accept: "application/geo+json" }),
    );
    expect(feature.properties).toMatchObject({ created_by: me, updated_by: me });
    const item = await ok<{ properties: Written }>(await a.get(`/ogc/collections/pinpoints/items/${place.id}`));
    expect(item.properties).toMatchObject({ created_by: me, updated_by: me });
    const schema = await ok<{ properties: Record<string, { type: string }> }>(
      await a.get("/ogc/collections/pinpoints/schema"),
    );
    expect(schema.properties.created_by?.type).toBe("object");
    expect(schema.properties.updated_by?.type).toBe("object");
  });
});

describe.runIf(shardNames(env.SHARDS).length > 1)("an account moved to another shard", () => {
  it("keeps who wrote what", async () => {
    const from = shardNames(env.SHARDS)[0]!;
    const accountId = await createAccount(from);
    const client = await caller("read write", accountId);
    const person = await personCaller("editor", { accountId });
    const place = await createPinpoint(client);
    await ok(await person.send("PUT", `/v3.0/pinpoints/${place.id}`, { name: "By the person" }));
    const list = await createList(person);
    await ok(await client.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: place.id }]));
    const event = await ok(await person.send("POST", "/v3.0/events", eventBody(place.id)), 201);
    const paths = [`/v3.0/pinpoints/${place.id}`, `/v3.0/lists/${list.id}`, `/v3.0/events/${event.id}`];
    const before = await Promise.all(paths.map(async (path) => ok<Written>(await client.get(path))));
    const to = shardNames(env.SHARDS).find((name) => name !== from)!;
    await moveAccount({
      account: accountId,
      to,
      directory: batchOf(env.DB),
      shards: Object.fromEntries(shardNames(env.SHARDS).map((name) => [name, batchOf(bindingNamed(env, name))])),
      graceMs: 0,
    });
    expect(await shardOf(accountId)).toBe(to);
    const columns = await bindingNamed(env, to)
      .prepare("SELECT created_by, updated_by FROM pinpoints WHERE id = ?")
      .bind(place.id)
      .first();
    expect(columns).toEqual({ created_by: `client:${client.clientId}`, updated_by: `person:${person.personId}` });
    const after = await Promise.all(paths.map(async (path) => ok<Written>(await client.get(path))));
    expect(after).toEqual(before);
    expect(after[0]).toMatchObject({ created_by: clientActor(client), updated_by: await personActor(person) });
    expect(after[1]).toMatchObject({ created_by: await personActor(person), updated_by: clientActor(client) });
  });
});
