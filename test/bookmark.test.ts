/**
 * D1 sessions (http/middleware/d1-session.ts) and the bookmark's format (http/bookmark-header.ts):
 * every answer to an access token that touched the database carries the session's position, sealed;
 * a sealed bookmark sent back anchors the next request's session on its database; D1's own form,
 * which answers carried before, is accepted and not followed; anything else is a 400. Answers to
 * publishable keys and the public routes carry none. The tests open the bookmarks with the service's
 * own keys to compare the positions inside.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { shardNames } from "../src/db/shard-plan";
import {
  BOOKMARK_PATTERN,
  D1_BOOKMARK_PATTERN,
  ISSUED_BOOKMARK_PATTERN,
  openBookmark,
  sealBookmark,
} from "../src/http/bookmark-header";
import {
  basic,
  call,
  type Caller,
  caller,
  contentDb,
  createClient,
  createList,
  createPinpoint,
  fetchWith,
  json,
  requestToken,
  shardOf,
} from "./helpers";

const HEADER = "X-D1-Bookmark";
const DATABASES = shardNames(env.SHARDS);
/** A position later than any the tests' databases reach. */
const LATER = "7fffffff-7fffffff-00000000-00000000000000000000000000000000";

/** The answer's sealed bookmark. */
function bookmarkOf(response: Response): string {
  const value = response.headers.get(HEADER);
  expect(value).toMatch(new RegExp(ISSUED_BOOKMARK_PATTERN));
  return value!;
}

/** The position a sealed bookmark holds, opened with the service's keys. */
async function positionOf(value: string, secrets: Partial<Cloudflare.Env> = {}) {
  const opened = await openBookmark({ ...env, ...secrets }, value, DATABASES);
  if (opened.kind !== "sealed") throw new Error(`not a sealed bookmark: ${value} (${opened.kind})`);
  return opened.position;
}

/** The D1 bookmark of an answer's sealed one. */
async function d1Of(response: Response): Promise<string> {
  return (await positionOf(bookmarkOf(response))).bookmark;
}

let who: Caller;
beforeAll(async () => {
  who = await caller();
});

