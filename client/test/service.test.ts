/**
 * The client against the running service (`wrangler dev`, started with a
 * fresh database and a registered client by scripts/test-client.ts, which
 * passes them in POI_BASE, POI_CLIENT_ID, POI_CLIENT_SECRET, the token
 * lifetime in POI_TOKEN_TTL_SECONDS and an editor's email and password in
 * POI_PERSON_EMAIL and POI_PERSON_PASSWORD): the README's curl tour written with the
 * client, then token renewal, paging, idempotent retries, conditional
 * writes, GeoJSON import, a person's session and publishable keys.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ApiError,
  createPoiClient,
  ifMatch,
  TokenError,
  type Fetch,
  type ImportFeature,
  type PinpointImport,
} from "poi-content-api-client";

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set: run this suite with npm run test:client`);
  return value;
}

const baseUrl = setting("POI_BASE");
const credentials = { clientId: setting("POI_CLIENT_ID"), clientSecret: setting("POI_CLIENT_SECRET") };
const tokenTtlSeconds = Number(setting("POI_TOKEN_TTL_SECONDS"));

/** The global fetch, recording each request's method, path and Authorization header. */
function recordingFetch() {
  const seen: { method: string; path: string; authorization: string | null }[] = [];
  const fetch: Fetch = (request) => {
    seen.push({
      method: request.method,
      path: new URL(request.url).pathname,
      authorization: request.headers.get("Authorization"),
    });
    return globalThis.fetch(request);
  };
  return { seen, fetch };
}

const poi = createPoiClient({ baseUrl, credentials });

const point = (name: string, longitude: number, latitude: number, tags?: string[]): ImportFeature => ({
  type: "Feature",
  geometry: { type: "Point", coordinates: [longitude, latitude] },
  properties: tags ? { name, tags } : { name },
});

test("the README's quick tour, with the client", async () => {
  const { data: orsay, response: created } = await poi.POST("/v3.0/pinpoints", {
    body: {
      name: "Musée d'Orsay",
      latitude: 48.86,
      longitude: 2.3266,
      category: 1,
      tags: ["museum", " art ", "museum"],
      description: "<p>Impressionists <script>alert(1)</script></p>",
    },
  });
  assert.equal(created.status, 201);
  assert.ok(orsay);
  assert.equal(orsay.name, "Musée d'Orsay");
  assert.deepEqual(orsay.tags, ["museum", "art"]);
  assert.equal(orsay.description, "<p>Impressionists </p>");
  assert.equal(created.headers.get("Location"), `${baseUrl}/v3.0/pinpoints/${orsay.id}`);

  const create = async (body: { name: string; latitude: number; longitude: number; tags: string[] }) => {
    const { data } = await poi.POST("/v3.0/pinpoints", { body });
    assert.ok(data);
    return data.id;
  };
  const eiffel = await create({
    name: "Tour Eiffel",
    latitude: 48.8583,
    longitude: 2.2945,
    tags: ["monument", "view"],
  });
  const carnavalet = await create({
    name: "Musée Carnavalet",
    latitude: 48.8575,
    longitude: 2.3625,
    tags: ["museum", "free"],
  });

  // Array parameters go as one comma-separated value, as the document says (explode: false).
  const { data: museums } = await poi.GET("/v3.0/pinpoints", {
    params: { query: { bbox: [2.25, 48.85, 2.4, 48.87], tags: ["museum"] } },
  });
  assert.deepEqual(
    museums?.results.map((p) => p.name),
    ["Musée d'Orsay", "Musée Carnavalet"],
  );
  const { data: both } = await poi.GET("/v3.0/pinpoints", { params: { query: { tags: ["museum", "free"] } } });
  assert.deepEqual(
    both?.results.map((p) => p.id),
    [carnavalet],
    "every one of the tags",
  );

  const { data: firstPage } = await poi.GET("/v3.0/pinpoints", { params: { query: { limit: 2 } } });
  assert.equal(firstPage?.results.length, 2);
  assert.match(firstPage?.next ?? "", /[?&]cursor=/);
  assert.equal(firstPage?.previous, null);

  const { data: updated } = await poi.PUT("/v3.0/pinpoints/{id}", {
    params: { path: { id: orsay.id } },
    body: { address: "1 Rue de la Légion d'Honneur, Paris", tags: ["museum", "art"] },
  });
  assert.equal(updated?.address, "1 Rue de la Légion d'Honneur, Paris");
  assert.equal(updated?.name, "Musée d'Orsay", "fields not sent are kept");

  const { data: list } = await poi.POST("/v3.0/lists", { body: { name: "Rainy day", description: "<b>Indoors</b>" } });
  assert.ok(list);
  const { data: added } = await poi.POST("/v3.0/lists/{id}/pinpoints", {
    params: { path: { id: list.id } },
    body: [{ id: orsay.id }, { id: carnavalet }, { id: 999999 }],
  });
  assert.deepEqual(added, { total: 3, errors: [{ index: 2, id: 999999, error: "not_found" }] });

  const members = [];
  for await (const pinpoint of poi.paginate("/v3.0/pinpoints", { params: { query: { list: list.id } } })) {
    members.push(pinpoint.id);
  }
  assert.deepEqual(members, [orsay.id, carnavalet]);

  const { data: removed } = await poi.DELETE("/v3.0/lists/{id}/pinpoints", {
    params: { path: { id: list.id } },
    body: [{ id: carnavalet }, { id: eiffel }],
  });
  assert.deepEqual(removed, { total: 2, errors: [{ index: 1, id: eiffel, error: "not_member" }] });

  const gone = await create({ name: "Closed café", latitude: 48.85, longitude: 2.35, tags: [] });
  const { response: deleted } = await poi.DELETE("/v3.0/pinpoints/{id}", { params: { path: { id: gone } } });
  assert.equal(deleted.status, 204);
  const { error: notFound } = await poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: gone } } });
  assert.equal(notFound?.type, "urn:poi-api:problem:not_found");

  // The types catch a missing field; the service catches values the types allow.
  const { error, response: refused } = await poi.POST("/v3.0/pinpoints", {
    body: { name: "", latitude: 91, longitude: 2.35 },
  });
  assert.equal(refused.status, 400);
  assert.equal(error?.type, "urn:poi-api:problem:validation_failed");
  assert.deepEqual(
    error?.errors?.map((e) => ("pointer" in e ? e.pointer : e.parameter)),
    ["/name", "/latitude"],
  );
});

