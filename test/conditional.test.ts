/**
 * Versions and conditional requests (RFC 9110 §13) on every
 * versioned resource: strong ETags on GET, POST and PUT; If-None-Match → 304;
 * If-Match → 412 without any change; races with many parallel requests.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { caller, createList, createPinpoint, json, type Caller } from "./helpers";
import { bucketKeys, mediaFile } from "./media-fixtures";

let alice: Caller;
let bob: Caller;

beforeAll(async () => {
  alice = await caller();
  bob = await caller();
});

type Kind = { path: string; create: () => Promise<Response>; change: Record<string, unknown> };

const kinds: Record<string, Kind> = {
  pinpoint: {
    path: "/v3.0/pinpoints",
    create: () => alice.send("POST", "/v3.0/pinpoints", { name: "P", latitude: 1, longitude: 2 }),
    change: { name: "P2" },
  },
  list: { path: "/v3.0/lists", create: () => alice.send("POST", "/v3.0/lists", { name: "L" }), change: { name: "L2" } },
  category: {
    path: "/v3.0/categories",
    create: () => alice.send("POST", "/v3.0/categories", { name: "C", image_file: mediaFile() }),
    change: { name: "C2" },
  },
  event: {
    path: "/v3.0/events",
    create: async () => {
      const pinpoint = await createPinpoint(alice);
      return alice.send("POST", "/v3.0/events", {
        name: "E",
        pinpoint: pinpoint.id,
        dates: [{ start: "2026-01-01T10:00:00Z", end: "2026-01-01T12:00:00Z" }],
      });
    },
    change: { name: "E2" },
  },
};

const STRONG = /^"[^"]+"$/;

describe.each(Object.entries(kinds))("%s", (_name, kind) => {
  async function make(): Promise<{ url: string; etag: string; body: Record<string, unknown> }> {
    const response = await kind.create();
    expect(response.status).toBe(201);
    const etag = response.headers.get("ETag")!;
    expect(etag).toMatch(STRONG);
    const body = await json(response);
    return { url: `${kind.path}/${body.id}`, etag, body };
  }

  it("GET, POST and PUT carry a strong ETag that changes with every change", async () => {
    const { url, etag } = await make();
    const got = await alice.get(url);
    expect(got.headers.get("ETag")).toBe(etag);
    const put = await alice.send("PUT", url, kind.change);
    expect(put.status).toBe(200);
    const changed = put.headers.get("ETag")!;
    expect(changed).toMatch(STRONG);
    expect(changed).not.toBe(etag);
    expect((await alice.get(url)).headers.get("ETag")).toBe(changed);
    // An empty change changes nothing, ETag included.
    const empty = await alice.send("PUT", url, {});
    expect(empty.headers.get("ETag")).toBe(changed);
  });

  it("GET with a matching If-None-Match is 304 without a body; a stale one is 200", async () => {
    const { url, etag } = await make();
    for (const header of [etag, `W/${etag}`, `"nope", ${etag}`, "*"]) {
      const response = await alice.get(url, { "If-None-Match": header });
      expect(response.status, header).toBe(304);
      expect(response.headers.get("ETag")).toBe(etag);
      expect(await response.text()).toBe("");
    }
    await alice.send("PUT", url, kind.change);
    const fresh = await alice.get(url, { "If-None-Match": etag });
    expect(fresh.status).toBe(200);
    expect((await json(fresh)).name).toBe(kind.change.name);
  });

  it("PUT with a stale If-Match is 412 and changes nothing; the current one succeeds", async () => {
    const { url, etag, body } = await make();
    const current = (await alice.send("PUT", url, kind.change)).headers.get("ETag")!;
    for (const header of [etag, `W/${current}`, "garbage", '"999999"']) {
      const refused = await alice.send("PUT", url, { name: "lost" }, { "If-Match": header });
      expect(refused.status, header).toBe(412);
      expect(refused.headers.get("Content-Type")).toBe("application/problem+json");
      expect((await json(refused)).type).toBe("urn:poi-api:problem:precondition_failed");
    }
    const after = await alice.get(url);
    expect(after.headers.get("ETag")).toBe(current);
    expect((await json(after)).name).toBe(kind.change.name);
    const ok = await alice.send("PUT", url, { name: body.name }, { "If-Match": `"1", ${current}` });
    expect(ok.status).toBe(200);
    const star = await alice.send("PUT", url, kind.change, { "If-Match": "*" });
    expect(star.status).toBe(200);
  });

  it("DELETE with a stale If-Match is 412 and keeps the resource; the current one deletes it", async () => {
    const { url, etag } = await make();
    const current = (await alice.send("PUT", url, kind.change)).headers.get("ETag")!;
    const refused = await alice.send("DELETE", url, undefined, { "If-Match": etag });
    expect(refused.status).toBe(412);
    expect((await alice.get(url)).status).toBe(200);
    expect((await alice.send("DELETE", url, undefined, { "If-Match": current })).status).toBe(204);
    expect((await alice.get(url)).status).toBe(404);
    // Missing is 404 and another account's is 403, whatever If-Match says.
    expect((await alice.send("DELETE", url, undefined, { "If-Match": current })).status).toBe(404);
    const other = await make();
    expect((await bob.send("DELETE", other.url, undefined, { "If-Match": other.etag })).status).toBe(403);
    expect((await bob.send("PUT", other.url, kind.change, { "If-Match": '"5"' })).status).toBe(403);
  });

  it("many parallel updates with the same If-Match: exactly one wins, no update is lost", async () => {
    const { url, etag } = await make();
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => alice.send("PUT", url, { name: `racer ${i}` }, { "If-Match": etag })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 412)).toHaveLength(29);
    const winner = responses.find((r) => r.status === 200)!;
    const final = await alice.get(url);
    expect(final.headers.get("ETag")).toBe(winner.headers.get("ETag"));
    expect((await json(final)).name).toBe((await json(winner)).name);
  });
});

describe("versions that follow the client's view", () => {
  it("compare-and-set rounds: every version has exactly one writer", async () => {
    const pinpoint = await createPinpoint(alice, { tags: [] });
    const url = `/v3.0/pinpoints/${pinpoint.id}`;
    // 12 clients each append their tag with read-modify-write under If-Match, retrying on 412.
    const appendTag = async (tag: string) => {
      for (;;) {
        const got = await alice.get(url);
        const { tags } = await json<{ tags: string[] }>(got);
        const put = await alice.send("PUT", url, { tags: [...tags, tag] }, { "If-Match": got.headers.get("ETag")! });
        if (put.status === 200) return;
        expect(put.status).toBe(412);
      }
    };
    const tags = Array.from({ length: 12 }, (_, i) => `t${i}`);
    await Promise.all(tags.map(appendTag));
    const final = await json<{ tags: string[] }>(await alice.get(url));
    expect([...final.tags].sort()).toEqual([...tags].sort());
  });

  it("a list's ETag changes when its membership changes, and when a member is deleted", async () => {
    const list = await createList(alice);
    const url = `/v3.0/lists/${list.id}`;
    const tag = async () => (await alice.get(url)).headers.get("ETag");
    const [a, b] = [await createPinpoint(alice), await createPinpoint(alice)];
    const t0 = await tag();
    await alice.send("POST", `${url}/pinpoints`, [{ id: a.id }, { id: b.id }]);
    const t1 = await tag();
    expect(t1).not.toBe(t0);
    // Adding a member twice changes nothing.
    await alice.send("POST", `${url}/pinpoints`, [{ id: a.id }]);
    expect(await tag()).toBe(t1);
    await alice.send("DELETE", `${url}/pinpoints`, [{ id: a.id }]);
    const t2 = await tag();
    expect(t2).not.toBe(t1);
    await alice.send("DELETE", `/v3.0/pinpoints/${b.id}`);
    expect(await tag()).not.toBe(t2);
  });

  it("a refused conditional PUT with a file stores no object", async () => {
    const pinpoint = await createPinpoint(alice);
    const before = (await bucketKeys()).length;
    const response = await alice.send(
      "PUT",
      `/v3.0/pinpoints/${pinpoint.id}`,
      { media_file: mediaFile() },
      { "If-Match": '"7"' },
    );
    expect(response.status).toBe(412);
    expect((await bucketKeys()).length).toBe(before);
  });
});
