/**
 * One account learns nothing of another through any answer (docs/operations.md, "What one account can
 * learn of another"). Account B calls every route of the app (the table below, checked against the
 * app's own route list) before and after account A, on the same database, writes hundreds of places,
 * lists, events, keys and webhooks with B's words, at B's places, and then categories with B's
 * category's name; each of B's answers must be the same, status, headers and body, with an access
 * token and with a publishable key (`Cache-Status` included). B's places include a tile whose `q=`
 * matches exactly as many of B's places as a tile reads, so one match more anywhere on the database
 * would have decided it.
 *
 * The people of B's account (members, invitations, collaborators, clients) are read and written with
 * the token of B's owner, a person; A's owner invites, makes clients and shares lists meanwhile.
 *
 * What may differ, and is normalized where named below:
 * - `X-Request-Id` (new at every request) and the value of `X-D1-Bookmark` (sealed anew at every
 *   answer; its shape is checked, and what it holds is D1's position, which every write moves);
 * - cursors (encrypted with a random nonce): the change feed's are opened and their position
 *   compared; a page's `next` is followed and the page it names compared too;
 * - OGC's `timeStamp` and the token endpoint's `access_token`: the time of the answer;
 * - in the writes, which each phase makes on objects of its own: their ids, times, media URLs, secrets,
 *   keys and links, client ids, and the email addresses of the people they make. Ids are allocated per
 *   database, not per account (the same section says what that shows).
 * Categories are shared: A's new categories appear in B's category answers, which the test expects.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { mintPersonToken } from "../src/auth/person-token";
import { FRESH_MS } from "../src/auth/publishable-keys";
import type { Role } from "../src/core/env";
import { signingKeys } from "../src/core/signing";
import { shardNames } from "../src/db/shard-plan";
import { ISSUED_BOOKMARK_PATTERN } from "../src/http/bookmark-header";
import { decodeCursor } from "../src/http/cursor";
import { MAX_TILE_ROWS } from "../src/tiles/source";
import {
  basic,
  type Caller,
  caller,
  contentDb,
  createAccount,
  Browser,
  createPerson,
  fetchWith,
  json,
  nextAddress,
  personCaller,
  personWithPassword,
  received,
  settleWebhook,
  receiverUrl,
} from "./helpers";
import { mediaFile } from "./media-fixtures";

/** The API reached on a loopback origin, where webhooks may deliver to the test receiver. */
const LOCAL = "http://127.0.0.1:8787";
const BOOKMARK = new RegExp(ISSUED_BOOKMARK_PATTERN);
/** Far enough apart that no test's places fall into the other's tiles. */
const PARIS = { latitude: 48.8566, longitude: 2.3522 };
const DATES = [{ start: "2030-05-01T10:00:00.000Z", end: "2030-05-01T12:00:00.000Z" }];

type Credential = "token" | "key" | "person" | "session" | "none";
/** A person of B's account, or to be: their session, from which each request's token is minted. */
type Person = { personId: number; sessionId: string };
type Step = {
  method?: string;
  path: string;
  as?: Credential;
  /** Who sends a `person` step; B's owner unless named. */
  person?: Person;
  /** The signed-in browser that sends a `session` step (its cookie and CSRF token). */
  browser?: Browser;
  headers?: Record<string, string>;
  body?: unknown;
};
type Answer = { request: string; status: number; headers: Record<string, string>; body: unknown; next?: Answer };

/** What B has, read by the table's requests (and one place of A's). */
type Fixture = {
  aPlace: number;
  category: number;
  places: { museum: number; cafe: number; herd: number };
  lists: { main: number; empty: number };
  event: number;
  media: string;
  key: { id: number; key: string };
  webhook: { id: number; name: string; secret: string };
  changesCursor: string;
  owner: Person;
  aList: number;
};

let a: Caller;
let b: Caller;
/** A's owner, a person, who manages A's people while B reads. */
let aOwner: Person;
let f: Fixture;
/** A's webhook, which A's writes go out to while B reads. */
let aWebhook: number;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function created<T = { id: number }>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(201);
  return json<T>(response);
}

/** A GeoJSON import of `features` for `who`: the fastest way to many places, through the API. */
async function importPlaces(who: Caller, features: { name: string; lon: number; lat: number; tags?: string[] }[]) {
  const ids: number[] = [];
  for (let i = 0; i < features.length; i += 1000) {
    const body = {
      type: "FeatureCollection",
      features: features.slice(i, i + 1000).map(({ name, lon, lat, tags }) => ({
        type: "Feature",
        geometry: { type: "Point", coordinates: [lon, lat] },
        properties: { name, tags: tags ?? [], description: `<p>${name}</p>`, address: `${name} street` },
      })),
    };
    const imported = await fetchWith({}, "/v3.0/pinpoints", {
      method: "POST",
      headers: { Authorization: `Bearer ${who.token}`, "Content-Type": "application/geo+json" },
      body: JSON.stringify(body),
    });
    ids.push(...(await created<{ ids: number[] }>(imported)).ids);
  }
  return ids;
}

/** Words B's own places, lists and events use, which A uses too. */
const WORDS = ["Okapi Museum", "Zebra café", "herd", "okapiqueen"];

let batches = 0;

/**
 * A's writes: places (an import and single ones), updates and deletions, lists and memberships, events,
 * a key and webhook deliveries, all with B's words at B's places and in B's dense tile, and places whose
 * words `q=okapiq` matches, so that B's near-limit tile would be decided by them if anything counted them.
 */
