/**
 * The requests the original service's known clients send (docs/api.md
 * "Clients of the original service"), sent as they send them: its WordPress
 * plugin (0.6.2: its jQuery script in the browser, its PHP classes
 * Connect_To_Serv and Publish_Post on the server) and a site's PHP
 * integration that puts its token in the query. Each gets a useful
 * answer where this service has the route; the parameters they add that this
 * service does not use are ignored, and nothing else is.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { BASE, call, caller, contentDb, expectProblem, json, type Caller } from "./helpers";

type List = { id: number; name: string };
type Page = { results: List[]; next: string | null; previous: string | null };

/** What jQuery's `$.ajax({ dataType: "json", headers: { Authorization } })` sends with a GET. */
const jquery = (token: string) => ({
  Authorization: `Bearer ${token}`,
  Accept: "application/json, text/javascript, */*; q=0.01",
});

/** Lists written straight to the account's database, in creation order: a picker's worth without 400 POSTs. */
async function insertLists(accountId: number, n: number): Promise<number[]> {
  const { results } = await (
    await contentDb(accountId)
  )
    .prepare(
      `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?2)
       INSERT INTO lists (account_id, name) SELECT ?1, 'Guide ' || i FROM seq RETURNING id`,
    )
    .bind(accountId, n)
    .all<{ id: number }>();
  return results.map((r) => r.id).sort((x, y) => x - y);
}

let plugin: Caller;
let other: Caller;
let mine: number[];

beforeAll(async () => {
  [plugin, other] = await Promise.all([caller(), caller()]);
  mine = await insertLists(plugin.accountId, 401);
  await insertLists(other.accountId, 3);
});

describe("the WordPress plugin's list picker: GET /v3.0/lists?user=…&limit=400", () => {
  it.each([
    ["its user id", "?user=1234&limit=400"],
    ["an empty user, before its cookie is set", "?user=&limit=400"],
    ["another account's id", () => `?user=${other.accountId}&limit=400`],
  ])("with %s: the first 400 of the caller's own lists in one page, then the rest", async (_, query) => {
    const url = `/v3.0/lists${typeof query === "string" ? query : query()}`;
    const response = await call(url, { headers: jquery(plugin.token) });
    expect(response.status).toBe(200);
    const page = await json<Page>(response);
    // The picker reads `results` and nothing else: as many lists as it asked for, all the caller's, in order.
    expect(page.results.map((l) => l.id)).toEqual(mine.slice(0, 400));
    const next = new URL(page.next!);
    expect(next.searchParams.get("limit")).toBe("400");
    // Ignored, so the links do not carry it on.
    expect(next.searchParams.has("user")).toBe(false);
    const rest = await json<Page>(await plugin.get(page.next!));
    expect(rest.results.map((l) => l.id)).toEqual(mine.slice(400));
    expect(rest.next).toBeNull();
  });

  it("a limit past the maximum is the maximum: every list of a picker in one page", async () => {
    const page = await json<Page>(await call("/v3.0/lists?user=&limit=5000", { headers: jquery(plugin.token) }));
    expect(page.results.map((l) => l.id)).toEqual(mine);
    expect(page.next).toBeNull();
  });

  it("keeps the 400 for every other parameter, `user` on other operations included", async () => {
    const misspelt = await plugin.get("/v3.0/lists?usr=1&limit=400");
    const body = await expectProblem(misspelt, 400);
    expect(body.errors).toEqual([
      { parameter: "usr", detail: "is not a parameter of this operation (did you mean `user`?)" },
    ]);
    await expectProblem(await plugin.get("/v3.0/pinpoints?user=1"), 400);
    await expectProblem(await plugin.get("/v3.0/lists?user=1&user=2"), 400);
  });

  it("documents `user` as accepted and ignored (deprecated) on GET /v3.0/lists alone", async () => {
    const document = await (await call("/v3.0/openapi.json")).json<{ paths: Record<string, any> }>();
    const taking = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, { parameters?: { name: string; deprecated?: boolean }[] }>)
        .filter(([, operation]) => operation.parameters?.some((p) => p.name === "user"))
        .map(([method]) => `${method} ${path}`),
    );
    expect(taking).toEqual(["get /v3.0/lists"]);
    const user = document.paths["/v3.0/lists"].get.parameters.find((p: { name: string }) => p.name === "user");
    expect(user).toMatchObject({ in: "query", required: false, deprecated: true });
  });
});

