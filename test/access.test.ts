/**
 * The cross-account matrix (CONTRACT "Access"): account B reading, changing,
 * deleting, paging, filtering by and adding to account A's pinpoints and
 * lists gets 403 (404 for ids that do not exist), A's objects stay exactly as
 * they were, and nothing B sees reveals A's data.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { allPages, caller, createList, createPinpoint, json, type Caller } from "./helpers";

type Problem = { type: string; title: string; status: number; detail: string; instance: string };

let a: Caller;
let b: Caller;
let aPinpoint: { id: number } & Record<string, unknown>;
let aList: { id: number } & Record<string, unknown>;
let bPinpoint: { id: number } & Record<string, unknown>;
let bList: { id: number } & Record<string, unknown>;
const SECRET = "a-secret-name-only-A-knows";
const MISSING = 987_654_321;

/** Everything A can see of its own data, to compare before and after B's attempts. */
async function snapshotOfA() {
  const read = async (path: string) => {
    const response = await a.get(path);
    expect(response.status, path).toBe(200);
    return json(response);
  };
  return {
    pinpoint: await read(`/v3.0/pinpoints/${aPinpoint.id}`),
    list: await read(`/v3.0/lists/${aList.id}`),
    members: await read(`/v3.0/pinpoints?list=${aList.id}`),
    pinpoints: await read("/v3.0/pinpoints"),
    lists: await read("/v3.0/lists"),
  };
}

beforeAll(async () => {
  a = await caller();
  b = await caller();
  aPinpoint = await createPinpoint(a, {
    name: SECRET,
    address: SECRET,
    description: `<p>${SECRET}</p>`,
    tags: [SECRET],
    category: 1,
  });
  aList = await createList(a, { name: SECRET, description: SECRET });
  expect((await a.send("POST", `/v3.0/lists/${aList.id}/pinpoints`, [{ id: aPinpoint.id }])).status).toBe(200);
  bPinpoint = await createPinpoint(b, { name: "B's own" });
  bList = await createList(b, { name: "B's list" });
});

/** Every operation on one object: B gets 403 on A's, 404 on an id that does not exist. */
const operations: [string, string, (id: () => number) => string, unknown][] = [
  ["GET", "pinpoint", (id) => `/v3.0/pinpoints/${id()}`, undefined],
  ["PUT", "pinpoint", (id) => `/v3.0/pinpoints/${id()}`, { name: "taken over", latitude: 1 }],
  ["PUT", "pinpoint", (id) => `/v3.0/pinpoints/${id()}`, {}],
  ["PUT", "pinpoint", (id) => `/v3.0/pinpoints/${id()}`, { category: 1, tags: null, description: null }],
  ["PUT", "pinpoint", (id) => `/v3.0/pinpoints/${id()}`, { category: MISSING }],
  ["DELETE", "pinpoint", (id) => `/v3.0/pinpoints/${id()}`, undefined],
  ["GET", "list", (id) => `/v3.0/lists/${id()}`, undefined],
  ["PUT", "list", (id) => `/v3.0/lists/${id()}`, { name: "taken over" }],
  ["PUT", "list", (id) => `/v3.0/lists/${id()}`, {}],
  ["DELETE", "list", (id) => `/v3.0/lists/${id()}`, undefined],
  ["GET", "list", (id) => `/v3.0/pinpoints?list=${id()}`, undefined],
  ["GET", "list", (id) => `/v3.0/pinpoints?list=${id()}&limit=1`, undefined],
  ["POST", "list", (id) => `/v3.0/lists/${id()}/pinpoints`, "B's pinpoint"],
  ["POST", "list", (id) => `/v3.0/lists/${id()}/pinpoints`, []],
  ["DELETE", "list", (id) => `/v3.0/lists/${id()}/pinpoints`, "A's pinpoint"],
  ["DELETE", "list", (id) => `/v3.0/lists/${id()}/pinpoints`, "A's pinpoint, minimal"],
];

function bodyFor(body: unknown): { body: unknown; headers: Record<string, string> } {
  if (body === "B's pinpoint") return { body: [{ id: bPinpoint.id }], headers: {} };
  if (body === "A's pinpoint") return { body: [{ id: aPinpoint.id }], headers: {} };
  if (body === "A's pinpoint, minimal") return { body: [{ id: aPinpoint.id }], headers: { Prefer: "return=minimal" } };
  return { body, headers: {} };
}