async function aWrites(): Promise<void> {
  const batch = ++batches;
  const features = Array.from({ length: 300 }, (_, i) => ({
    name: `${WORDS[i % WORDS.length]} ${batch}-${i}`,
    lon: i % 2 ? PARIS.longitude + (i % 50) / 10_000 : 100 + (i % 100) / 10,
    lat: i % 2 ? PARIS.latitude + (i % 30) / 10_000 : 10 + (i % 97) / 10,
    tags: ["herd", "museum", "okapiqueen"],
  }));
  const ids = await importPlaces(a, features);
  const list = await created(await a.send("POST", "/v3.0/lists", { name: "Rainy day", description: "<b>herd</b>" }));
  expect(
    (
      await a.send(
        "POST",
        `/v3.0/lists/${list.id}/pinpoints`,
        ids.slice(0, 200).map((id) => ({ id })),
      )
    ).status,
  ).toBe(200);
  expect(
    (
      await a.send(
        "DELETE",
        `/v3.0/lists/${list.id}/pinpoints`,
        ids.slice(0, 20).map((id) => ({ id })),
      )
    ).status,
  ).toBe(200);
  await Promise.all(
    ids.slice(0, 30).map(async (id, i) => {
      const event = { name: `${WORDS[i % WORDS.length]} night`, pinpoint: id, dates: DATES, tags: ["herd"] };
      expect((await a.send("POST", "/v3.0/events", event)).status).toBe(201);
    }),
  );
  await Promise.all(
    ids.slice(30, 60).map(async (id) => {
      const response = await a.send("PUT", `/v3.0/pinpoints/${id}`, { name: "okapiqueen renamed", ...PARIS });
      expect(response.status).toBe(200);
    }),
  );
  await Promise.all(
    ids.slice(60, 80).map(async (id) => expect((await a.send("DELETE", `/v3.0/pinpoints/${id}`)).status).toBe(204)),
  );
  await created(await a.send("POST", "/v3.0/keys", { name: `map ${batch}`, lists: [list.id] }));
  await aPeopleWrites(list.id);
  await settleWebhook(aWebhook, a.accountId);
}

/** A person named as B's people are, in `accountId` with `role` (none: in no account yet). */
async function keeper(accountId: number, role: Role | null): Promise<Person & { email: string }> {
  const person = await createPerson();
  await env.DB.prepare("UPDATE people SET name = 'Okapi Keeper' WHERE id = ?").bind(person.personId).run();
  if (role !== null) await personCaller(role, { accountId, person });
  return person;
}

/** A person named as B's people are, in no account yet, signed in on a browser of their own. */
async function signedInKeeper(): Promise<{ personId: number; email: string; browser: Browser }> {
  const { personId, email, password } = await personWithPassword();
  await env.DB.prepare("UPDATE people SET name = 'Okapi Keeper' WHERE id = ?").bind(personId).run();
  const browser = new Browser();
  expect((await browser.signIn(email, password)).status).toBe(200);
  return { personId, email, browser };
}

/** A's owner's request, with a token minted from their session. */
async function asAOwner(method: string, path: string, body: unknown): Promise<Response> {
  const { token } = await mintPersonToken((await signingKeys(env)).current, {
    ...aOwner,
    accountId: a.accountId,
    scope: "read write",
  });
  return fetchWith({}, path, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A's people's writes, with B's words: an invitation to the address B invites, a client, a list shared. */
async function aPeopleWrites(list: number): Promise<void> {
  await created(await asAOwner("POST", "/v3.0/invitations", { email: "okapi.keeper@example.test", role: "editor" }));
  await created(await asAOwner("POST", "/v3.0/invitations", { email: "zebra@example.test", role: "viewer", list }));
  await created(await asAOwner("POST", "/v3.0/clients", { name: "Okapi import" }));
  const collaborator = await keeper(a.accountId, "viewer");
  await created(
    await asAOwner("PUT", `/v3.0/lists/${list}/collaborators/${collaborator.personId}`, { role: "editor" }),
  );
}

/** A's categories, named as B's. */
async function aCategories(): Promise<number[]> {
  const ids: number[] = [];
  for (const name of ["Museums", "Museums", "herd"]) {
    ids.push((await created(await a.send("POST", "/v3.0/categories", { name, image_file: mediaFile() }))).id);
  }
  return ids;
}

beforeAll(async () => {
  // Both accounts on one database: the one the suite's last shard is (the directory without shards).
  const shard = shardNames(env.SHARDS).at(-1)!;
  [a, b] = [
    await caller("read write", await createAccount(shard)),
    await caller("read write", await createAccount(shard)),
  ];

  // B's dense tile: exactly MAX_TILE_ROWS places that `q=okapiq` finds, and one more that `q=herd` finds too.
  const dense = Array.from({ length: MAX_TILE_ROWS }, (_, i) => ({
    name: `okapiq${i}`,
    lon: 100 + (i % 100) / 10,
    lat: 10 + Math.floor(i / 100) / 10,
    tags: ["herd"],
  }));
  await importPlaces(b, dense);

  const webhookName = crypto.randomUUID();
  const webhook = await created<{ id: number; secret: string }>(
    await b.send("POST", `${LOCAL}/v3.0/webhooks`, { url: receiverUrl(webhookName), events: ["*"] }),
  );
  const aHook = await created(
    await a.send("POST", `${LOCAL}/v3.0/webhooks`, { url: receiverUrl(crypto.randomUUID()), events: ["*"] }),
  );
  aWebhook = aHook.id;

  const category = await created(
    await b.send("POST", "/v3.0/categories", { name: "Museums", image_file: mediaFile() }),
  );
  const museum = await created<{ id: number; media_url: string }>(
    await b.send("POST", "/v3.0/pinpoints", {
      name: "Okapi Museum",
      ...PARIS,
      category: category.id,
      tags: ["museum", "okapi"],
      address: "1 Okapi Street",
      description: "<p>The herd of the zebra</p>",
      media_file: mediaFile(),
    }),
  );
  const cafe = await created(
    await b.send("POST", "/v3.0/pinpoints", { name: "Zebra café", latitude: 48.857, longitude: 2.353, tags: ["café"] }),
  );
  const herd = await created(
    await b.send("POST", "/v3.0/pinpoints", { name: "The herd", latitude: 11, longitude: 101, tags: ["herd"] }),
  );
  const main = await created(await b.send("POST", "/v3.0/lists", { name: "Rainy day", description: "<b>Indoors</b>" }));
  const empty = await created(await b.send("POST", "/v3.0/lists", { name: "Empty" }));
  expect((await b.send("POST", `/v3.0/lists/${main.id}/pinpoints`, [{ id: museum.id }, { id: cafe.id }])).status).toBe(
    200,
  );
  const event = await created(
    await b.send("POST", "/v3.0/events", {
      name: "Okapi Museum night",
      pinpoint: museum.id,
      dates: DATES,
      tags: ["herd"],
    }),
  );
  const key = await created<{ id: number; key: string }>(
    await b.send("POST", "/v3.0/keys", { name: "map", lists: [main.id] }),
  );
  const aPlace = await created(await a.send("POST", "/v3.0/pinpoints", { name: "Okapi Museum", ...PARIS }));
  // People's and invitations' ids far above the content's, so that an id in a write's answer names one
  // object: the answers' ids are named by value (`nameIds`). AUTOINCREMENT goes on from the highest id.
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO people (id, email, email_key, name) VALUES (1000000000, 'ids@example.test', 'ids@example.test', 'ids')",
    ),
    env.DB.prepare(
      `INSERT INTO invitations (id, account_id, email, email_key, role, token_hash, invited_by, expires_at)
       VALUES (2000000000, ?, 'ids@example.test', 'ids@example.test', 'viewer', 'ids', 'person:1000000000', 0)`,
    ).bind(a.accountId),
  ]);
  aOwner = await keeper(a.accountId, "owner");
  const aList = await created(await a.send("POST", "/v3.0/lists", { name: "Rainy day" }));
  // B's people: its owner (who reads them), an editor, a collaborator on the main list, an invitation.
  const owner = await keeper(b.accountId, "owner");
  await keeper(b.accountId, "editor");
  const collaborator = await keeper(b.accountId, null);
  await personCaller(null, { accountId: b.accountId, lists: [[main.id, "viewer"]], person: collaborator });
  const changes = await json<{ cursor: string }>(await b.get("/v3.0/changes"));
  expect((await b.send("PUT", `/v3.0/pinpoints/${cafe.id}`, { name: "Zebra café (closed)" })).status).toBe(200);
  await settleWebhook(webhook.id, b.accountId);
  await settleWebhook(aWebhook, a.accountId);
  f = {
    aPlace: aPlace.id,
    category: category.id,
    places: { museum: museum.id, cafe: cafe.id, herd: herd.id },
    lists: { main: main.id, empty: empty.id },
    event: event.id,
    media: new URL(museum.media_url).pathname,
    key,
    webhook: { id: webhook.id, name: webhookName, secret: webhook.secret },
    changesCursor: changes.cursor,
    owner,
    aList: aList.id,
  };
  await created(
    await send({
      method: "POST",
      path: "/v3.0/invitations",
      as: "person",
      body: { email: "okapi.keeper@example.test", role: "viewer" },
    }),
  );
}, 300_000);

