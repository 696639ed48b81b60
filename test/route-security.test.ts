/**
 * The route security matrix: every route the app registers, except the few
 * public ones, needs a valid token with the method's scope. The list is read
 * from `app.routes`, so a route added later is covered without touching this
 * file, and a route that forgets the token middleware fails here.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { mintPersonToken } from "../src/auth/person-token";
import { isAccountOperation, OWN_STANDING, PEOPLE_ONLY } from "../src/auth/roles";
import { signingKeys } from "../src/core/signing";
import { marksOf, type OperationSpec } from "../src/http/route-metadata";
import { call, caller, personCaller, type Caller, type PersonCaller } from "./helpers";

/**
 * Routes anyone may call: the API reference, public media URLs and the token endpoint; the map page,
 * which takes a publishable key instead of a token (test/maps.test.ts).
 */
const PUBLIC = [/^\/docs(\/|$)/, /^\/v3\.0\/openapi\.json$/, /^\/media\//, /^\/v3\.0\/oauth2\/token$/, /^\/maps\//];

/**
 * Routes that take another credential than a token: the operator secret (test/operator.test.ts); a
 * signed-in browser's session cookie, or an email and password (test/sessions.test.ts); the session
 * cookie or nothing, to accept an invitation (test/invitations.test.ts).
 */
const OWN_CREDENTIAL = [/^\/operator\//, /^\/v3\.0\/(auth|me)(\/|$)/, /^\/v3\.0\/invitations\/accept$/];

/** An id no test creates: the route's own lookup answers 404, after authorization. */
const MISSING_ID = "987654321";

type Route = { method: string; pattern: string; path: string; operation: OperationSpec | undefined };

/** One entry per method and path (validators register the same route again); "ALL" entries are middleware. */
const routes: Route[] = [
  ...new Map(
    app.routes
      .filter(
        ({ method, path }) => method !== "ALL" && ![...PUBLIC, ...OWN_CREDENTIAL].some((pattern) => pattern.test(path)),
      )
      .map(({ method, path, handler }): [string, Route] => [
        `${method} ${path}`,
        {
          method,
          pattern: path,
          // The last entry of a route is its own handler, which carries its operation.
          operation: marksOf(handler).operation,
          path: path
            .replaceAll(/:(id|person_id|client_id)\{[^}]*\}/g, MISSING_ID)
            // OGC API: a collection every account has, and a feature id no test creates.
            .replace(":collectionId", "events")
            .replace(":featureId", MISSING_ID)
            // Vector tiles: the one tile of zoom 0.
            .replace(/:z\/:x\/:y\{[^}]*\\\.(\w+)\}/, "0/0/0.$1"),
        },
      ]),
  ).values(),
];

/** A small valid JSON body, so the body rules (413, 415, malformed JSON) never answer first. */
const bodyFor = ({ method, path }: Route) =>
  method === "GET"
    ? undefined
    : JSON.stringify(
        path.endsWith("/pinpoints/order")
          ? { move: 1, before: null }
          : path.endsWith("/pinpoints") && path !== "/v3.0/pinpoints"
            ? [{ id: 1 }]
            : {},
      );

function request(route: Route, token?: string): Promise<Response> {
  const body = bodyFor(route);
  return call(route.path, {
    method: route.method,
    headers: {
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body,
  });
}

let readOnly: Caller;
let writeOnly: Caller;
let both: Caller;
let owner: PersonCaller;
/** Tokens of `owner` with one scope each, for the routes only a person calls. */
let ownerWith: Record<"read" | "write", string>;
beforeAll(async () => {
  [readOnly, writeOnly, both] = await Promise.all([caller("read"), caller("write"), caller("read write")]);
  owner = await personCaller("owner");
  const key = (await signingKeys(env)).current;
  const mint = async (scope: string) => (await mintPersonToken(key, { ...owner, scope })).token;
  ownerWith = { read: await mint("read"), write: await mint("write") };
});

/** Routes only a person calls (an account's people and clients, and leaving an account: src/auth/roles.ts). */
function peopleOnly({ operation }: Route): boolean {
  const id = operation?.operationId ?? "";
  return OWN_STANDING.has(id) || (isAccountOperation(id) && PEOPLE_ONLY.has(id));
}

/** The scope the route needs: its operation's, where it names one, else the method's. */
const scopeOf = (route: Route) => route.operation?.scope ?? (route.method === "GET" ? "read" : "write");

it("covers every protected route of the app", () => {
  const names = routes.map(({ method, pattern }) => `${method} ${pattern}`);
  expect(names.length).toBeGreaterThan(0);
  expect(names).toEqual(
    expect.arrayContaining([
      "GET /v3.0/pinpoints",
      "POST /v3.0/lists/:id{[0-9]+}/pinpoints",
      "DELETE /v3.0/lists/:id{[0-9]+}/pinpoints",
      "GET /v3.0/events",
      "POST /v3.0/events",
      "PUT /v3.0/events/:id{[0-9]+}",
      "DELETE /v3.0/categories/:id{[0-9]+}",
    ]),
  );
  // Every path parameter was replaced: a new kind would otherwise be requested literally.
  for (const { path } of routes) expect(path).not.toMatch(/[:{}*]/);
});

describe.each(routes)("$method $pattern", (route) => {
  it("answers 401 with a bare Bearer challenge without a token", async () => {
    const response = await request(route);
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="api"');
    await response.body?.cancel();
  });

  it("answers 401 invalid_token for a garbage token", async () => {
    const response = await request(route, "not-a-token");
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="api", error="invalid_token"/);
    await response.body?.cancel();
  });

  it("answers 403 insufficient_scope for a token without the method's scope", async () => {
    const needed = scopeOf(route);
    const other = needed === "read" ? "write" : "read";
    // A client's token on a route only a person calls is refused as such, whatever its scopes.
    const token = peopleOnly(route) ? ownerWith[other] : { read: readOnly, write: writeOnly }[other].token;
    const response = await request(route, token);
    expect(response.status).toBe(403);
    expect(response.headers.get("WWW-Authenticate")).toBe(
      `Bearer realm="api", error="insufficient_scope", scope="${needed}"`,
    );
    await response.body?.cancel();
  });

  it("lets a token with the scope through to the route itself", async () => {
    const response = await request(route, peopleOnly(route) ? owner.token : both.token);
    const text = await response.text();
    expect(response.headers.get("WWW-Authenticate"), text).toBeNull();
    // An unknown id is the route's own 404 (or, for a person's, a 400 when the empty body is checked first);
    // a collection answers 200 (read) or 400 (an empty body to create); the only owner of an account stays (409).
    const expected =
      route.operation?.operationId === "leaveAccount"
        ? [409]
        : /:(id|featureId|person_id|client_id)\b/.test(route.pattern)
          ? peopleOnly(route)
            ? [400, 404]
            : [404]
          : route.method === "GET"
            ? [200]
            : [400];
    expect(expected, `${response.status} ${text}`).toContain(response.status);
  });
});
