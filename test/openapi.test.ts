/**
 * The OpenAPI document (src/openapi): public, complete (every route the app
 * serves, read off app.routes), consistent (every $ref resolves, scopes match
 * the methods) and truthful: real responses match the schemas it documents.
 * Validity against the OpenAPI 3.1 schema is checked in Node by
 * scripts/test-docs.ts, since the validator reads its schemas from files.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type * as z from "zod";
import { app } from "../src/app";
import { BOOKMARK_PATTERN, ISSUED_BOOKMARK_PATTERN } from "../src/http/bookmark-header";
import { marksOf, type ResponseSpec } from "../src/http/route-metadata";
import { problemJson } from "../src/openapi/schemas";
import { BASE, basic, call, caller, createClient, createList } from "./helpers";
import { mediaFile } from "./media-fixtures";

type Operation = {
  operationId: string;
  summary: string;
  tags: string[];
  parameters?: { name: string; in: string }[];
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
};
type Document = {
  openapi: string;
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: { oauth2: { flows: { clientCredentials: { tokenUrl: string } } } } };
};

async function fetchDocument(): Promise<Document> {
  const response = await call("/v3.0/openapi.json");
  expect(response.status).toBe(200);
  return response.json<Document>();
}

/** `:id{[0-9]+}` → `{id}`; a pattern ending in a literal extension keeps it (`:y{.+\\.mvt}` → `{y}.mvt`). */
const openApiPath = (honoPath: string) =>
  honoPath.replace(/:(\w+)(?:\{([^/]*)\})?/g, (_, name: string, pattern?: string) => {
    const extension = /\\\.(\w+)$/.exec(pattern ?? "");
    return `{${name}}${extension ? `.${extension[1]}` : ""}`;
  });

/** "METHOD /path" of every route the app answers, but middleware and the reference page itself. */
function servedRoutes(): string[] {
  const routes = app.routes.filter((r) => r.method !== "ALL" && !marksOf(r.handler).hidden);
  // Hono answers HEAD with the GET route; an operation that says so is documented for both.
  const methods = (r: (typeof routes)[number]) =>
    r.method === "GET" && marksOf(r.handler).operation?.head ? ["GET", "HEAD"] : [r.method];
  return [...new Set(routes.flatMap((r) => methods(r).map((m) => `${m} ${openApiPath(r.path)}`)))].sort();
}

function operations(document: Document): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]): [string, string, Operation] => [method, path, operation]),
  );
}