/** Every route the app registers, as `METHOD path` (validators register a route again: one entry each). */
// The operator routes answer the operator secret, no account's credential (test/operator.test.ts).
// A signed-in person's own routes (their session, password, TOTP, passkeys, /v3.0/me) act for that person
// in no account; one person never reaches another's (test/sessions.test.ts, test/sign-in.test.ts,
// test/passkeys.test.ts).
const PERSON_ROUTE = /^\/v3\.0\/(auth\/|me$)/;
const ROUTES = [
  ...new Set(
    app.routes
      .filter(({ method, path }) => method !== "ALL" && !path.startsWith("/operator") && !PERSON_ROUTE.test(path))
      .map((r) => `${r.method} ${r.path}`),
  ),
];

const ID = "{[0-9]+}";

/** The XYZ tile at zoom `z` holding the point, as `z/x/y`. */
function tileAt(z: number, { latitude, longitude }: { latitude: number; longitude: number }): string {
  const n = 2 ** z;
  const sin = Math.sin((latitude * Math.PI) / 180);
  const y = Math.floor((0.5 - Math.log((1 + sin) / (1 - sin)) / (4 * Math.PI)) * n);
  return `${z}/${Math.floor(((longitude + 180) / 360) * n)}/${y}`;
}
const DENSE = { latitude: 15, longitude: 105 };
const tile = (ext: "mvt" | "geojson") => `GET /v3.0/tiles/:z/:x/:y{.+\\.${ext}}`;