describe("account B on account A's objects", () => {
  it.each(operations)("%s %s (%#): 403, A's data unchanged and unrevealed", async (method, what, path, body) => {
    const before = await snapshotOfA();
    const id = () => (what === "pinpoint" ? aPinpoint.id : aList.id);
    const request = bodyFor(body);
    const response = await b.send(method, path(id), request.body, request.headers);
    const text = await response.text();
    expect(response.status, text).toBe(403);
    const problem = JSON.parse(text) as Problem;
    expect(problem).toMatchObject({ type: "urn:poi-api:problem:forbidden", status: 403 });
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("account_id");
    expect(problem.detail).toBe(`The ${what} belongs to another account.`);
    // A 403 on an object is not a token problem: no invalid_token challenge.
    expect(response.headers.get("WWW-Authenticate")).toBeNull();
    expect(await snapshotOfA()).toEqual(before);
  });

  it.each(operations)("%s %s (%#) on an id that does not exist: 404", async (method, what, path, body) => {
    const request = bodyFor(body);
    const response = await b.send(
      method,
      path(() => MISSING),
      request.body,
      request.headers,
    );
    const problem = await json<Problem>(response);
    expect(response.status).toBe(404);
    expect(problem.detail).toBe(`The ${what} does not exist.`);
  });

  it("A itself still can do all of it (the matrix is not vacuous)", async () => {
    const response = await a.get(`/v3.0/pinpoints/${aPinpoint.id}`);
    expect(response.status).toBe(200);
    expect((await json(response)).name).toBe(SECRET);
  });
});

describe("collections", () => {
  it("B's pages never include A's rows", async () => {
    for (const path of ["/v3.0/pinpoints", "/v3.0/lists", "/v3.0/pinpoints?limit=1", "/v3.0/lists?limit=1"]) {
      const pages = await allPages<{ id: number }>(b, path);
      const text = JSON.stringify(pages);
      expect(text).not.toContain(SECRET);
      const ids = pages.flatMap((p) => p.results.map((r) => r.id));
      expect(ids).toEqual(path.startsWith("/v3.0/pinpoints") ? [bPinpoint.id] : [bList.id]);
    }
  });

  it("B's list filter never includes A's pinpoints", async () => {
    const page = await json(await b.get(`/v3.0/pinpoints?list=${bList.id}`));
    expect(page).toEqual({ results: [], next: null, previous: null });
  });
});

describe("membership across accounts", () => {
  it("B adding A's pinpoint to B's list: item error forbidden, nothing added", async () => {
    const before = await snapshotOfA();
    const response = await b.send("POST", `/v3.0/lists/${bList.id}/pinpoints`, [
      { id: aPinpoint.id },
      { id: bPinpoint.id },
    ]);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ total: 2, errors: [{ index: 0, id: aPinpoint.id, error: "forbidden" }] });
    expect(text).not.toContain(SECRET);
    const members = await json<{ results: { id: number }[] }>(await b.get(`/v3.0/pinpoints?list=${bList.id}`));
    expect(members.results.map((p) => p.id)).toEqual([bPinpoint.id]);
    expect(await snapshotOfA()).toEqual(before);
    // Removing it again is just as forbidden.
    const removal = await json(
      await b.send("DELETE", `/v3.0/lists/${bList.id}/pinpoints`, [{ id: aPinpoint.id }, { id: bPinpoint.id }]),
    );
    expect(removal).toEqual({ total: 2, errors: [{ index: 0, id: aPinpoint.id, error: "forbidden" }] });
  });

  it("A adding B's pinpoint to A's list is forbidden the same way", async () => {
    const response = await a.send("POST", `/v3.0/lists/${aList.id}/pinpoints`, [{ id: bPinpoint.id }]);
    expect(await json(response)).toEqual({ total: 1, errors: [{ index: 0, id: bPinpoint.id, error: "forbidden" }] });
    const members = await json<{ results: { id: number }[] }>(await a.get(`/v3.0/pinpoints?list=${aList.id}`));
    expect(members.results.map((p) => p.id)).toEqual([aPinpoint.id]);
  });

  it("a failed cross-account attempt does not disturb a later legitimate change", async () => {
    const before = await snapshotOfA();
    expect((await b.send("DELETE", `/v3.0/pinpoints/${aPinpoint.id}`)).status).toBe(403);
    const renamed = await a.send("PUT", `/v3.0/lists/${aList.id}`, { description: `${SECRET} 2` });
    expect(renamed.status).toBe(200);
    expect((await json(renamed)).name).toBe(SECRET);
    expect((await a.send("PUT", `/v3.0/lists/${aList.id}`, { description: SECRET })).status).toBe(200);
    expect((await snapshotOfA()).members).toEqual(before.members);
  });
});