test("the single create and the GeoJSON import are typed calls of their own, each with its own answer", async () => {
  const { data: one } = await poi.POST("/v3.0/pinpoints", { body: { name: "One", latitude: 1, longitude: 2 } });
  // Typed as a pinpoint: no narrowing, no cast (a compile error here fails npm run test:client).
  const created: { id: number; name: string; latitude: number } | undefined = one;
  assert.equal(created?.name, "One");
  const collection: PinpointImport = {
    type: "FeatureCollection",
    features: [
      { type: "Feature", geometry: { type: "Point", coordinates: [2.1, 48.1] }, properties: { name: "Imported A" } },
      {
        type: "Feature",
        geometry: { type: "Point", coordinates: [2.2, 48.2, 35] },
        properties: { name: "Imported B" },
      },
    ],
  };
  const { data: imported, error, response } = await poi.importPinpoints(collection);
  assert.equal(response.status, 201);
  assert.equal(error, undefined);
  const ids: number[] | undefined = imported?.ids;
  assert.equal(ids?.length, 2);
  const { data: second } = await poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: ids?.[1] ?? 0 } } });
  assert.equal(second?.name, "Imported B", "the ids come in feature order");
  assert.equal(second?.altitude, 35);
  // @ts-expect-error A FeatureCollection is not a pinpoint: the typed POST is the single create.
  await poi.POST("/v3.0/pinpoints", { body: collection }).catch(() => undefined);

  const refused = await poi.importPinpoints({
    type: "FeatureCollection",
    features: [{ type: "Feature", geometry: { type: "Point", coordinates: [2, 91] }, properties: { name: "" } }],
  });
  assert.equal(refused.response.status, 400);
  assert.equal(refused.data, undefined);
  assert.deepEqual(
    refused.error?.errors?.map((e) => ("pointer" in e ? e.pointer : e.parameter)),
    ["/features/0/geometry/coordinates/1", "/features/0/properties/name"],
  );
});