/** B's reads: for each route, the requests that exercise it, with B's token, B's key or nothing. */
const READS: Record<string, (f: Fixture) => Step[]> = {
  "GET /v3.0/openapi.json": () => [{ path: "/v3.0/openapi.json", as: "none" }],
  "GET /docs": () => [{ path: "/docs", as: "none" }],
  "GET /media/:key{.+}": (f) => [{ path: f.media, as: "none" }],
  "GET /v3.0/pinpoints": (f) => [
    { path: "/v3.0/pinpoints?limit=2" },
    { path: "/v3.0/pinpoints?q=okapi" },
    { path: "/v3.0/pinpoints?q=okapiq&limit=3" },
    { path: "/v3.0/pinpoints?q=herd&limit=3" },
    { path: "/v3.0/pinpoints?q=zebra" },
    { path: `/v3.0/pinpoints?bbox=2.34,48.85,2.36,48.86` },
    { path: `/v3.0/pinpoints?bbox=99,9,111,21&limit=5` },
    { path: `/v3.0/pinpoints?latitude=${PARIS.latitude}&longitude=${PARIS.longitude}&radius=5000` },
    { path: `/v3.0/pinpoints?latitude=${PARIS.latitude}&longitude=${PARIS.longitude}&limit=3` },
    { path: "/v3.0/pinpoints?tags=museum" },
    { path: `/v3.0/pinpoints?category=${f.category}` },
    { path: `/v3.0/pinpoints?list=${f.lists.main}` },
    { path: `/v3.0/pinpoints?list=${f.lists.main}&order=position&limit=1` },
    { path: "/v3.0/pinpoints?updated_since=2020-01-01T00:00:00Z&limit=2" },
    { path: "/v3.0/pinpoints?limit=2", headers: { Accept: "application/geo+json" } },
    { path: "/v3.0/pinpoints", as: "key" },
    { path: "/v3.0/pinpoints?q=okapi", as: "key" },
  ],
  "GET /v3.0/pinpoints/:id{[0-9]+}": (f) => [
    { path: `/v3.0/pinpoints/${f.places.museum}` },
    { path: `/v3.0/pinpoints/${f.places.museum}`, headers: { "If-None-Match": '"1"' } },
    { path: `/v3.0/pinpoints/${f.places.museum}`, as: "key" },
  ],
  "GET /v3.0/lists": () => [{ path: "/v3.0/lists?limit=1" }, { path: "/v3.0/lists", as: "key" }],
  "GET /v3.0/lists/:id{[0-9]+}": (f) => [
    { path: `/v3.0/lists/${f.lists.main}` },
    { path: `/v3.0/lists/${f.lists.main}`, as: "key" },
  ],
  "GET /v3.0/categories": () => [
    { path: "/v3.0/categories?limit=1000" },
    { path: "/v3.0/categories?limit=1000", as: "key" },
  ],
  "GET /v3.0/categories/:id{[0-9]+}": (f) => [
    { path: `/v3.0/categories/${f.category}` },
    { path: "/v3.0/categories/1", as: "key" },
  ],
  "GET /v3.0/events": () => [
    { path: "/v3.0/events" },
    { path: "/v3.0/events?q=okapi" },
    { path: "/v3.0/events?from=2030-01-01T00:00:00Z&to=2031-01-01T00:00:00Z" },
    { path: `/v3.0/events?latitude=${PARIS.latitude}&longitude=${PARIS.longitude}&radius=1000` },
    { path: "/v3.0/events", as: "key" },
  ],
  "GET /v3.0/events/:id{[0-9]+}": (f) => [
    { path: `/v3.0/events/${f.event}` },
    { path: `/v3.0/events/${f.event}`, as: "key" },
  ],
  "GET /v3.0/changes": (f) => [
    { path: "/v3.0/changes" },
    { path: `/v3.0/changes?cursor=${encodeURIComponent(f.changesCursor)}&include=objects` },
  ],
  "GET /v3.0/keys": () => [{ path: "/v3.0/keys" }],
  "GET /v3.0/keys/:id{[0-9]+}": (f) => [{ path: `/v3.0/keys/${f.key.id}` }],
  "GET /v3.0/webhooks": () => [{ path: "/v3.0/webhooks" }],
  "GET /v3.0/webhooks/:id{[0-9]+}": (f) => [{ path: `/v3.0/webhooks/${f.webhook.id}` }],
  "GET /v3.0/webhooks/:id{[0-9]+}/deliveries": (f) => [{ path: `/v3.0/webhooks/${f.webhook.id}/deliveries?limit=2` }],
  [tile("mvt")]: (f) => [
    { path: "/v3.0/tiles/0/0/0.mvt" },
    // B's places that q=okapiq matches are exactly as many as a tile reads: a 200 only if A's are not counted.
    { path: "/v3.0/tiles/0/0/0.mvt?q=okapiq" },
    // One more of B's matches, and the tile is refused whatever A writes.
    { path: "/v3.0/tiles/0/0/0.mvt?q=herd" },
    { path: "/v3.0/tiles/0/0/0.mvt?tags=herd" },
    { path: `/v3.0/tiles/${tileAt(16, PARIS)}.mvt` },
    { path: `/v3.0/tiles/${tileAt(10, PARIS)}.mvt?q=okapi` },
    { path: `/v3.0/tiles/${tileAt(4, DENSE)}.mvt?q=okapiq` },
    { path: `/v3.0/tiles/0/0/0.mvt?list=${f.lists.main}` },
    { path: "/v3.0/tiles/0/0/0.mvt", as: "key" },
    { path: "/v3.0/tiles/0/0/0.mvt?q=okapiq", as: "key" },
  ],
  [tile("geojson")]: () => [
    { path: "/v3.0/tiles/0/0/0.geojson?q=okapiq" },
    { path: `/v3.0/tiles/${tileAt(2, DENSE)}.geojson?q=okapiq` },
    { path: `/v3.0/tiles/${tileAt(16, PARIS)}.geojson` },
    { path: "/v3.0/tiles/0/0/0.geojson", as: "key" },
  ],
  "GET /v3.0/tiles.json": () => [
    { path: "/v3.0/tiles.json" },
    { path: "/v3.0/tiles.json?q=okapiq" },
    { path: "/v3.0/tiles.json", as: "key" },
  ],
  "GET /ogc": () => [{ path: "/ogc" }, { path: "/ogc", as: "key" }],
  "GET /ogc/conformance": () => [{ path: "/ogc/conformance" }],
  "GET /ogc/collections": () => [{ path: "/ogc/collections" }, { path: "/ogc/collections", as: "key" }],
  "GET /ogc/collections/:collectionId": (f) => [
    { path: "/ogc/collections/pinpoints" },
    { path: `/ogc/collections/list-${f.lists.main}`, as: "key" },
  ],
  "GET /ogc/collections/:collectionId/schema": () => [{ path: "/ogc/collections/pinpoints/schema" }],
  "GET /ogc/collections/:collectionId/queryables": () => [{ path: "/ogc/collections/events/queryables" }],
  "GET /ogc/collections/:collectionId/items": (f) => [
    { path: "/ogc/collections/pinpoints/items?limit=2" },
    { path: "/ogc/collections/pinpoints/items?bbox=2.34,48.85,2.36,48.86" },
    { path: "/ogc/collections/events/items?datetime=2030-01-01T00:00:00Z/2031-01-01T00:00:00Z" },
    { path: `/ogc/collections/list-${f.lists.main}/items`, as: "key" },
  ],
  "GET /ogc/collections/:collectionId/items/:featureId": (f) => [
    { path: `/ogc/collections/pinpoints/items/${f.places.museum}` },
    { path: `/ogc/collections/list-${f.lists.main}/items/${f.places.cafe}`, as: "key" },
  ],
  "GET /ogc/api": () => [{ path: "/ogc/api" }],
  [`GET /maps/:id${ID}`]: (f) => [{ path: `/maps/${f.lists.main}`, as: "key" }],
  "POST /v3.0/oauth2/token": () => [{ method: "POST", path: "/v3.0/oauth2/token", as: "none", body: "token" }],
  "GET /v3.0/members": () => [{ path: "/v3.0/members?limit=2", as: "person" }],
  "GET /v3.0/invitations": () => [{ path: "/v3.0/invitations", as: "person" }],
  "GET /v3.0/clients": () => [{ path: "/v3.0/clients", as: "person" }],
  [`GET /v3.0/lists/:id${ID}/collaborators`]: (f) => [
    { path: `/v3.0/lists/${f.lists.main}/collaborators`, as: "person" },
    { path: `/v3.0/lists/${f.aList}/collaborators`, as: "person" },
  ],
};

/** One write of B's, on objects it makes for the occasion: the steps answered, and the ids it made. */
type Write = { steps: Step[]; ids: Record<string, number> };

const place = async () =>
  (await created(await b.send("POST", "/v3.0/pinpoints", { name: "Okapi Museum", ...PARIS }))).id;
const list = async () => (await created(await b.send("POST", "/v3.0/lists", { name: "Rainy day" }))).id;
const category = async () =>
  (await created(await b.send("POST", "/v3.0/categories", { name: "Museums", image_file: mediaFile() }))).id;