describe("GET /v3.0/openapi.json", () => {
  it("is served without a token, for the origin it is asked on", async () => {
    const response = await call("/v3.0/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    const document = await response.json<Document>();
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers).toEqual([{ url: BASE }]);
    expect(document.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
      `${BASE}/v3.0/oauth2/token`,
    );
    const other = await exportsFetch("https://elsewhere.example/v3.0/openapi.json");
    expect(other.servers).toEqual([{ url: "https://elsewhere.example" }]);
  });

  it("answers in the media type the OGC landing page's service-desc link names, and JSON to everyone else", async () => {
    const a = await caller();
    const landing = await (await a.get("/ogc")).json<{ links: { rel: string; type: string; href: string }[] }>();
    const desc = landing.links.find((l) => l.rel === "service-desc")!;
    expect(desc.type).toBe("application/vnd.oai.openapi+json;version=3.1");
    const asked = await a.get(new URL(desc.href).pathname, { Accept: desc.type });
    expect(asked.headers.get("Content-Type")).toBe(desc.type);
    expect(asked.headers.get("Vary")).toMatch(/\bAccept\b/);
    expect((await asked.json<Document>()).openapi).toBe("3.1.0");
    for (const accept of [
      "application/json",
      "*/*",
      "application/vnd.oai.openapi+json;q=0, application/json",
      // Another version of the type is not what is served (GDAL 3.6 asks for 3.0 and refuses 3.1).
      "application/vnd.oai.openapi+json;version=3.0, application/json",
      "",
    ]) {
      const plain = await call("/v3.0/openapi.json", { headers: accept ? { Accept: accept } : {} });
      expect(plain.headers.get("Content-Type"), accept).toMatch(/^application\/json/);
      await plain.body?.cancel();
    }
    const both = await call("/v3.0/openapi.json", {
      headers: { Accept: "application/json;q=0.5, application/vnd.oai.openapi+json" },
    });
    expect(both.headers.get("Content-Type")).toBe(desc.type);
    await both.body?.cancel();
  });

  it("is cacheable only by the client when built from the request's Host", async () => {
    const response = await call("/v3.0/openapi.json", { headers: { Host: "attacker.example" } });
    expect(response.headers.get("Cache-Control")).toBe("private, max-age=300");
    await response.body?.cancel();
  });

  it("names the configured PUBLIC_ORIGIN, whatever the Host, and is then publicly cacheable", async () => {
    const ctx = createExecutionContext();
    const response = await app.fetch(
      new Request("https://attacker.example/v3.0/openapi.json"),
      { ...env, PUBLIC_ORIGIN: "https://api.example.com/" } as unknown as Cloudflare.Env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    const document = await response.json<Document>();
    expect(document.servers).toEqual([{ url: "https://api.example.com" }]);
    expect(document.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(
      "https://api.example.com/v3.0/oauth2/token",
    );
    expect(JSON.stringify(document)).not.toContain("attacker.example");
  });

  it("documents every route the app serves, and only those", async () => {
    const document = await fetchDocument();
    const documented = operations(document).map(([method, path]) => `${method.toUpperCase()} ${path}`);
    expect(documented.sort()).toEqual(servedRoutes());
    expect(servedRoutes()).toContain("GET /v3.0/pinpoints/{id}");
    expect(servedRoutes()).not.toContain("GET /docs");
  });

  it("describes each operation: summary, unique id, success response, path parameters", async () => {
    const ids = new Set<string>();
    for (const [method, path, operation] of operations(await fetchDocument())) {
      const where = `${method} ${path}`;
      expect(operation.summary, where).not.toBe(`${method.toUpperCase()} ${path}`);
      expect(ids.has(operation.operationId), where).toBe(false);
      ids.add(operation.operationId);
      expect(
        Object.keys(operation.responses).some((status) => /^2/.test(status)),
        where,
      ).toBe(true);
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      const declared = (operation.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      expect(declared, where).toEqual(pathParams);
    }
  });

  it("documents the id query parameters as the integers they stand for, as the path ids are", async () => {
    const document = await fetchDocument();
    const schemaOf = (path: string, name: string) =>
      (document.paths[path]!.get!.parameters as { name: string; schema?: unknown }[]).find((p) => p.name === name)
        ?.schema;
    const id = { type: "integer", minimum: 1, maximum: 999_999_999_999_999 };
    expect(schemaOf("/v3.0/pinpoints", "list")).toEqual(id);
    expect(schemaOf("/v3.0/tiles.json", "list")).toEqual(id);
    expect(schemaOf("/v3.0/events", "pinpoint")).toEqual(id);
  });

  it("asks for the read scope on GET and write otherwise, nothing on public routes, and names where keys work", async () => {
    // The reads a publishable key may make: everything else needs an access token.
    const PUBLISHABLE = ["/v3.0/lists", "/v3.0/pinpoints", "/v3.0/events", "/v3.0/categories", "/v3.0/tiles", "/ogc"];
    const publicRoutes = [
      "post /v3.0/oauth2/token",
      "get /v3.0/openapi.json",
      "get /media/{key}",
      "head /media/{key}",
      "post /v3.0/auth/sign-in",
      "post /v3.0/auth/password-reset/{token}",
      "post /v3.0/auth/passkeys/sign-in/options",
      "post /v3.0/auth/passkeys/sign-in",
    ];
    // Writes that change only the caller's own standing, which a person whose tokens only read may make.
    const readingWrites = ["delete /v3.0/members/me", "delete /v3.0/lists/{id}/collaborators/me"];
    for (const [method, path, operation] of operations(await fetchDocument())) {
      if (publicRoutes.includes(`${method} ${path}`)) {
        expect(operation.security, path).toBeUndefined();
        continue;
      }
      // A signed-in browser's operations take its session cookie instead (test/sessions.test.ts); accepting
      // an invitation takes it when the person is signed in, and nothing when they are not.
      if (/^\/v3\.0\/(auth|me)(\/|$)/.test(path)) {
        expect(operation.security, `${method} ${path}`).toEqual([{ session: [] }]);
        continue;
      }
      if (path === "/v3.0/invitations/accept") {
        expect(operation.security, `${method} ${path}`).toEqual([{ session: [] }, {}]);
        continue;
      }
      // A list's collaborators are its admins' business, not a public map's.
      const publishable =
        method === "get" && PUBLISHABLE.some((prefix) => path.startsWith(prefix)) && !path.endsWith("/collaborators");
      const reads = method === "get" || method === "head" || readingWrites.includes(`${method} ${path}`);
      expect(operation.security, `${method} ${path}`).toEqual([
        { oauth2: [reads ? "read" : "write"] },
        { bearer: [] },
        ...(publishable ? [{ publishableKey: [] }] : []),
      ]);
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["401", "403"]));
    }
  });

  it("states each route's body limit in its 413", async () => {
    const document = await fetchDocument();
    const tooLarge = (method: string, path: string) =>
      (document.paths[path]![method]!.responses["413"] as { description: string }).description;
    expect(tooLarge("post", "/v3.0/lists/{id}/pinpoints")).toContain("64 KiB (65,536 bytes)");
    expect(tooLarge("delete", "/v3.0/lists/{id}/pinpoints")).toContain("64 KiB (65,536 bytes)");
    expect(tooLarge("post", "/v3.0/lists")).toContain("604 KiB (618,496 bytes)");
    for (const path of ["/v3.0/pinpoints", "/v3.0/categories", "/v3.0/events"]) {
      expect(tooLarge("post", path)).toContain("`MAX_BODY_BYTES`, 15 MiB (15,728,640 bytes) by default");
      expect(tooLarge("put", `${path}/{id}`)).toContain("`MAX_BODY_BYTES`");
    }
  });

  it("names only real media types for bodies, and documents the membership batch under application/json", async () => {
    const document = await fetchDocument();
    // RFC 6838 §4.2: type "/" subtype, each a restricted name; `*/*` where any type may come.
    const name = "[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}";
    const mediaType = new RegExp(`^(?:${name}/${name}|\\*/\\*)$`);
    type Content = { content?: Record<string, { schema?: Record<string, unknown> }> };
    for (const [method, path, operation] of operations(document)) {
      const bodies = [
        (operation as { requestBody?: Content }).requestBody,
        ...Object.values(operation.responses as Record<string, Content>),
      ];
      for (const body of bodies)
        for (const type of Object.keys(body?.content ?? {})) expect(type, `${method} ${path}`).toMatch(mediaType);
    }
    for (const method of ["post", "delete"]) {
      const body = (document.paths["/v3.0/lists/{id}/pinpoints"]![method] as { requestBody?: Content }).requestBody;
      expect(Object.keys(body!.content!)).toEqual(["application/json"]);
      expect(body!.content!["application/json"]!.schema).toMatchObject({ type: "array", maxItems: 1000 });
    }
  });

  it("resolves every $ref", async () => {
    const document = await fetchDocument();
    const refs: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value && typeof value === "object") {
        for (const [key, v] of Object.entries(value)) {
          if (key === "$ref" && typeof v === "string") refs.push(v);
          else walk(v);
        }
      }
    };
    walk(document);
    expect(refs.length).toBeGreaterThan(20);
    for (const ref of new Set(refs)) {
      expect(ref).toMatch(/^#\//);
      const target = ref
        .slice(2)
        .split("/")
        .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
      expect(target, ref).toBeDefined();
    }
  });
});