test("a token is fetched once, renewed before it expires, and requests never see it lapse", async () => {
  const recorded = recordingFetch();
  const renewing = createPoiClient({ baseUrl, credentials, fetch: recorded.fetch });
  const started = Date.now();
  // Requests until the token has been renewed twice: past two token lifetimes.
  while (Date.now() - started < (tokenTtlSeconds * 2 + 1) * 1000) {
    const { response } = await renewing.GET("/v3.0/lists", { params: { query: { limit: 1 } } });
    assert.equal(response.status, 200, "no request went out with an expired token");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const tokens = recorded.seen.filter((s) => s.path === "/v3.0/oauth2/token");
  const used = new Set(recorded.seen.filter((s) => s.path === "/v3.0/lists").map((s) => s.authorization));
  assert.ok(tokens.length >= 3 && tokens.length <= 6, `${tokens.length} token requests over two lifetimes`);
  assert.equal(used.size, tokens.length, "each token fetched was used");
});

/** A fetch holding the session cookie as a browser does: sent with every request, replaced when the service rotates it. */
function cookieJar(): Fetch {
  let cookie: string | undefined;
  return async (request) => {
    const headers = new Headers(request.headers);
    if (cookie !== undefined) headers.set("Cookie", cookie);
    const response = await globalThis.fetch(new Request(request, { headers }));
    const set = response.headers.getSetCookie().find((line) => /^(__Host-)?poi_session=/.test(line));
    if (set !== undefined) cookie = set.split(";")[0];
    return response;
  };
}

test("a person's session: tokens minted from it, writes carry the person, and signing out ends them", async () => {
  const jar = cookieJar();
  const signIn = await jar(
    new Request(`${baseUrl}/v3.0/auth/sign-in`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: setting("POI_PERSON_EMAIL"), password: setting("POI_PERSON_PASSWORD") }),
    }),
  );
  assert.equal(signIn.status, 200);
  const { accounts } = (await signIn.json()) as { accounts: { id: number }[] };
  assert.equal(accounts.length, 1);

  const recorded: string[] = [];
  const asPerson = createPoiClient({
    baseUrl,
    session: { account: accounts[0]!.id },
    fetch: (request) => {
      recorded.push(new URL(request.url).pathname);
      return jar(request);
    },
  });
  const { data: place, response } = await asPerson.POST("/v3.0/pinpoints", {
    body: { name: "Written by a person", latitude: 45.76, longitude: 4.84 },
  });
  assert.equal(response.status, 201);
  assert.equal(place?.created_by?.type, "person");
  assert.ok(recorded.includes("/v3.0/auth/token"), "the token came from the session");
  const read = await poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: place!.id } } });
  assert.deepEqual(read.data?.updated_by, place?.updated_by, "a client reads who wrote it");

  // Choosing an account rotates the session, and its CSRF token with it: read the current one.
  const current = (await (await jar(new Request(`${baseUrl}/v3.0/auth/session`))).json()) as { csrf_token: string };
  const signOut = await jar(
    new Request(`${baseUrl}/v3.0/auth/sign-out`, { method: "POST", headers: { "X-CSRF-Token": current.csrf_token } }),
  );
  assert.equal(signOut.status, 204);
  await assert.rejects(
    asPerson.GET("/v3.0/pinpoints/{id}", { params: { path: { id: place!.id } } }),
    (error: unknown) => error instanceof TokenError && error.status === 401,
    "after signing out, the session mints no token",
  );
});

test("paginate yields every pinpoint exactly once, in the order of a brute-force read", async () => {
  const features = Array.from({ length: 53 }, (_, i) => point(`Page ${i}`, 2 + i / 100, 48 + i / 100));
  await poi.importGeoJSON(features);
  const { data: all } = await poi.GET("/v3.0/pinpoints", { params: { query: { limit: 1000 } } });
  assert.ok(all && all.next === null && all.results.length >= 53);
  const expected = all.results.map((p) => p.id);
  for (const limit of [1, 7, 50, 1000]) {
    const ids = [];
    for await (const pinpoint of poi.paginate("/v3.0/pinpoints", { params: { query: { limit } } }))
      ids.push(pinpoint.id);
    assert.deepEqual(ids, expected, `limit ${limit}`);
  }
});

test("a POST whose answer was lost is retried with the same Idempotency-Key and creates one pinpoint", async () => {
  let dropped = 0;
  const keys: (string | null)[] = [];
  const lossy = createPoiClient({
    baseUrl,
    credentials,
    fetch: async (request) => {
      if (request.method === "POST" && request.url.endsWith("/v3.0/pinpoints"))
        keys.push(request.headers.get("Idempotency-Key"));
      const response = await globalThis.fetch(request);
      if (request.method === "POST" && !request.url.endsWith("/oauth2/token") && dropped++ === 0) {
        throw new TypeError("fetch failed: the connection closed before the answer arrived");
      }
      return response;
    },
  });
  const name = `Idempotent ${crypto.randomUUID()}`;
  const { data, response } = await lossy.POST("/v3.0/pinpoints", { body: { name, latitude: 45, longitude: 5 } });
  assert.equal(response.status, 201);
  assert.equal(response.headers.get("Idempotent-Replayed"), "true", "the second answer is the first one, replayed");
  assert.equal(keys.length, 2);
  assert.equal(keys[0], keys[1]);
  const { data: found } = await poi.GET("/v3.0/pinpoints", { params: { query: { q: name, limit: 1000 } } });
  assert.deepEqual(
    found?.results.filter((p) => p.name === name).map((p) => p.id),
    [data?.id],
  );
});