/** B's writes: for each write route, what it does on fresh objects (made before the steps, not compared). */
const WRITES: Record<string, (f: Fixture) => Promise<Write>> = {
  "POST /v3.0/pinpoints": async (f) => {
    const idempotency = { "Idempotency-Key": crypto.randomUUID() };
    const body = { name: "Okapi Museum", ...PARIS, category: f.category, tags: ["herd"] };
    return {
      ids: {},
      steps: [
        { method: "POST", path: "/v3.0/pinpoints", body: { ...body, media_file: mediaFile() } },
        { method: "POST", path: "/v3.0/pinpoints", body, headers: idempotency },
        { method: "POST", path: "/v3.0/pinpoints", body, headers: idempotency },
        { method: "POST", path: "/v3.0/pinpoints", body: { name: "no place" } },
      ],
    };
  },
  "PUT /v3.0/pinpoints/:id{[0-9]+}": async () => {
    const id = await place();
    return {
      ids: { place: id },
      steps: [
        { method: "PUT", path: `/v3.0/pinpoints/${id}`, body: { name: "okapiqueen", tags: ["herd"] } },
        { method: "PUT", path: `/v3.0/pinpoints/${id}`, body: { name: "stale" }, headers: { "If-Match": '"1"' } },
      ],
    };
  },
  "DELETE /v3.0/pinpoints/:id{[0-9]+}": async () => {
    const id = await place();
    return { ids: { place: id }, steps: [{ method: "DELETE", path: `/v3.0/pinpoints/${id}` }] };
  },
  "POST /v3.0/lists": async () => ({
    ids: {},
    steps: [{ method: "POST", path: "/v3.0/lists", body: { name: "Rainy day", description: "<b>herd</b>" } }],
  }),
  "PUT /v3.0/lists/:id{[0-9]+}": async () => {
    const id = await list();
    return { ids: { list: id }, steps: [{ method: "PUT", path: `/v3.0/lists/${id}`, body: { name: "Zebra café" } }] };
  },
  "DELETE /v3.0/lists/:id{[0-9]+}": async () => {
    const id = await list();
    return { ids: { list: id }, steps: [{ method: "DELETE", path: `/v3.0/lists/${id}` }] };
  },
  "POST /v3.0/lists/:id{[0-9]+}/pinpoints": async (f) => {
    const [id, member] = [await list(), await place()];
    return {
      ids: { list: id, member },
      steps: [
        {
          method: "POST",
          path: `/v3.0/lists/${id}/pinpoints`,
          // B's, A's (forbidden) and none (not found).
          body: [{ id: member }, { id: f.aPlace }, { id: 987654321 }],
        },
      ],
    };
  },
  "DELETE /v3.0/lists/:id{[0-9]+}/pinpoints": async () => {
    const [id, member] = [await list(), await place()];
    expect((await b.send("POST", `/v3.0/lists/${id}/pinpoints`, [{ id: member }])).status).toBe(200);
    return {
      ids: { list: id, member },
      steps: [{ method: "DELETE", path: `/v3.0/lists/${id}/pinpoints`, body: [{ id: member }, { id: 987654321 }] }],
    };
  },
  "PUT /v3.0/lists/:id{[0-9]+}/pinpoints/order": async (f) => {
    const [id, first, second] = [await list(), await place(), await place()];
    expect((await b.send("POST", `/v3.0/lists/${id}/pinpoints`, [{ id: first }, { id: second }])).status).toBe(200);
    const path = `/v3.0/lists/${id}/pinpoints/order`;
    return {
      ids: { list: id, first, second },
      steps: [
        { method: "PUT", path, body: { move: second, before: first } },
        { method: "PUT", path, body: { ids: [first, second] } },
        { method: "PUT", path, body: { move: first, before: null }, headers: { "If-Match": '"1"' } },
        // A's place and none: neither is a member of B's list, and neither answer says more.
        { method: "PUT", path, body: { ids: [first, f.aPlace] } },
        { method: "PUT", path, body: { move: 987654321, before: first } },
      ],
    };
  },
  "POST /v3.0/categories": async () => ({
    ids: {},
    steps: [{ method: "POST", path: "/v3.0/categories", body: { name: "Museums", image_file: mediaFile() } }],
  }),
  "PUT /v3.0/categories/:id{[0-9]+}": async () => {
    const id = await category();
    return {
      ids: { category: id },
      steps: [{ method: "PUT", path: `/v3.0/categories/${id}`, body: { name: "herd" } }],
    };
  },
  "DELETE /v3.0/categories/:id{[0-9]+}": async () => {
    const id = await category();
    return {
      ids: { category: id },
      steps: [
        { method: "DELETE", path: "/v3.0/categories/1" },
        { method: "DELETE", path: `/v3.0/categories/${id}` },
      ],
    };
  },
  "POST /v3.0/events": async () => {
    const at = await place();
    return {
      ids: { place: at },
      steps: [
        { method: "POST", path: "/v3.0/events", body: { name: "Okapi Museum night", pinpoint: at, dates: DATES } },
      ],
    };
  },
  "PUT /v3.0/events/:id{[0-9]+}": async () => {
    const at = await place();
    const id = (await created(await b.send("POST", "/v3.0/events", { name: "night", pinpoint: at, dates: DATES }))).id;
    return {
      ids: { place: at, event: id },
      steps: [{ method: "PUT", path: `/v3.0/events/${id}`, body: { name: "okapiqueen night", tags: ["herd"] } }],
    };
  },
  "DELETE /v3.0/events/:id{[0-9]+}": async () => {
    const at = await place();
    const id = (await created(await b.send("POST", "/v3.0/events", { name: "night", pinpoint: at, dates: DATES }))).id;
    return { ids: { place: at, event: id }, steps: [{ method: "DELETE", path: `/v3.0/events/${id}` }] };
  },
  "POST /v3.0/keys": async () => {
    const id = await list();
    return { ids: { list: id }, steps: [{ method: "POST", path: "/v3.0/keys", body: { name: "map", lists: [id] } }] };
  },
  "DELETE /v3.0/keys/:id{[0-9]+}": async () => {
    const key = await created(await b.send("POST", "/v3.0/keys", { name: "map" }));
    return { ids: { key: key.id }, steps: [{ method: "DELETE", path: `/v3.0/keys/${key.id}` }] };
  },
  "POST /v3.0/webhooks": async () => ({
    ids: {},
    steps: [
      {
        method: "POST",
        path: "/v3.0/webhooks",
        body: { url: "https://hooks.example.com/poi", events: ["pinpoint.created"], enabled: false },
      },
    ],
  }),
  "PUT /v3.0/webhooks/:id{[0-9]+}": async () => {
    const id = await disabledWebhook();
    return {
      ids: { webhook: id },
      steps: [{ method: "PUT", path: `/v3.0/webhooks/${id}`, body: { description: "herd" } }],
    };
  },
  "DELETE /v3.0/webhooks/:id{[0-9]+}": async () => {
    const id = await disabledWebhook();
    return { ids: { webhook: id }, steps: [{ method: "DELETE", path: `/v3.0/webhooks/${id}` }] };
  },
  "POST /v3.0/webhooks/:id{[0-9]+}/rotate": async () => {
    const id = await disabledWebhook();
    return { ids: { webhook: id }, steps: [{ method: "POST", path: `/v3.0/webhooks/${id}/rotate` }] };
  },
};

