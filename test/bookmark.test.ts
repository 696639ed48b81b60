/**
 * D1 sessions (http/middleware/d1-session.ts): every response that touched the database
 * carries the session's bookmark, a bookmark sent back anchors the next
 * request's session, and anything that is not a bookmark is a 400.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, type Caller, caller, contentDb, createClient, createPinpoint, requestToken } from "./helpers";

const HEADER = "X-D1-Bookmark";
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

function bookmarkOf(response: Response): string {
  const value = response.headers.get(HEADER);
  expect(value).toMatch(BOOKMARK);
  return value!;
}

let who: Caller;
beforeAll(async () => {
  who = await caller();
});

describe("the bookmark header", () => {
  it("is on reads, creates, updates, deletes and the token endpoint, and never goes backwards", async () => {
    const seen: string[] = [];
    seen.push(bookmarkOf(await who.get("/v3.0/pinpoints")));
    const created = await who.send("POST", "/v3.0/pinpoints", { name: "Booked", latitude: 1, longitude: 2 });
    expect(created.status).toBe(201);
    seen.push(bookmarkOf(created));
    const { id } = await created.json<{ id: number }>();
    const updated = await who.send(
      "PUT",
      `/v3.0/pinpoints/${id}`,
      { name: "Booked again" },
      { [HEADER]: seen.at(-1)! },
    );
    expect(updated.status).toBe(200);
    seen.push(bookmarkOf(updated));
    const deleted = await who.send("DELETE", `/v3.0/pinpoints/${id}`, undefined, { [HEADER]: seen.at(-1)! });
    expect(deleted.status).toBe(204);
    seen.push(bookmarkOf(deleted));
    const missing = await who.get(`/v3.0/pinpoints/${id}`, { [HEADER]: seen.at(-1)! });
    expect(missing.status).toBe(404);
    seen.push(bookmarkOf(missing));
    const token = await requestToken(await createClient());
    expect(token.status).toBe(200);
    seen.push(bookmarkOf(token));
    // Bookmarks compare lexically: each write moves it forward, and a session anchored at one never reports less.
    expect([...seen].sort()).toEqual(seen);
    expect(new Set(seen.slice(1, 4)).size).toBe(3);
    expect(seen.at(-1)! > seen.at(-2)!).toBe(true);
  });

  it("anchors the session: a bookmark later than the database's comes back unchanged", async () => {
    const later = "7fffffff-7fffffff-00000000-00000000000000000000000000000000";
    const response = await who.get("/v3.0/pinpoints", { [HEADER]: later });
    expect(response.status).toBe(200);
    expect(response.headers.get(HEADER)).toBe(later);
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
          expect(bookmarkOf(read) >= bookmarkOf(created)).toBe(true);
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
});

describe("a bad bookmark", () => {
  const bad = [
    "",
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