test("If-Match from a read: the first write wins, a write from a stale read is 412 and changes nothing", async () => {
  const { data: created } = await poi.POST("/v3.0/pinpoints", {
    body: { name: "Versioned", latitude: 1, longitude: 1 },
  });
  assert.ok(created);
  const params = { path: { id: created.id } };
  const read = await poi.GET("/v3.0/pinpoints/{id}", { params });
  const first = await poi.PUT("/v3.0/pinpoints/{id}", {
    params: { ...params, header: ifMatch(read) },
    body: { name: "Mine" },
  });
  assert.equal(first.response.status, 200);
  assert.notEqual(first.response.headers.get("ETag"), read.response.headers.get("ETag"));
  const stale = await poi.PUT("/v3.0/pinpoints/{id}", {
    params: { ...params, header: ifMatch(read) },
    body: { name: "Lost" },
  });
  assert.equal(stale.response.status, 412);
  assert.equal(stale.error?.type, "urn:poi-api:problem:precondition_failed");
  const fresh = await poi.PUT("/v3.0/pinpoints/{id}", {
    params: { ...params, header: ifMatch(first) },
    body: { name: "Mine again" },
  });
  assert.equal(fresh.response.status, 200);
  const { data: now } = await poi.GET("/v3.0/pinpoints/{id}", { params });
  assert.equal(now?.name, "Mine again");
});

test("GeoJSON import from an iterable and from a file, in batches of 1,000, with progress", async () => {
  const progress: { imported: number; batches: number; ids: number }[] = [];
  function* places() {
    for (let i = 0; i < 2500; i++)
      yield point(`Imported ${i}`, -5 + (i % 100) / 10, 40 + Math.floor(i / 100) / 10, ["import"]);
  }
  const ids = await poi.importGeoJSON(places(), {
    onProgress: ({ imported, batches, ids }) => progress.push({ imported, batches, ids: ids.length }),
  });
  assert.deepEqual(progress, [
    { imported: 1000, batches: 1, ids: 1000 },
    { imported: 2000, batches: 2, ids: 1000 },
    { imported: 2500, batches: 3, ids: 500 },
  ]);
  assert.equal(new Set(ids).size, 2500);
  for (const index of [0, 999, 1000, 2499]) {
    const { data } = await poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: ids[index]! } } });
    assert.equal(data?.name, `Imported ${index}`, "ids come back in feature order");
  }

  const file = new Blob([JSON.stringify({ type: "FeatureCollection", features: [...places()].slice(0, 30) })]);
  const fromFile: number[] = [];
  const fileIds = await poi.importGeoJSON(file, { batchSize: 12, onProgress: (p) => fromFile.push(p.imported) });
  assert.deepEqual(fromFile, [12, 24, 30]);
  const { data: last } = await poi.GET("/v3.0/pinpoints/{id}", { params: { path: { id: fileIds[29]! } } });
  assert.equal(last?.name, "Imported 29");

  const bad = [...places()].slice(0, 5);
  bad[3] = point("", 2, 91);
  await assert.rejects(poi.importGeoJSON(bad, { batchSize: 2 }), (error: unknown) => {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 400);
    assert.equal(error.firstFeature, 2, "the refused batch starts at feature 2");
    assert.deepEqual(
      error.problem?.errors?.map((e) => ("pointer" in e ? e.pointer : e.parameter)),
      ["/features/1/geometry/coordinates/1", "/features/1/properties/name"],
    );
    return true;
  });
});

test("a publishable key reads what it publishes and nothing else", async () => {
  const { data: list } = await poi.POST("/v3.0/lists", { body: { name: "Published" } });
  const { data: unpublished } = await poi.POST("/v3.0/lists", { body: { name: "Unpublished" } });
  assert.ok(list && unpublished);
  const ids = await poi.importGeoJSON([point("Shown 1", 3, 45), point("Shown 2", 3.1, 45)]);
  await poi.POST("/v3.0/lists/{id}/pinpoints", { params: { path: { id: list.id } }, body: ids.map((id) => ({ id })) });
  const { data: key } = await poi.POST("/v3.0/keys", { body: { name: "Map", lists: [list.id] } });
  assert.ok(key);

  const browser = createPoiClient({ baseUrl, publishableKey: key.key });
  const shown = [];
  for await (const pinpoint of browser.paginate("/v3.0/pinpoints", {
    params: { query: { list: list.id, limit: 1 } },
  })) {
    shown.push(pinpoint.name);
  }
  assert.deepEqual(shown, ["Shown 1", "Shown 2"]);
  const { response: write } = await browser.POST("/v3.0/lists", { body: { name: "Not mine" } });
  assert.equal(write.status, 403);
  const { response: shownList } = await browser.GET("/v3.0/lists/{id}", { params: { path: { id: list.id } } });
  assert.equal(shownList.status, 200);
  const { response: other } = await browser.GET("/v3.0/lists/{id}", { params: { path: { id: unpublished.id } } });
  assert.equal(other.status, 404, "a list of the account the key does not publish is not there");
});