/** An invitation of B's to `email`, with its token. */
const invitation = async (email: string) =>
  created<{ id: number; token: string }>(
    await send({ method: "POST", path: "/v3.0/invitations", as: "person", body: { email, role: "editor" } }),
  );
const client = async () =>
  (
    await created<{ id: string }>(
      await send({ method: "POST", path: "/v3.0/clients", as: "person", body: { name: "x" } }),
    )
  ).id;

/** B's people's writes, sent by B's owner (or the person named), on people and objects made for the occasion. */
const PEOPLE_WRITES: Record<string, (f: Fixture) => Promise<Write>> = {
  [`PATCH /v3.0/members/:person_id${ID}`]: async () => {
    const { personId } = await keeper(b.accountId, "viewer");
    return {
      ids: { person: personId },
      steps: [{ method: "PATCH", path: `/v3.0/members/${personId}`, as: "person", body: { role: "editor" } }],
    };
  },
  [`DELETE /v3.0/members/:person_id${ID}`]: async () => {
    const { personId } = await keeper(b.accountId, "viewer");
    return {
      ids: { person: personId },
      steps: [{ method: "DELETE", path: `/v3.0/members/${personId}`, as: "person" }],
    };
  },
  "DELETE /v3.0/members/me": async () => {
    const person = await keeper(b.accountId, "viewer");
    return {
      ids: { person: person.personId },
      steps: [{ method: "DELETE", path: "/v3.0/members/me", as: "person", person }],
    };
  },
  "POST /v3.0/members/transfer-ownership": async () => {
    const [owner, heir] = [await keeper(b.accountId, "owner"), await keeper(b.accountId, "editor")];
    return {
      ids: { owner: owner.personId, heir: heir.personId },
      steps: [
        {
          method: "POST",
          path: "/v3.0/members/transfer-ownership",
          as: "person",
          person: owner,
          body: { person_id: heir.personId },
        },
      ],
    };
  },
  "POST /v3.0/invitations": async (f) => ({
    ids: {},
    steps: [
      {
        method: "POST",
        path: "/v3.0/invitations",
        as: "person",
        body: { email: "okapi@example.test", role: "viewer" },
      },
      {
        method: "POST",
        path: "/v3.0/invitations",
        as: "person",
        body: { email: "zebra@example.test", role: "editor", list: f.lists.main },
      },
    ],
  }),
  [`DELETE /v3.0/invitations/:id${ID}`]: async () => {
    const { id } = await invitation("okapi@example.test");
    return { ids: { invitation: id }, steps: [{ method: "DELETE", path: `/v3.0/invitations/${id}`, as: "person" }] };
  },
  "POST /v3.0/invitations/accept": async () => {
    const { personId, email, browser } = await signedInKeeper();
    const { id, token } = await invitation(email);
    const accept = {
      method: "POST",
      path: "/v3.0/invitations/accept",
      as: "session" as const,
      browser,
      body: { token },
    };
    return { ids: { invitation: id, person: personId }, steps: [accept, accept] };
  },
  "POST /v3.0/clients": async () => ({
    ids: {},
    steps: [{ method: "POST", path: "/v3.0/clients", as: "person", body: { name: "Okapi import", scope: "read" } }],
  }),
  "POST /v3.0/clients/:client_id{[0-9a-f]+}/secret": async () => ({
    ids: {},
    steps: [{ method: "POST", path: `/v3.0/clients/${await client()}/secret`, as: "person" }],
  }),
  "DELETE /v3.0/clients/:client_id{[0-9a-f]+}": async () => ({
    ids: {},
    steps: [{ method: "DELETE", path: `/v3.0/clients/${await client()}`, as: "person" }],
  }),
  [`PUT /v3.0/lists/:id${ID}/collaborators/:person_id${ID}`]: async () => {
    const [id, { personId }] = [await list(), await keeper(b.accountId, "viewer")];
    return {
      ids: { list: id, person: personId },
      steps: [
        { method: "PUT", path: `/v3.0/lists/${id}/collaborators/${personId}`, as: "person", body: { role: "editor" } },
        { method: "PUT", path: `/v3.0/lists/${id}/collaborators/${personId}`, as: "person", body: { role: "viewer" } },
      ],
    };
  },
  [`DELETE /v3.0/lists/:id${ID}/collaborators/:person_id${ID}`]: async () => {
    const [id, { personId }] = [await list(), await keeper(b.accountId, "viewer")];
    const path = `/v3.0/lists/${id}/collaborators/${personId}`;
    expect((await send({ method: "PUT", path, as: "person", body: { role: "editor" } })).status).toBe(201);
    return { ids: { list: id, person: personId }, steps: [{ method: "DELETE", path, as: "person" }] };
  },
  [`DELETE /v3.0/lists/:id${ID}/collaborators/me`]: async () => {
    const [id, person] = [await list(), await keeper(b.accountId, "viewer")];
    const given = `/v3.0/lists/${id}/collaborators/${person.personId}`;
    expect((await send({ method: "PUT", path: given, as: "person", body: { role: "editor" } })).status).toBe(201);
    return {
      ids: { list: id, person: person.personId },
      steps: [{ method: "DELETE", path: `/v3.0/lists/${id}/collaborators/me`, as: "person", person }],
    };
  },
};
Object.assign(WRITES, PEOPLE_WRITES);

async function disabledWebhook(): Promise<number> {
  const body = { url: "https://hooks.example.com/poi", events: ["*"], enabled: false };
  return (await created(await b.send("POST", "/v3.0/webhooks", body))).id;
}