describe("the plugin's writes", () => {
  it("creates a pinpoint from the post editor, as its browser script posts one", async () => {
    // The plugin's script: no category picked (parseInt("") is NaN, which JSON writes as null), no tags ("".split(",")).
    const response = await call("/v3.0/pinpoints", {
      method: "POST",
      headers: { ...jquery(plugin.token), "Content-Type": "application/json;charset=UTF-8" },
      body: JSON.stringify({ latitude: 43.609477, longitude: 3.88376, category: NaN, name: "Hello", tags: [""] }),
    });
    expect(response.status).toBe(201);
    expect(await json(response)).toMatchObject({ name: "Hello", category: null, tags: [] });
  });

  it("publishes a post as its PHP side does: create, read back, update, add to the list picked", async () => {
    // Its Connect_To_Serv class sends every request, a GET too, with its JSON Content-Type.
    const send = (method: string, path: string, body?: unknown) =>
      call(path, {
        method,
        headers: { Authorization: `Bearer ${plugin.token}`, "Content-Type": "application/json;charset=UTF-8" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const post = {
      description: "<p>My post</p><br>",
      latitude: 43.6,
      longitude: 3.88,
      name: "My post",
      category: 1,
      tags: ["wordpress", "maps"],
    };
    const created = await send("POST", "/v3.0/pinpoints", post);
    expect(created.status).toBe(201);
    const { id } = await json<{ id: number }>(created);
    const read = await send("GET", `/v3.0/pinpoints/${id}`);
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id, name: "My post", category: 1, tags: ["wordpress", "maps"] });
    const updated = await send("PUT", `/v3.0/pinpoints/${id}`, { ...post, name: "My post, edited" });
    expect(updated.status).toBe(200);
    const added = await send("POST", `/v3.0/lists/${mine[0]}/pinpoints`, [{ id }]);
    expect(added.status).toBe(200);
    expect(await json(added)).toEqual({ total: 1, errors: [] });
  });

  it("answers its requests to what this service does not have with 404, and its password grant with 400", async () => {
    for (const path of ["/v3.0/pinpoints/categories", "/v3.0/livemaps?limit=50", "/v3.0/users", "/v3.0/users/token"]) {
      const response = await call(path, { headers: jquery(plugin.token) });
      expect(response.status, path).toBe(404);
      await response.body?.cancel();
    }
    const token = await call("/v3.0/oauth2/token/", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "password", client_id: plugin.clientId, username: "u", password: "p" }),
    });
    expect(token.status).toBe(400);
    expect(await json(token)).toMatchObject({ error: "unsupported_grant_type" });
  });
});

describe("a site's PHP integration, its token in the query", () => {
  it("creates, updates and adds to a list with ?access_token=, an unknown field in the body ignored", async () => {
    const q = `access_token=${encodeURIComponent(plugin.token)}`;
    const send = (method: string, path: string, body: unknown) =>
      call(`${path}?${q}`, {
        method,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const fields = {
      adresse: "Montpellier",
      category: 1,
      latitude: 43.6,
      longitude: 3.88,
      name: "Article",
      tags: ["WP"],
    };
    const created = await send("POST", "/v3.0/pinpoints", fields);
    expect(created.status).toBe(201);
    const { id } = await json<{ id: number }>(created);
    expect(new URL(created.headers.get("Location")!, BASE).pathname).toBe(`/v3.0/pinpoints/${id}`);
    expect((await send("PUT", `/v3.0/pinpoints/${id}`, fields)).status).toBe(200);
    const added = await send("POST", `/v3.0/lists/${mine[1]}/pinpoints`, [{ id }]);
    expect(await json(added)).toEqual({ total: 1, errors: [] });
  });
});