describe("the headers of conditional requests, retries and D1 sessions", () => {
  type Ref = { $ref?: string; name?: string };
  const resolve = <T>(document: Document, value: Ref): T =>
    (value.$ref
      ? value.$ref
          .slice(2)
          .split("/")
          .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document)
      : value) as T;
  const taking = (document: Document, header: string) =>
    operations(document)
      .filter(([, , operation]) =>
        (operation.parameters ?? []).some((p) => resolve<{ name: string }>(document, p).name === header),
      )
      .map(([method, path]) => `${method.toUpperCase()} ${path}`)
      .sort();

  it("names each header on exactly the operations that take it", async () => {
    const document = await fetchDocument();
    const singles = operations(document).filter(([, path]) =>
      /^\/v3\.0\/(categories|events|lists|pinpoints)\/\{id\}$/.test(path),
    );
    const single = (methods: string[]) =>
      singles
        .filter(([method]) => methods.includes(method))
        .map(([method, path]) => `${method.toUpperCase()} ${path}`)
        .sort();
    expect(single(["get", "head"])).toHaveLength(4);
    // Public media answer conditional reads both ways (RFC 9110 §13.1.1 and §13.1.2).
    const media = ["GET /media/{key}", "HEAD /media/{key}"];
    // Vector tiles carry an ETag of their bytes (src/tiles/routes.ts).
    const tiles = ["GET /v3.0/tiles/{z}/{x}/{y}.geojson", "GET /v3.0/tiles/{z}/{x}/{y}.mvt"];
    expect(taking(document, "If-None-Match")).toEqual([...media, ...tiles, ...single(["get", "head"])].sort());
    // A list's order is written conditionally on the list's ETag (src/lists/order.ts).
    const order = ["PUT /v3.0/lists/{id}/pinpoints/order"];
    expect(taking(document, "If-Match")).toEqual([...media, ...order, ...single(["put", "delete"])].sort());
    // The operations with an access token; a signed-in browser's (the session cookie) take none of these.
    const withToken = (operation: Operation) =>
      ((operation.security ?? []) as Record<string, unknown>[]).some((scheme) => "bearer" in scheme);
    const posts = operations(document)
      .filter(([method, path, operation]) => method === "post" && path !== "/v3.0/oauth2/token" && withToken(operation))
      .map(([method, path]) => `${method.toUpperCase()} ${path}`)
      .sort();
    expect(posts.length).toBeGreaterThanOrEqual(5);
    expect(taking(document, "Idempotency-Key")).toEqual(posts);
    // The bookmark is checked after the credentials (http/middleware/d1-session.ts): the authenticated operations
    // take it, each with the 400 a malformed one gets; the public ones ignore one.
    const sessions = operations(document).filter(([, , operation]) => withToken(operation));
    const named = sessions.map(([method, path]) => `${method.toUpperCase()} ${path}`).sort();
    expect(taking(document, "X-D1-Bookmark")).toEqual(named);
    for (const [method, path, operation] of sessions)
      expect(operation.responses, `${method} ${path}`).toHaveProperty("400");
  });

  it("states the bookmark's shapes: every bookmark an answer gives fits what answers carry and what requests take", async () => {
    const document = await fetchDocument();
    const sent = resolve<{ schema: { pattern: string } }>(document, { $ref: "#/components/parameters/Bookmark" });
    const given = resolve<{ schema: { pattern: string } }>(document, { $ref: "#/components/headers/Bookmark" });
    // Both read where the session parses the header (src/http/bookmark-header.ts): requests may also send
    // D1's own form, which answers carried before bookmarks were sealed.
    expect(sent.schema.pattern).toBe(BOOKMARK_PATTERN);
    expect(given.schema.pattern).toBe(ISSUED_BOOKMARK_PATTERN);
    const pattern = new RegExp(sent.schema.pattern);
    const issued = new RegExp(given.schema.pattern);
    expect(pattern.test("garbage")).toBe(false);
    const who = await caller();
    const answers = [
      await who.send("POST", "/v3.0/pinpoints", { name: "Bookmarked", latitude: 1, longitude: 2 }),
      await who.get("/v3.0/pinpoints"),
      await who.get("/v3.0/lists"),
    ];
    for (const answer of answers) {
      await answer.body?.cancel();
      const bookmark = answer.headers.get("X-D1-Bookmark");
      expect(bookmark).not.toBeNull();
      expect(bookmark).toMatch(issued);
      expect(bookmark).toMatch(pattern);
      // Sent back as given, it is taken; changed so that it no longer fits, it is a 400.
      const again = await who.get("/v3.0/pinpoints", { "X-D1-Bookmark": bookmark! });
      expect(again.status).toBe(200);
      await again.body?.cancel();
      for (const unfit of [`${bookmark}x`, `x${bookmark}`, "", " "].filter((b) => !pattern.test(b.trim()))) {
        const refused = await who.get("/v3.0/pinpoints", { "X-D1-Bookmark": unfit });
        expect(refused.status, JSON.stringify(unfit)).toBe(400);
        await refused.body?.cancel();
      }
    }
  });

  it("gives no header an example, which Swagger UI would send with every request from /docs", async () => {
    const document = await fetchDocument();
    for (const [method, path, operation] of operations(document)) {
      for (const given of operation.parameters ?? []) {
        const parameter = resolve<Record<string, unknown> & { schema?: Record<string, unknown> }>(document, given);
        if (parameter.in !== "header") continue;
        const where = `${method} ${path} ${parameter.name}`;
        expect(parameter.example ?? parameter.examples ?? parameter.schema?.example, where).toBeUndefined();
        expect(parameter.schema?.examples ?? parameter.schema?.default, where).toBeUndefined();
      }
    }
  });

  it("documents every one of them that a real answer carries", async () => {
    const document = await fetchDocument();
    const who = await caller();
    const headersOf = (method: string, path: string, status: number) => {
      const response = resolve<{ headers?: Record<string, unknown> }>(
        document,
        document.paths[path]![method]!.responses[String(status)] as Ref,
      );
      return Object.keys(response.headers ?? {});
    };
    const sync = ["ETag", "Idempotent-Replayed", "X-D1-Bookmark"];
    const check = (method: string, path: string, response: Response) => {
      const sent = sync.filter((h) => response.headers.has(h));
      expect(sent.length, `${method} ${path} ${response.status}`).toBeGreaterThan(0);
      expect(headersOf(method, path, response.status)).toEqual(expect.arrayContaining(sent));
    };
    const key = { "Idempotency-Key": crypto.randomUUID() };
    const body = { name: "Documented", latitude: 1, longitude: 2 };
    const created = await who.send("POST", "/v3.0/pinpoints", body, key);
    check("post", "/v3.0/pinpoints", created);
    const replay = await who.send("POST", "/v3.0/pinpoints", body, key);
    expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
    check("post", "/v3.0/pinpoints", replay);
    const { id } = await created.json<{ id: number }>();
    const read = await who.get(`/v3.0/pinpoints/${id}`);
    check("get", "/v3.0/pinpoints/{id}", read);
    const unchanged = await who.get(`/v3.0/pinpoints/${id}`, { "If-None-Match": read.headers.get("ETag")! });
    expect(unchanged.status).toBe(304);
    check("get", "/v3.0/pinpoints/{id}", unchanged);
    const stale = await who.send("PUT", `/v3.0/pinpoints/${id}`, { name: "x" }, { "If-Match": '"999"' });
    expect(stale.status).toBe(412);
    check("put", "/v3.0/pinpoints/{id}", stale);
    check("get", "/v3.0/pinpoints", await who.get("/v3.0/pinpoints"));
  });
});