/** Sends one step as B (its token, its key or no credential). */
async function send(step: Step): Promise<Response> {
  const headers: Record<string, string> = { ...step.headers };
  const url = new URL(step.path, "https://api.example.test");
  if ((step.as ?? "token") === "token") headers.Authorization = `Bearer ${b.token}`;
  if (step.as === "person") {
    const person = step.person ?? f.owner;
    const grant = { ...person, accountId: b.accountId, scope: "read write" };
    headers.Authorization = `Bearer ${(await mintPersonToken((await signingKeys(env)).current, grant)).token}`;
  }
  if (step.as === "key") url.searchParams.set("key", f.key.key);
  if (step.as === "session") return step.browser!.send(step.method ?? "GET", step.path, step.body, step.headers);
  let body: string | undefined;
  if (step.body === "token") {
    // The token endpoint: B's client, from an address of its own (its per-address limit).
    headers.Authorization = basic(b.clientId, b.clientSecret);
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    headers["CF-Connecting-IP"] = nextAddress();
    body = "grant_type=client_credentials";
  } else if (step.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(step.body);
  }
  return fetchWith({}, `${url.pathname}${url.search}`, { method: step.method ?? "GET", headers, body });
}

/** Names for the ids a write made: each known id (and any id an answer makes) becomes `<name>`. */
type Names = Map<number, string>;

/** Fields whose values are ids of the objects a write made. */
const ID_FIELDS = new Set(["id", "pinpoint", "category", "object_id", "ids", "lists", "list", "accepted_by"]);

function nameIds(value: unknown, names: Names): unknown {
  if (typeof value === "number") return names.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => nameIds(item, names));
  if (value && typeof value === "object") {
    // Into nested objects too (an ownership transfer's `owner`, an acceptance's `person`), not other arrays.
    const nested = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, ID_FIELDS.has(k) || nested(v) ? nameIds(v, names) : v]),
    );
  }
  return value;
}

/** Replaces every known id in text (a path, a problem's detail) by its name. */
function nameIdsIn(text: string, names: Names): string {
  let out = text;
  for (const [id, name] of names) out = out.replaceAll(new RegExp(`\\b${id}\\b`, "g"), name);
  // Client ids, 32 hexadecimal digits, which the writes make anew.
  return out.replaceAll(/\b[0-9a-f]{32}\b/g, "<client id>");
}

/** A URL's cursor, a new ciphertext at every answer, as `<cursor>` (the page it names is compared instead). */
const withoutCursor = (text: string) => text.replace(/([?&]cursor=)[^&"]+/g, "$1<cursor>");

/** What legitimately differs between two answers, made comparable (see the file's header). */
async function normalize(value: unknown, key: string, writing: boolean): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((item) => normalize(item, key, writing)));
  if (value && typeof value === "object") {
    const entries = await Promise.all(
      Object.entries(value).map(async ([k, v]) => [k, await normalize(v, k, writing)] as const),
    );
    return Object.fromEntries(entries);
  }
  if (typeof value !== "string") return value;
  if (key === "timeStamp") return "<time of the answer>";
  if (key === "access_token") return "<token>";
  if (key === "cursor" && value) {
    // The change feed's: its position, which A's writes must not move.
    const { key: position } = await decodeCursor(env, value, `${b.accountId}:changes`);
    return `<cursor after change ${position[0]}>`;
  }
  const text = withoutCursor(value);
  if (!writing) return text;
  if (["created_at", "updated_at", "disabled_at", "previous_secret_expires_at"].includes(key)) return "<time>";
  if (["secret", "key", "key_prefix", "token", "link", "client_secret", "expires_at", "email"].includes(key)) {
    return `<${key}>`;
  }
  // A client's id (numbers are named where the write made them).
  if (key === "id") return "<client id>";
  if ((key === "media_url" || key === "image_url") && text.includes("/media/m/")) return "<media>";
  return text;
}

/** The link to the next page an answer gives: a page's `next`, or an OGC answer's link of rel `next`. */
function nextLinkOf(body: Record<string, unknown>): string | undefined {
  if (typeof body.next === "string") return body.next;
  const links = Array.isArray(body.links) ? (body.links as { rel?: string; href?: string }[]) : [];
  return links.find((link) => link.rel === "next")?.href;
}

/** B's answer to one step, with what may differ made comparable; a page's `next` is followed once. */
async function answer(step: Step, names: Names | null, follow = true): Promise<Answer> {
  const response = await send(step);
  const type = response.headers.get("Content-Type") ?? "";
  let body: unknown;
  let next: string | undefined;
  if (/json/.test(type)) {
    const parsed = (await response.json()) as Record<string, unknown>;
    next = nextLinkOf(parsed);
    if (names && response.status === 201 && typeof parsed.id === "number" && !names.has(parsed.id)) {
      names.set(parsed.id, `<made ${names.size}>`);
    }
    const normalized = await normalize(parsed, "", names !== null);
    body = names ? JSON.parse(nameIdsIn(JSON.stringify(nameIds(normalized, names)), names)) : normalized;
  } else if (/^text\//.test(type)) body = await response.text();
  else {
    const bytes = new Uint8Array(await response.arrayBuffer());
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    body = { bytes: bytes.byteLength, sha256: digest.toHex() };
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) {
    if (name === "x-request-id") continue;
    if (name === "x-d1-bookmark") {
      // Sealed, and only to an access token (a client's or a person's): a key's readers, a signed-in
      // browser's session and the public routes get none.
      expect(["token", "person"], `${step.path}: ${name}`).toContain(step.as ?? "token");
      expect(value, `${step.path}: ${name}`).toMatch(BOOKMARK);
      headers[name] = "<sealed>";
    } else headers[name] = names ? nameIdsIn(value, names) : value;
  }
  const path = withoutCursor(names ? nameIdsIn(step.path, names) : step.path);
  const request = `${step.method ?? "GET"} ${path} as ${step.as ?? "token"}`;
  const result: Answer = { request, status: response.status, headers, body };
  if (follow && next) {
    const url = new URL(next);
    url.searchParams.delete("key");
    result.next = await answer({ ...step, path: `${url.pathname}${url.search}` }, names, false);
  }
  return result;
}

/** Every read of the table, in order; each key read once first, so the public cache holds what B reads. */
async function readAll(warm: boolean): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (const steps of Object.values(READS)) {
    for (const step of steps(f)) {
      if (warm && step.as === "key") await (await send(step)).body?.cancel();
      answers.push(await answer(step, null));
    }
  }
  return answers;
}

