import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { allPages, BASE, call, caller, createPinpoint, expectProblem, json, type Caller } from "./helpers";
import { bucketKeys, mediaFile, sendDuringUpload } from "./media-fixtures";

type CategoryJson = {
  id: number;
  name: string;
  image_url: string | null;
  created_at: string;
  updated_at: string;
  created_by: unknown;
  updated_by: unknown;
};

const PNG_BYTES = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52];
const png = (extra = 0) => ({
  name: "icon.png",
  type: "image/png",
  content: btoa(String.fromCharCode(...PNG_BYTES, extra)),
});

/** The R2 key behind a media URL of this Worker. */
const keyOf = (url: string | null) => new URL(url!).pathname.replace(/^\/media\//, "");

async function objectExists(key: string): Promise<boolean> {
  return (await env.MEDIA.head(key)) !== null;
}

async function objectCount(): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await env.MEDIA.list({ cursor });
    count += page.objects.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return count;
}

async function createCategory(who: Caller, name = "Museum"): Promise<CategoryJson> {
  const res = await who.send("POST", "/v3.0/categories", { name, image_file: png() });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return json<CategoryJson>(res);
}

let a: Caller;
let b: Caller;
beforeAll(async () => {
  [a, b] = await Promise.all([caller(), caller()]);
});

describe("POST /v3.0/categories", () => {
  it("stores the image in R2 and answers 201 with the category and its Location", async () => {
    const res = await a.send("POST", "/v3.0/categories/", { name: "  Museum ", image_file: png(), ignored: 1 });
    const body = await json<CategoryJson>(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(res.headers.get("Location")).toBe(`${BASE}/v3.0/categories/${body.id}`);
    expect(body).toEqual({
      id: expect.any(Number),
      name: "Museum",
      image_url: expect.stringMatching(new RegExp(`^${BASE}/media/m/[0-9a-f]{32}\\.png$`)),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      created_by: { type: "client", id: a.clientId, name: "test" },
      updated_by: { type: "client", id: a.clientId, name: "test" },
    });
    const object = await env.MEDIA.get(keyOf(body.image_url));
    expect(object?.httpMetadata?.contentType).toBe("image/png");
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(new Uint8Array([...PNG_BYTES, 0]));
  });

  it("requires name and image_file (400, one entry per field)", async () => {
    await expectProblem(await a.send("POST", "/v3.0/categories", {}), 400, { pointers: ["/name", "/image_file"] });
    await expectProblem(await a.send("POST", "/v3.0/categories", { name: " ", image_file: png() }), 400, {
      pointers: ["/name"],
    });
    await expectProblem(await a.send("POST", "/v3.0/categories", { name: "x", image_file: null }), 400, {
      pointers: ["/image_file"],
    });
  });

  it("refuses an image whose bytes do not match its type, storing nothing", async () => {
    const before = await objectCount();
    const res = await a.send("POST", "/v3.0/categories", {
      name: "Liar",
      image_file: { ...png(), type: "image/jpeg" },
    });
    await expectProblem(res, 400, { pointers: ["/image_file/content"] });
    expect(await objectCount()).toBe(before);
    const names = (await allPages<CategoryJson>(a, "/v3.0/categories?limit=1000")).flatMap((p) => p.results);
    expect(names.map((c) => c.name)).not.toContain("Liar");
  });

  it("accepts only image types for image_file, though video/mp4 is a configured media type", async () => {
    const before = await objectCount();
    const res = await a.send("POST", "/v3.0/categories", { name: "Film", image_file: mediaFile("video/mp4", "x.mp4") });
    const body = await expectProblem(res, 400, { pointers: ["/image_file/type"] });
    expect(body.errors?.[0]?.detail).toBe("must be one of image/jpeg, image/png, image/gif, image/webp, image/avif");
    const mine = await createCategory(a, "Still");
    const put = await a.send("PUT", `/v3.0/categories/${mine.id}`, { image_file: mediaFile("video/mp4", "x.mp4") });
    await expectProblem(put, 400, { pointers: ["/image_file/type"] });
    expect(await objectCount()).toBe(before + 1);
    expect(await json(await a.get(`/v3.0/categories/${mine.id}`))).toEqual(mine);
    const gif = await a.send("POST", "/v3.0/categories", { name: "Gif", image_file: mediaFile("image/gif", "x.gif") });
    expect(gif.status).toBe(201);
    await gif.arrayBuffer();
  });

  it("needs a token with the write scope", async () => {
    expect((await call("/v3.0/categories", { method: "POST" })).status).toBe(401);
    const reader = await caller("read");
    const res = await reader.send("POST", "/v3.0/categories", { name: "x", image_file: png() });
    expect(res.status).toBe(403);
    await res.body?.cancel();
  });
});

describe("reading categories", () => {
  it("lists every category to every caller, the built-in one included, in pages", async () => {
    const mine = await createCategory(a, "A's");
    const theirs = await createCategory(b, "B's");
    const pages = await allPages<CategoryJson>(b, "/v3.0/categories?limit=2");
    const all = pages.flatMap((p) => p.results);
    const ids = all.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(ids).toEqual(expect.arrayContaining([1, mine.id, theirs.id]));
    expect(pages.every((p) => p.results.length <= 2)).toBe(true);
    expect(pages[0]!.previous).toBeNull();
  });

  it("reads any category by id, the built-in default too", async () => {
    const mine = await createCategory(a);
    const res = await b.get(`/v3.0/categories/${mine.id}`);
    expect(res.status).toBe(200);
    // Who wrote it is its account's business: another account reads the category, not its writers.
    expect(await json(res)).toEqual({ ...mine, created_by: null, updated_by: null });
    expect(mine.created_by).toEqual({ type: "client", id: a.clientId, name: "test" });
    const builtin = await json<CategoryJson>(await b.get("/v3.0/categories/1"));
    expect(builtin).toMatchObject({ id: 1, name: "Default", image_url: `${BASE}/media/builtin/default-pin.png` });
  });

  it("answers 404 for a category that does not exist", async () => {
    await expectProblem(await a.get("/v3.0/categories/999999"), 404);
  });

  it("lets another account use a category on its own pinpoints", async () => {
    const mine = await createCategory(a);
    const pinpoint = await createPinpoint(b, { category: mine.id });
    expect(pinpoint.category).toBe(mine.id);
  });
});

describe("PUT /v3.0/categories/{id}", () => {
  it("changes only the fields sent", async () => {
    const mine = await createCategory(a, "Old");
    const res = await a.send("PUT", `/v3.0/categories/${mine.id}`, { name: "New" });
    const body = await json<CategoryJson>(res);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ id: mine.id, name: "New", image_url: mine.image_url });
    expect(await json(await a.get(`/v3.0/categories/${mine.id}`))).toEqual(body);
  });

  it("replaces the image and deletes the old object", async () => {
    const mine = await createCategory(a);
    const res = await a.send("PUT", `/v3.0/categories/${mine.id}`, { image_file: png(7) });
    const body = await json<CategoryJson>(res);
    expect(res.status).toBe(200);
    expect(body.name).toBe(mine.name);
    expect(body.image_url).not.toBe(mine.image_url);
    expect(await objectExists(keyOf(body.image_url))).toBe(true);
    expect(await objectExists(keyOf(mine.image_url))).toBe(false);
  });

  it("refuses to clear the image or blank the name", async () => {
    const mine = await createCategory(a);
    await expectProblem(await a.send("PUT", `/v3.0/categories/${mine.id}`, { image_file: null, name: "" }), 400, {
      pointers: ["/image_file", "/name"],
    });
  });

  it("is the owner's alone: 403 for another account, and nothing is stored", async () => {
    const mine = await createCategory(a, "Mine");
    const before = await objectCount();
    const res = await b.send("PUT", `/v3.0/categories/${mine.id}`, { name: "Stolen", image_file: png(1) });
    await expectProblem(res, 403);
    expect(await objectCount()).toBe(before);
    expect((await json<CategoryJson>(await a.get(`/v3.0/categories/${mine.id}`))).name).toBe("Mine");
  });

  it("keeps the built-in category read-only for everyone", async () => {
    const res = await a.send("PUT", "/v3.0/categories/1", { name: "Mine now" });
    const body = await expectProblem(res, 403);
    expect(JSON.stringify(body)).toContain("built in");
    expect((await json<CategoryJson>(await b.get("/v3.0/categories/1"))).name).toBe("Default");
  });

  it("answers 404 for a category that does not exist", async () => {
    await expectProblem(await a.send("PUT", "/v3.0/categories/999999", { name: "x" }), 404);
  });

  it("deletes the new image when the category is deleted during the upload (404)", async () => {
    const mine = await createCategory(a, "Racing");
    const oldKey = keyOf(mine.image_url);
    const before = await bucketKeys();
    const { response, uploaded } = await sendDuringUpload(
      a,
      "PUT",
      `/v3.0/categories/${mine.id}`,
      { name: "Too late", image_file: png(9) },
      async () => expect((await a.send("DELETE", `/v3.0/categories/${mine.id}`)).status).toBe(204),
    );
    await expectProblem(response, 404);
    expect(uploaded).toHaveLength(1);
    expect(await objectExists(uploaded[0]!)).toBe(false);
    // The DELETE removes the old image after its response.
    expect(await objectExists(oldKey)).toBe(false);
    expect(await bucketKeys()).toEqual(before.filter((key) => key !== oldKey));
  });
});