async function exportsFetch(url: string): Promise<Document> {
  const response = await exports.default.fetch(new Request(url));
  expect(response.status).toBe(200);
  return response.json<Document>();
}

/** The schema documented for a response of `method url`, or problem details for an error. */
function documentedSchema(method: string, url: string, status: number): z.ZodType | undefined {
  if (status >= 400 && !url.startsWith("/v3.0/oauth2/")) return problemJson;
  const path = new URL(url, BASE).pathname.replace(/(.)\/$/, "$1");
  const route = app.routes.findLast((r) => {
    if (r.method !== method || !marksOf(r.handler).operation) return false;
    const pattern = r.path.replace(/:\w+(?:\{([^/]*)\})?/g, (_, re: string | undefined) => `(?:${re ?? "[^/]+"})`);
    return new RegExp(`^${pattern}$`).test(path);
  });
  const given = route && marksOf(route.handler).operation!.responses[status];
  expect(given, `${method} ${url} documents ${status}`).toBeDefined();
  if (!given || "parse" in given) return given as z.ZodType | undefined;
  const spec = given as ResponseSpec;
  // These requests ask for JSON; test/openapi-conformance.test.ts checks the GeoJSON variants.
  return spec.schema ?? spec.content?.["application/json"];
}

/** Sends a request and checks its answer against the document: status listed, body as described. */
async function checked(method: string, url: string, init: RequestInit, expected: number): Promise<unknown> {
  const response = await call(url, { ...init, method });
  expect(response.status, `${method} ${url}`).toBe(expected);
  const schema = documentedSchema(method, url, expected);
  if (!schema) {
    await response.arrayBuffer();
    return undefined;
  }
  const body: unknown = await response.json();
  // Parsing drops keys a schema does not name, so equality also catches undocumented fields.
  expect(schema.parse(body), `${method} ${url}`).toEqual(body);
  return body;
}