describe("another account's data and activity change none of B's answers", () => {
  it("the table covers every route of the app", () => {
    const covered = new Set([...Object.keys(READS), ...Object.keys(WRITES)]);
    expect(ROUTES.filter((route) => !covered.has(route))).toEqual([]);
    expect([...covered].filter((route) => !ROUTES.includes(route))).toEqual([]);
  });

  let before: Answer[];

  it("B's reads, with a token and with a key, are the same after A's writes", { timeout: 600_000 }, async () => {
    before = await readAll(true);
    // The near-limit tile: B's matches are exactly the bound, the tile answered.
    const tileBefore = before.find((a) => a.request === "GET /v3.0/tiles/0/0/0.mvt?q=okapiq as token")!;
    expect(tileBefore.status).toBe(200);
    expect(before.find((a) => a.request === "GET /v3.0/tiles/0/0/0.mvt?q=herd as token")!.status).toBe(422);

    await aWrites();
    // The database's matches of q=okapiq are now past the bound; B's are still exactly at it.
    const db = await contentDb(b.accountId);
    const matches = async (where: string, ...values: number[]) =>
      (await db
        .prepare(
          `SELECT count(*) AS n FROM pinpoints_fts CROSS JOIN pinpoints ON pinpoints.id = pinpoints_fts.rowid WHERE pinpoints_fts MATCH '"okapiq"*' ${where}`,
        )
        .bind(...values)
        .first<{ n: number }>())!.n;
    expect(await matches("AND pinpoints.account_id = ?", b.accountId)).toBe(MAX_TILE_ROWS);
    expect(await matches("")).toBeGreaterThan(MAX_TILE_ROWS);
    // Past the key cache's freshness, so every key read looks the versions up again.
    await sleep(FRESH_MS + 100);

    const after = await readAll(false);
    expect(after.map((a) => a.request)).toEqual(before.map((a) => a.request));
    for (let i = 0; i < before.length; i++) expect.soft(after[i], before[i]!.request).toEqual(before[i]);
    // Key reads came from the cache both times: A's writes renewed none of them (the map page is no API read).
    const keyed = after.filter(
      (a) => a.request.endsWith("as key") && a.status === 200 && !a.request.includes("/maps/"),
    );
    expect(keyed.length).toBeGreaterThan(10);
    for (const answer of keyed) expect(answer.headers["cache-status"], answer.request).toBe("poi-public; hit");
  });

  it(
    "A's categories show in B's category answers, which are the only ones to change",
    { timeout: 600_000 },
    async () => {
      const categories = await aCategories();
      await settleWebhook(aWebhook, a.accountId);
      await sleep(FRESH_MS + 100);
      const after = await readAll(false);
      for (let i = 0; i < before.length; i++) {
        const [was, now] = [before[i]!, after[i]!];
        if (!/^GET \/v3\.0\/categories/.test(was.request)) {
          expect.soft(now, was.request).toEqual(was);
          continue;
        }
        // Shared content: the page of every category gains A's, and a key's readers get the new answer.
        const shown = async (id: number) => json(await b.get(`/v3.0/categories/${id}`));
        if (was.request.startsWith("GET /v3.0/categories?")) {
          const results = (was.body as { results: unknown[] }).results;
          expect(now.body, was.request).toEqual({
            ...(was.body as object),
            results: [...results, ...(await Promise.all(categories.map(shown)))],
          });
        } else expect(now.body, was.request).toEqual(was.body);
        if (was.request.endsWith("as key")) expect(now.headers["cache-status"]).toBe("poi-public; fwd=miss; stored");
      }
    },
  );

  it("B's writes answer the same after A's writes", { timeout: 600_000 }, async () => {
    const run = async () => {
      const answers: Answer[] = [];
      for (const write of Object.values(WRITES)) {
        const { steps, ids } = await write(f);
        const names: Names = new Map(Object.entries(ids).map(([name, id]) => [id, `<${name}>`]));
        for (const step of steps) answers.push(await answer(step, names, false));
      }
      return answers;
    };
    const first = await run();
    await aWrites();
    const second = await run();
    expect(second.map((a) => a.request)).toEqual(first.map((a) => a.request));
    for (let i = 0; i < first.length; i++) expect.soft(second[i], first[i]!.request).toEqual(first[i]);
    // Every write route answered as a write does (not a refusal the comparison would not tell from another).
    expect(first.filter((a) => a.status >= 500)).toEqual([]);
    // And B's people's writes did what they do: all succeeded but accepting one invitation twice.
    const asPerson = first
      .filter((a) => / as (person|session)$/.test(a.request))
      .map((a) => `${a.status} ${a.request}`);
    expect(asPerson.filter((line) => !/^2/.test(line))).toEqual(["410 POST /v3.0/invitations/accept as session"]);
  });

  it("B's webhook positions count B's changes alone, whatever A writes in between", { timeout: 600_000 }, async () => {
    const mine = async (name: string) =>
      (await created(await b.send("POST", "/v3.0/pinpoints", { name, ...PARIS }))).id;
    const firstId = await mine("before A");
    await aWrites();
    const secondId = await mine("after A");
    await settleWebhook(f.webhook.id, b.accountId);
    type Payload = { type: string; data: { id: number; position: number } };
    const deliveries = await received(f.webhook.name);
    const payloads = deliveries.map((d) => JSON.parse(d.body) as Payload);
    const position = (id: number) =>
      payloads.find((p) => p.data.id === id && p.type === "pinpoint.created")!.data.position;
    expect(position(secondId)).toBe(position(firstId) + 1);
    // Every change B made since its webhook exists, numbered without a gap, each once, as the change log holds them.
    const positions = [...new Set(payloads.map((p) => p.data.position))].sort((x, y) => x - y);
    expect(positions.at(-1)! - positions[0]! + 1).toBe(positions.length);
    const db = await contentDb(b.accountId);
    const logged = await db
      .prepare("SELECT position FROM changes WHERE account_id = ? AND position >= ? ORDER BY position")
      .bind(b.accountId, positions[0])
      .all<{ position: number }>();
    for (const { position } of logged.results) expect(positions).toContain(position);
    // The message ids and the deliveries list name the same positions.
    for (const { headers, body } of deliveries) {
      expect(headers["webhook-id"]).toBe(`msg_${f.webhook.id}_p${(JSON.parse(body) as Payload).data.position}`);
    }
    const listed = await json<{ results: { position: number; message_id: string }[] }>(
      await b.get(`/v3.0/webhooks/${f.webhook.id}/deliveries?limit=1000`),
    );
    expect(new Set(listed.results.map((r) => r.position))).toEqual(new Set(positions));
  });
});
