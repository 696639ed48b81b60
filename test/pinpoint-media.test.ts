/**
 * `media_file` on pinpoints end to end: stored before the row, removed when
 * the row cannot be written, replaced and cleared by PUT, and deleted with
 * the pinpoint (its own media and its events').
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { call, caller, createPinpoint, json, type Caller } from "./helpers";
import { bucketKeys, expectGone, exists, keyOf, mediaFile, samples } from "./media-fixtures";

type PinpointJson = { id: number; media_url: string | null; media_credits: string | null; name: string };

let a: Caller;
let b: Caller;

beforeAll(async () => {
  [a, b] = await Promise.all([caller(), caller()]);
});

async function withMedia(who: Caller = a, fields: Record<string, unknown> = {}): Promise<PinpointJson> {
  return (await createPinpoint(who, { media_file: mediaFile(), media_credits: "© A", ...fields })) as PinpointJson;
}

async function put(who: Caller, id: number, body: unknown): Promise<{ status: number; body: PinpointJson }> {
  const response = await who.send("PUT", `/v3.0/pinpoints/${id}`, body);
  return { status: response.status, body: await json<PinpointJson>(response) };
}

describe("POST with media_file", () => {
  it("stores the file and returns its URL, which GET returns too", async () => {
    const created = await withMedia();
    const key = keyOf(created.media_url);
    expect(await exists(key)).toBe(true);
    const got = await json<PinpointJson>(await a.get(`/v3.0/pinpoints/${created.id}`));
    expect(got.media_url).toBe(created.media_url);
    expect(got.media_credits).toBe("© A");
    const served = await call(new URL(created.media_url!).pathname);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(samples["image/png"]);
  });

  it("accepts media_file null as no media", async () => {
    const created = await createPinpoint(a, { media_file: null });
    expect(created.media_url).toBeNull();
  });

  it("leaves no object behind when the database write fails after the upload", async () => {
    const before = await bucketKeys();
    const response = await a.send("POST", "/v3.0/pinpoints", {
      name: "Nowhere",
      latitude: 1,
      longitude: 2,
      category: 999_999,
      media_file: mediaFile(),
    });
    const body = await json<{ errors: { pointer: string }[] }>(response);
    expect(response.status).toBe(400);
    expect(body.errors.map((e) => e.pointer)).toEqual(["/category"]);
    expect(await bucketKeys()).toEqual(before);
  });

  it("stores nothing when another field is invalid", async () => {
    const before = await bucketKeys();
    const response = await a.send("POST", "/v3.0/pinpoints", {
      name: "x",
      latitude: 100,
      longitude: 0,
      media_file: mediaFile(),
    });
    expect(response.status).toBe(400);
    await response.arrayBuffer();
    expect(await bucketKeys()).toEqual(before);
  });
});

describe("PUT with media_file", () => {
  it("replaces the media and deletes the old object", async () => {
    const created = await withMedia();
    const oldKey = keyOf(created.media_url);
    const { status, body } = await put(a, created.id, { media_file: mediaFile("image/gif", "new.gif") });
    expect(status).toBe(200);
    const newKey = keyOf(body.media_url);
    expect(newKey).not.toBe(oldKey);
    expect(newKey.endsWith(".gif")).toBe(true);
    expect(body.media_credits).toBe("© A");
    await expectGone(oldKey);
    expect(await exists(newKey)).toBe(true);
  });

  it("clears the media with null and deletes the object", async () => {
    const created = await withMedia();
    const key = keyOf(created.media_url);
    const { status, body } = await put(a, created.id, { media_file: null });
    expect(status).toBe(200);
    expect(body.media_url).toBeNull();
    await expectGone(key);
    const got = await json<PinpointJson>(await a.get(`/v3.0/pinpoints/${created.id}`));
    expect(got.media_url).toBeNull();
  });

  it("keeps the media when media_file is not sent", async () => {
    const created = await withMedia();
    const { status, body } = await put(a, created.id, { name: "Renamed" });
    expect(status).toBe(200);
    expect(body.media_url).toBe(created.media_url);
    expect(body.name).toBe("Renamed");
    expect(await exists(keyOf(created.media_url))).toBe(true);
  });

  it("keeps the old media and stores nothing when the new file is refused", async () => {
    const created = await withMedia();
    const before = await bucketKeys();
    const { status } = await put(a, created.id, {
      name: "Not applied",
      media_file: { content: btoa("<svg/>"), name: "x.png", type: "image/png" },
    });
    expect(status).toBe(400);
    expect(await bucketKeys()).toEqual(before);
    const got = await json<PinpointJson>(await a.get(`/v3.0/pinpoints/${created.id}`));
    expect(got).toMatchObject({ name: "Place", media_url: created.media_url });
  });

  it("deletes the new object when the update fails after the upload", async () => {
    const created = await withMedia();
    const before = await bucketKeys();
    const { status } = await put(a, created.id, { category: 999_999, media_file: mediaFile() });
    expect(status).toBe(400);
    expect(await bucketKeys()).toEqual(before);
    const got = await json<PinpointJson>(await a.get(`/v3.0/pinpoints/${created.id}`));
    expect(got.media_url).toBe(created.media_url);
  });

  it("answers 403 for another account's pinpoint and 404 for a missing one, uploading nothing", async () => {
    const theirs = await withMedia(b);
    const before = await bucketKeys();
    expect((await put(a, theirs.id, { media_file: mediaFile() })).status).toBe(403);
    expect((await put(a, theirs.id, { media_file: null })).status).toBe(403);
    expect((await put(a, 999_999, { media_file: mediaFile() })).status).toBe(404);
    expect(await bucketKeys()).toEqual(before);
    expect(await exists(keyOf(theirs.media_url))).toBe(true);
  });
});

describe("DELETE", () => {
  it("deletes the pinpoint's media and its events' media", async () => {
    const place = await withMedia();
    const eventKeys: string[] = [];
    for (const type of ["image/jpeg", "video/mp4"] as const) {
      const response = await a.send("POST", "/v3.0/events", {
        name: "Show",
        pinpoint: place.id,
        dates: [{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T20:00:00Z" }],
        media_file: mediaFile(type, "poster"),
      });
      const event = await json<{ media_url: string }>(response);
      expect(response.status, JSON.stringify(event)).toBe(201);
      eventKeys.push(keyOf(event.media_url));
    }
    const other = await withMedia();
    const response = await a.send("DELETE", `/v3.0/pinpoints/${place.id}`);
    expect(response.status).toBe(204);
    for (const key of [keyOf(place.media_url), ...eventKeys]) await expectGone(key);
    expect(await exists(keyOf(other.media_url))).toBe(true);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM events WHERE pinpoint_id = ?")
      .bind(place.id)
      .first<{ n: number }>();
    expect(events?.n).toBe(0);
  });

  it("answers 403 for another account's pinpoint and keeps its media", async () => {
    const theirs = await withMedia(b);
    const response = await a.send("DELETE", `/v3.0/pinpoints/${theirs.id}`);
    expect(response.status).toBe(403);
    await response.arrayBuffer();
    const missing = await a.send("DELETE", "/v3.0/pinpoints/999999");
    expect(missing.status).toBe(404);
    await missing.arrayBuffer();
    expect(await exists(keyOf(theirs.media_url))).toBe(true);
  });

  it("deletes a pinpoint without media", async () => {
    const place = await createPinpoint(a);
    const response = await a.send("DELETE", `/v3.0/pinpoints/${place.id}`);
    expect(response.status).toBe(204);
  });
});