describe("responses match the documented schemas", () => {
  it("for every resource, the token endpoint and errors", async () => {
    const who = await caller();
    const auth = { Authorization: `Bearer ${who.token}` };
    const json = (body: unknown) => ({
      headers: { ...auth, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });

    const client = await createClient();
    const form = (fields: Record<string, string>) => ({
      headers: {
        Authorization: basic(client.clientId, client.clientSecret),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams(fields),
    });
    await checked("POST", "/v3.0/oauth2/token", form({ grant_type: "client_credentials" }), 200);
    await checked("POST", "/v3.0/oauth2/token", form({ grant_type: "password" }), 400);
    await checked("POST", "/v3.0/oauth2/token", { ...form({ grant_type: "client_credentials" }), headers: {} }, 401);

    const pinpoint = (await checked(
      "POST",
      "/v3.0/pinpoints",
      json({ name: "Museum", latitude: 48.86, longitude: 2.34, tags: ["art"], media_file: mediaFile() }),
      201,
    )) as { id: number; media_url: string };
    await checked("GET", "/v3.0/pinpoints", { headers: auth }, 200);
    await checked("GET", `/v3.0/pinpoints/${pinpoint.id}`, { headers: auth }, 200);
    await checked("PUT", `/v3.0/pinpoints/${pinpoint.id}`, json({ address: "1 Rue de Rivoli" }), 200);
    await checked("GET", new URL(pinpoint.media_url).pathname, {}, 200);

    const list = await createList(who);
    await checked("GET", "/v3.0/lists", { headers: auth }, 200);
    await checked("GET", `/v3.0/lists/${list.id}`, { headers: auth }, 200);
    await checked("PUT", `/v3.0/lists/${list.id}`, json({ description: "<p>Best of</p>" }), 200);
    await checked("POST", `/v3.0/lists/${list.id}/pinpoints`, json([{ id: pinpoint.id }, { id: 999_999 }]), 200);
    await checked("GET", `/v3.0/pinpoints?list=${list.id}`, { headers: auth }, 200);
    await checked("DELETE", `/v3.0/lists/${list.id}/pinpoints`, json([{ id: pinpoint.id }, { id: "x" }]), 200);

    const category = (await checked(
      "POST",
      "/v3.0/categories",
      json({ name: "Museums", image_file: mediaFile() }),
      201,
    )) as { id: number };
    await checked("GET", "/v3.0/categories", { headers: auth }, 200);
    await checked("GET", "/v3.0/categories/1", { headers: auth }, 200);
    await checked("PUT", `/v3.0/categories/${category.id}`, json({ name: "Art museums" }), 200);

    const dates = [{ start: "2026-11-21T20:30+02:00", end: "2026-11-21T22:00+02:00" }];
    const event = (await checked(
      "POST",
      "/v3.0/events",
      json({ name: "Late opening", pinpoint: pinpoint.id, dates }),
      201,
    )) as { id: number };
    await checked("GET", `/v3.0/events?pinpoint=${pinpoint.id}`, { headers: auth }, 200);
    await checked("GET", `/v3.0/events/${event.id}`, { headers: auth }, 200);
    await checked("PUT", `/v3.0/events/${event.id}`, json({ tags: ["night"] }), 200);

    await checked("GET", "/v3.0/pinpoints/999999", { headers: auth }, 404);
    await checked("POST", "/v3.0/pinpoints", json({ name: "Nowhere", latitude: 100, longitude: 0 }), 400);
    await checked("GET", "/v3.0/pinpoints", {}, 401);
    await checked("DELETE", `/v3.0/categories/1`, { headers: auth }, 403);

    await checked("DELETE", `/v3.0/events/${event.id}`, { headers: auth }, 204);
    await checked("DELETE", `/v3.0/pinpoints/${pinpoint.id}`, { headers: auth }, 204);
    await checked("DELETE", `/v3.0/categories/${category.id}`, { headers: auth }, 204);
    await checked("DELETE", `/v3.0/lists/${list.id}`, { headers: auth }, 204);
  });
});