describe("DELETE /v3.0/categories/{id}", () => {
  it("deletes the owner's category and its image", async () => {
    const mine = await createCategory(a);
    const res = await a.send("DELETE", `/v3.0/categories/${mine.id}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    await expectProblem(await a.get(`/v3.0/categories/${mine.id}`), 404);
    expect(await objectExists(keyOf(mine.image_url))).toBe(false);
  });

  it("answers 409 while any pinpoint uses the category, changing nothing", async () => {
    const mine = await createCategory(a);
    const pinpoint = await createPinpoint(b, { category: mine.id });
    await expectProblem(await a.send("DELETE", `/v3.0/categories/${mine.id}`), 409);
    expect((await a.get(`/v3.0/categories/${mine.id}`)).status).toBe(200);
    expect(await objectExists(keyOf(mine.image_url))).toBe(true);
    expect((await json(await b.get(`/v3.0/pinpoints/${pinpoint.id}`))).category).toBe(mine.id);
    // Once no pinpoint uses it, it can go.
    expect((await b.send("PUT", `/v3.0/pinpoints/${pinpoint.id}`, { category: 1 })).status).toBe(200);
    expect((await a.send("DELETE", `/v3.0/categories/${mine.id}`)).status).toBe(204);
  });

  it("is the owner's alone, and the built-in category cannot be deleted", async () => {
    const mine = await createCategory(a);
    await expectProblem(await b.send("DELETE", `/v3.0/categories/${mine.id}`), 403);
    await expectProblem(await a.send("DELETE", "/v3.0/categories/1"), 403);
    await expectProblem(await a.send("DELETE", "/v3.0/categories/999999"), 404);
    expect((await b.get(`/v3.0/categories/${mine.id}`)).status).toBe(200);
    expect((await b.get("/v3.0/categories/1")).status).toBe(200);
  });
});