describe("the bookmark header", () => {
  it("is on reads, creates, updates, deletes and errors, sealed, and what it holds never goes backwards", async () => {
    const seen: string[] = [];
    seen.push(await d1Of(await who.get("/v3.0/pinpoints")));
    const created = await who.send("POST", "/v3.0/pinpoints", { name: "Booked", latitude: 1, longitude: 2 });
    expect(created.status).toBe(201);
    const createdBookmark = bookmarkOf(created);
    seen.push(await d1Of(created));
    const { id } = await created.json<{ id: number }>();
    const updated = await who.send(
      "PUT",
      `/v3.0/pinpoints/${id}`,
      { name: "Booked again" },
      { [HEADER]: createdBookmark },
    );
    expect(updated.status).toBe(200);
    seen.push(await d1Of(updated));
    const deleted = await who.send("DELETE", `/v3.0/pinpoints/${id}`, undefined, { [HEADER]: bookmarkOf(updated) });
    expect(deleted.status).toBe(204);
    seen.push(await d1Of(deleted));
    const missing = await who.get(`/v3.0/pinpoints/${id}`, { [HEADER]: bookmarkOf(deleted) });
    expect(missing.status).toBe(404);
    seen.push(await d1Of(missing));
    // D1's bookmarks compare lexically: each write moves it forward, and a session anchored at one never reports less.
    expect([...seen].sort()).toEqual(seen);
    expect(new Set(seen.slice(1, 4)).size).toBe(3);
    // Every position is of the account's own database.
    const shard = await shardOf(who.accountId);
    expect((await positionOf(createdBookmark)).database).toBe(shard);
  });

  it("tells nothing by its text: two answers at the same position carry unrelated bookmarks", async () => {
    const position = await positionOf(bookmarkOf(await who.get("/v3.0/lists")));
    const [a, b] = [(await sealBookmark(env, position))!, (await sealBookmark(env, position))!];
    expect(a).not.toBe(b);
    expect(await positionOf(a)).toEqual(position);
    expect(await positionOf(b)).toEqual(position);
    // Nothing of D1's bookmark shows: no hexadecimal group of it appears in the sealed one.
    const groups = (await positionOf(a)).bookmark.split("-").filter((group) => group.length >= 8);
    for (const group of groups) expect(a.toLowerCase()).not.toContain(group);
  });

  it("anchors the session on its database: a sealed bookmark later than the database's comes back unchanged", async () => {
    const sealed = await sealBookmark(env, { bookmark: LATER, database: await shardOf(who.accountId) });
    const response = await who.get("/v3.0/pinpoints", { [HEADER]: sealed! });
    expect(response.status).toBe(200);
    expect(await d1Of(response)).toBe(LATER);
  });

  it("accepts D1's own form, which answers carried before, and does not follow it", async () => {
    expect(LATER).toMatch(new RegExp(D1_BOOKMARK_PATTERN));
    const response = await who.get("/v3.0/pinpoints", { [HEADER]: LATER });
    expect(response.status).toBe(200);
    expect((await d1Of(response)) < LATER).toBe(true);
  });

  it.skipIf(DATABASES.length < 2)(
    "does not follow a bookmark of another database (a shard the account left)",
    async () => {
      const own = await shardOf(who.accountId);
      const other = DATABASES.find((name) => name !== own)!;
      const sealed = await sealBookmark(env, { bookmark: LATER, database: other });
      const response = await who.get("/v3.0/pinpoints", { [HEADER]: sealed! });
      expect(response.status).toBe(200);
      const position = await positionOf(bookmarkOf(response));
      expect(position.database).toBe(own);
      expect(position.bookmark < LATER).toBe(true);
    },
  );

  it("opens after a rotation of the signing key, sealed under the previous one", async () => {
    const rotated = { TOKEN_SIGNING_KEY: "r".repeat(48), TOKEN_SIGNING_KEY_PREVIOUS: env.TOKEN_SIGNING_KEY };
    const sealed = await sealBookmark(env, { bookmark: LATER, database: await shardOf(who.accountId) });
    const response = await fetchWith(rotated, "/v3.0/pinpoints", {
      headers: { Authorization: `Bearer ${who.token}`, [HEADER]: sealed! },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    const position = await positionOf(bookmarkOf(response), rotated);
    expect(position.bookmark).toBe(LATER);
    // Sealed under the new key: the old one alone cannot open it.
    expect((await openBookmark(env, bookmarkOf(response), DATABASES)).kind).toBe("invalid");
  });

  it("gives read-your-writes to a client that sends it back, under parallel writers", async () => {
    const writers = await Promise.all(Array.from({ length: 8 }, () => caller()));
    await Promise.all(
      writers.map(async (writer, w) => {
        let bookmark: string | undefined;
        for (let n = 0; n < 5; n++) {
          const headers: Record<string, string> = bookmark ? { [HEADER]: bookmark } : {};
          const created = await writer.send(
            "POST",
            "/v3.0/pinpoints",
            { name: `w${w}-${n}`, latitude: 0, longitude: 0 },
            headers,
          );
          expect(created.status).toBe(201);
          const { id } = await created.json<{ id: number }>();
          const read = await writer.get(`/v3.0/pinpoints/${id}`, { [HEADER]: bookmarkOf(created) });
          expect(read.status).toBe(200);
          expect((await d1Of(read)) >= (await d1Of(created))).toBe(true);
          bookmark = bookmarkOf(read);
        }
        const page = await writer.get("/v3.0/pinpoints?limit=10", { [HEADER]: bookmark! });
        const { results } = await page.json<{ results: { name: string }[] }>();
        expect(results.map((r) => r.name)).toEqual([0, 1, 2, 3, 4].map((n) => `w${w}-${n}`));
      }),
    );
  });

  it("is allowed and exposed through CORS", async () => {
    const preflight = await call("/v3.0/pinpoints", {
      method: "OPTIONS",
      headers: {
        Origin: "https://map.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, x-d1-bookmark",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("x-d1-bookmark");
    const response = await who.get("/v3.0/pinpoints", { Origin: "https://map.example" });
    expect(response.headers.get("Access-Control-Expose-Headers")?.toLowerCase()).toContain("x-d1-bookmark");
    bookmarkOf(response);
  });

  it("the request pattern takes both forms and nothing else", () => {
    const pattern = new RegExp(BOOKMARK_PATTERN);
    expect(LATER).toMatch(pattern);
    expect("A".repeat(80)).toMatch(pattern);
    for (const value of ["A".repeat(79), "A".repeat(81), `${"A".repeat(79)}=`, LATER.toUpperCase(), `${LATER}-00`]) {
      expect(value).not.toMatch(pattern);
    }
  });
});

describe("answers without a bookmark", () => {
  it("to a publishable key, whose readers are anyone, even when it sends one", async () => {
    const list = await createList(who);
    await createPinpoint(who);
    const key = await json<{ key: string }>(await who.send("POST", "/v3.0/keys", { name: "map", lists: [list.id] }));
    const sealed = await sealBookmark(env, { bookmark: LATER, database: await shardOf(who.accountId) });
    for (const headers of [{}, { [HEADER]: sealed! }, { [HEADER]: LATER }] as Record<string, string>[]) {
      for (const path of ["/v3.0/pinpoints", `/v3.0/lists/${list.id}`, "/v3.0/categories", "/v3.0/tiles/0/0/0.mvt"]) {
        for (let read = 0; read < 2; read++) {
          const response = await call(`${path}?key=${key.key}`, { headers });
          expect(response.status, path).toBe(200);
          expect(response.headers.get(HEADER), path).toBeNull();
          await response.body?.cancel();
        }
      }
    }
    const page = await call(`/maps/${list.id}?key=${key.key}`);
    expect(page.status).toBe(200);
    expect(page.headers.get(HEADER)).toBeNull();
    await page.body?.cancel();
  });

  it("to the token endpoint, /media, the reference and refused credentials", async () => {
    const token = await requestToken(await createClient());
    expect(token.status).toBe(200);
    expect(token.headers.get(HEADER)).toBeNull();
    const refused = await call("/v3.0/oauth2/token", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials",
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get(HEADER)).toBeNull();
    for (const path of ["/media/builtin/default-pin.png", "/v3.0/openapi.json", "/v3.0/pinpoints"]) {
      const response = await call(path);
      expect(response.headers.get(HEADER), path).toBeNull();
      await response.body?.cancel();
    }
  });
});

describe("a bad bookmark", () => {
  const bad = [
    "",
    // Sealed-looking, but not by this service.
    "A".repeat(80),
    "   ",
    "garbage",
    "00000000-0000000c-00000000",
    "00000000-0000000C-00000000-00000000000000000000000000000000",
    "00000000-0000000c-00000000-00000000000000000000000000000000-00",
    "first-primary",
    "first-unconstrained",
    "x".repeat(10_000),
  ];

  it.each(bad.map((value) => [JSON.stringify(value.slice(0, 40)), value]))(
    "%s is a 400 naming the header",
    async (_, value) => {
      const response = await who.get("/v3.0/pinpoints", { [HEADER]: value });
      expect(response.status).toBe(400);
      const problem = await response.json<{ type: string; errors: { parameter: string }[] }>();
      expect(problem.type).toBe("urn:poi-api:problem:bad_request");
      expect(problem.errors).toEqual([expect.objectContaining({ parameter: HEADER })]);
    },
  );

  it("a bookmark this service sealed, altered in any one character, is a 400", async () => {
    const sealed = bookmarkOf(await who.get("/v3.0/pinpoints"));
    for (const at of [0, 20, 40, 60, 79]) {
      const altered = `${sealed.slice(0, at)}${sealed[at] === "A" ? "B" : "A"}${sealed.slice(at + 1)}`;
      const response = await who.get("/v3.0/pinpoints", { [HEADER]: altered });
      expect(response.status, `character ${at}`).toBe(400);
      await response.body?.cancel();
    }
  });

  it("writes nothing", async () => {
    const writer = await caller();
    await createPinpoint(writer);
    const response = await writer.send(
      "POST",
      "/v3.0/pinpoints",
      { name: "Never", latitude: 0, longitude: 0 },
      { [HEADER]: "garbage" },
    );
    expect(response.status).toBe(400);
    const { count } = (await (
      await contentDb(writer.accountId)
    )
      .prepare("SELECT count(*) AS count FROM pinpoints WHERE account_id = ?")
      .bind(writer.accountId)
      .first<{ count: number }>())!;
    expect(count).toBe(1);
  });
});

describe("a bad bookmark is checked after routing, method and credentials", () => {
  const garbage = { [HEADER]: "garbage" };

  it("a method the path does not take is still a 405", async () => {
    for (const method of ["PATCH", "PROPFIND"]) {
      const response = await call("/v3.0/pinpoints", {
        method,
        headers: { Authorization: `Bearer ${who.token}`, ...garbage },
      });
      expect(response.status, method).toBe(405);
      await response.body?.cancel();
    }
  });

  it("a request without credentials is still a 401", async () => {
    const response = await call("/v3.0/pinpoints", { headers: garbage });
    expect(response.status).toBe(401);
    await response.body?.cancel();
  });

  it("the token endpoint, which does not take the header, ignores it and answers as OAuth clients expect", async () => {
    const client = await createClient();
    const issued = await call("/v3.0/oauth2/token", {
      method: "POST",
      headers: {
        Authorization: basic(client.clientId, client.clientSecret),
        "Content-Type": "application/x-www-form-urlencoded",
        ...garbage,
      },
      body: "grant_type=client_credentials",
    });
    expect(issued.status).toBe(200);
    await issued.body?.cancel();
    const refused = await call("/v3.0/oauth2/token", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", ...garbage },
      body: "grant_type=client_credentials",
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await refused.json()).toMatchObject({ error: "invalid_client" });
  });

  it("/media, which does not take the header, ignores it", async () => {
    const response = await call("/media/builtin/default-pin.png", { headers: garbage });
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });
});
