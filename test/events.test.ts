import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { allPages, BASE, caller, createPinpoint, expectProblem, json, type Caller } from "./helpers";
import { bucketKeys, sendDuringUpload } from "./media-fixtures";

type Occurrence = { start: string; end: string };
type EventJson = {
  id: number;
  name: string;
  description: string | null;
  dates: Occurrence[];
  media_credits: string | null;
  media_url: string | null;
  tags: string[];
  pinpoint: number;
  created_at: string;
  updated_at: string;
};

const JPEG_BYTES = [0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0];
const jpeg = (extra = 0) => ({
  name: "poster.jpg",
  type: "image/jpeg",
  content: btoa(String.fromCharCode(...JPEG_BYTES, extra)),
});

const ONE_DATE = [{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T20:00:00Z" }];

/** The R2 key behind a media URL of this Worker. */
const keyOf = (url: string | null) => new URL(url!).pathname.replace(/^\/media\//, "");
const objectExists = async (key: string) => (await env.MEDIA.head(key)) !== null;

async function createEvent(who: Caller, pinpoint: number, fields: Record<string, unknown> = {}): Promise<EventJson> {
  const res = await who.send("POST", "/v3.0/events", { name: "Concert", pinpoint, dates: ONE_DATE, ...fields });
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${await res.text()}`);
  return json<EventJson>(res);
}

let a: Caller;
let b: Caller;
let aPlace: number;
let bPlace: number;
beforeAll(async () => {
  [a, b] = await Promise.all([caller(), caller()]);
  [aPlace, bPlace] = (await Promise.all([createPinpoint(a), createPinpoint(b)])).map((p) => p.id) as [number, number];
});

describe("POST /v3.0/events", () => {
  it("creates the event with every field and answers 201 with a Location", async () => {
    const res = await a.send("POST", "/v3.0/events/", {
      name: " Jazz night ",
      pinpoint: aPlace,
      dates: [
        { start: "2026-11-21T20:30:00+02:00", end: "2026-11-21T22:00:00.250+02:00" },
        { start: "2026-11-22T13:00-05:30", end: "2026-11-22T13:00-05:30" },
      ],
      description: '<p onclick="x()">Live<script>alert(1)</script></p>',
      tags: [" jazz ", "", "live", "jazz"],
      media_credits: "© Someone",
      media_file: jpeg(),
      unknown_field: true,
    });
    const body = await json<EventJson>(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(res.headers.get("Location")).toBe(`${BASE}/v3.0/events/${body.id}`);
    expect(body).toEqual({
      id: expect.any(Number),
      name: "Jazz night",
      pinpoint: aPlace,
      dates: [
        { start: "2026-11-21T18:30:00.000Z", end: "2026-11-21T20:00:00.250Z" },
        { start: "2026-11-22T18:30:00.000Z", end: "2026-11-22T18:30:00.000Z" },
      ],
      description: "<p>Live</p>",
      tags: ["jazz", "live"],
      media_credits: "© Someone",
      media_url: expect.stringMatching(new RegExp(`^${BASE}/media/m/[0-9a-f]{32}\\.jpg$`)),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      created_by: { type: "client", id: a.clientId, name: "test" },
      updated_by: { type: "client", id: a.clientId, name: "test" },
    });
    const object = await env.MEDIA.get(keyOf(body.media_url));
    expect(object?.httpMetadata?.contentType).toBe("image/jpeg");
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(new Uint8Array([...JPEG_BYTES, 0]));
    expect(await json(await a.get(`/v3.0/events/${body.id}`))).toEqual(body);
  });

  it("fills optional fields with null and []", async () => {
    const body = await createEvent(a, aPlace);
    expect(body).toMatchObject({ description: null, media_credits: null, media_url: null, tags: [] });
    expect(body.dates).toEqual([{ start: "2026-11-21T18:30:00.000Z", end: "2026-11-21T20:00:00.000Z" }]);
  });

  it("requires name, pinpoint and dates", async () => {
    await expectProblem(await a.send("POST", "/v3.0/events", {}), 400, { pointers: ["/name", "/pinpoint", "/dates"] });
    await expectProblem(await a.send("POST", "/v3.0/events", { name: "x", pinpoint: "1", dates: ONE_DATE }), 400, {
      pointers: ["/pinpoint"],
    });
    await expectProblem(await a.send("POST", "/v3.0/events", { name: "x", pinpoint: 1.5, dates: ONE_DATE }), 400, {
      pointers: ["/pinpoint"],
    });
  });

  it("needs a pinpoint that exists (400) and is the caller's (403)", async () => {
    const missing = await a.send("POST", "/v3.0/events", { name: "x", pinpoint: 999_999, dates: ONE_DATE });
    await expectProblem(missing, 400, { pointers: ["/pinpoint"] });
    const foreign = await a.send("POST", "/v3.0/events", { name: "x", pinpoint: bPlace, dates: ONE_DATE });
    await expectProblem(foreign, 403);
    expect((await allPages<EventJson>(b, `/v3.0/events?pinpoint=${bPlace}`)).flatMap((p) => p.results)).toEqual([]);
  });

  it("stores no media when the event cannot be created", async () => {
    const before = (await env.MEDIA.list()).objects.length;
    const res = await a.send("POST", "/v3.0/events", {
      name: "x",
      pinpoint: bPlace,
      dates: ONE_DATE,
      media_file: jpeg(3),
    });
    await expectProblem(res, 403);
    expect((await env.MEDIA.list()).objects.length).toBe(before);
  });
});

describe("a database write failing after the upload", () => {
  it("POST: the pinpoint deleted during the upload is 400 at /pinpoint, and the upload is deleted", async () => {
    const place = await createPinpoint(a);
    const before = await bucketKeys();
    const { response, uploaded } = await sendDuringUpload(
      a,
      "POST",
      "/v3.0/events",
      { name: "Gone", pinpoint: place.id, dates: ONE_DATE, media_file: jpeg(5) },
      async () => expect((await a.send("DELETE", `/v3.0/pinpoints/${place.id}`)).status).toBe(204),
    );
    await expectProblem(response, 400, { pointers: ["/pinpoint"] });
    expect(uploaded).toHaveLength(1);
    expect(await objectExists(uploaded[0]!)).toBe(false);
    expect(await bucketKeys()).toEqual(before);
  });

  it("PUT: moving to a pinpoint deleted during the upload keeps the event and its media, and deletes the upload", async () => {
    const event = await createEvent(a, aPlace, { media_file: jpeg(6) });
    const target = await createPinpoint(a);
    const before = await bucketKeys();
    const { response, uploaded } = await sendDuringUpload(
      a,
      "PUT",
      `/v3.0/events/${event.id}`,
      { pinpoint: target.id, name: "Moved", media_file: jpeg(7) },
      async () => expect((await a.send("DELETE", `/v3.0/pinpoints/${target.id}`)).status).toBe(204),
    );
    await expectProblem(response, 400, { pointers: ["/pinpoint"] });
    expect(uploaded).toHaveLength(1);
    expect(await objectExists(uploaded[0]!)).toBe(false);
    expect(await bucketKeys()).toEqual(before);
    expect(await json(await a.get(`/v3.0/events/${event.id}`))).toEqual(event);
  });
});

describe("dates", () => {
  const post = (dates: unknown) => a.send("POST", "/v3.0/events", { name: "x", pinpoint: aPlace, dates });

  it("accepts instants with offsets, with or without milliseconds, and answers in UTC with milliseconds", async () => {
    const cases: [string, string][] = [
      ["2026-11-21T18:30:00Z", "2026-11-21T18:30:00.000Z"],
      ["2026-11-21T18:30:00.123Z", "2026-11-21T18:30:00.123Z"],
      ["2026-11-21T20:30:00+02:00", "2026-11-21T18:30:00.000Z"],
      ["2026-11-21T20:30:00.5+02:00", "2026-11-21T18:30:00.500Z"],
      ["2026-11-21T13:30:00-05:00", "2026-11-21T18:30:00.000Z"],
      ["2026-11-21T18:30Z", "2026-11-21T18:30:00.000Z"],
      ["2026-11-22T00:00:00+05:30", "2026-11-21T18:30:00.000Z"],
      ["2026-11-21T18:30:00.123456789Z", "2026-11-21T18:30:00.123Z"],
      ["2024-02-29T23:30:00-01:00", "2024-03-01T00:30:00.000Z"],
    ];
    const res = await post(cases.map(([sent]) => ({ start: sent, end: sent })));
    const body = await json<EventJson>(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.dates).toEqual(cases.map(([, utc]) => ({ start: utc, end: utc })));
  });

  it("refuses an end before its start, pointing at that end", async () => {
    const reversed = [...ONE_DATE, { start: "2026-11-21T18:30:00Z", end: "2026-11-21T20:29:59.999+02:00" }];
    await expectProblem(await post(reversed), 400, { pointers: ["/dates/1/end"] });
    await expectProblem(await post([{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T18:00:00Z" }]), 400, {
      pointers: ["/dates/0/end"],
    });
  });

  it("refuses malformed instants and instants without an offset, pointing at each", async () => {
    const malformed = [
      { start: "2026-11-21T18:30:00", end: "2026-11-21T18:30:00Z" },
      { start: "2026-11-21", end: "tomorrow" },
      { start: "2026-02-30T10:00:00Z", end: "2026-11-21T24:00:00Z" },
      { start: 1763749800000, end: null },
      { start: "2026-11-21T18:30:00+25:00" },
    ];
    await expectProblem(await post(malformed), 400, {
      pointers: [
        "/dates/0/start",
        "/dates/1/start",
        "/dates/1/end",
        "/dates/2/start",
        "/dates/2/end",
        "/dates/3/start",
        "/dates/3/end",
        "/dates/4/start",
        "/dates/4/end",
      ],
    });
  });

  it("refuses an empty array, a non-array and too many occurrences", async () => {
    await expectProblem(await post([]), 400, { pointers: ["/dates"] });
    await expectProblem(await post(ONE_DATE[0]), 400, { pointers: ["/dates"] });
    await expectProblem(await post(null), 400, { pointers: ["/dates"] });
    await expectProblem(await post(Array.from({ length: 1001 }, () => ONE_DATE[0])), 400, { pointers: ["/dates"] });
    const most = await post(Array.from({ length: 1000 }, () => ONE_DATE[0]));
    expect(most.status).toBe(201);
    expect((await json<EventJson>(most)).dates).toHaveLength(1000);
  });
});

describe("GET /v3.0/events/{id}", () => {
  it("answers 403 for another account's event and 404 for none", async () => {
    const theirs = await createEvent(b, bPlace);
    const forbidden = await expectProblem(await a.get(`/v3.0/events/${theirs.id}`), 403);
    expect(JSON.stringify(forbidden)).not.toContain("Concert");
    await expectProblem(await a.get("/v3.0/events/999999"), 404);
  });
});

describe("PUT /v3.0/events/{id}", () => {
  it("changes only the fields sent; a new dates array replaces the old one", async () => {
    const event = await createEvent(a, aPlace, { description: "<b>d</b>", tags: ["t"], media_credits: "c" });
    const renamed = await json<EventJson>(await a.send("PUT", `/v3.0/events/${event.id}`, { name: "Renamed" }));
    expect(renamed).toEqual({ ...event, name: "Renamed", updated_at: expect.any(String) });

    const dates = [
      { start: "2027-01-01T10:00:00+01:00", end: "2027-01-01T12:00:00+01:00" },
      { start: "2027-01-02T09:00:00Z", end: "2027-01-02T11:00:00Z" },
    ];
    const res = await a.send("PUT", `/v3.0/events/${event.id}`, { dates, description: null, tags: null });
    const redated = await json<EventJson>(res);
    expect(res.status).toBe(200);
    expect(redated).toMatchObject({
      name: "Renamed",
      media_credits: "c",
      description: null,
      tags: [],
      dates: [
        { start: "2027-01-01T09:00:00.000Z", end: "2027-01-01T11:00:00.000Z" },
        { start: "2027-01-02T09:00:00.000Z", end: "2027-01-02T11:00:00.000Z" },
      ],
    });
    expect(await json(await a.get(`/v3.0/events/${event.id}`))).toEqual(redated);
  });

  it("moves the event to another of the caller's pinpoints, not to a foreign or missing one", async () => {
    const event = await createEvent(a, aPlace);
    const other = await createPinpoint(a);
    const moved = await json<EventJson>(await a.send("PUT", `/v3.0/events/${event.id}`, { pinpoint: other.id }));
    expect(moved.pinpoint).toBe(other.id);
    await expectProblem(await a.send("PUT", `/v3.0/events/${event.id}`, { pinpoint: bPlace }), 403);
    await expectProblem(await a.send("PUT", `/v3.0/events/${event.id}`, { pinpoint: 999_999 }), 400, {
      pointers: ["/pinpoint"],
    });
    expect((await json<EventJson>(await a.get(`/v3.0/events/${event.id}`))).pinpoint).toBe(other.id);
  });

  it("refuses null for required fields and invalid dates", async () => {
    const event = await createEvent(a, aPlace);
    const res = await a.send("PUT", `/v3.0/events/${event.id}`, { name: null, pinpoint: null, dates: null });
    await expectProblem(res, 400, { pointers: ["/name", "/pinpoint", "/dates"] });
    await expectProblem(await a.send("PUT", `/v3.0/events/${event.id}`, { dates: [] }), 400, { pointers: ["/dates"] });
    const reversed = [{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T18:29:00Z" }];
    await expectProblem(await a.send("PUT", `/v3.0/events/${event.id}`, { dates: reversed }), 400, {
      pointers: ["/dates/0/end"],
    });
    expect(await json(await a.get(`/v3.0/events/${event.id}`))).toEqual(event);
  });

  it("replaces media (deleting the old object) and clears it with null", async () => {
    const event = await createEvent(a, aPlace, { media_file: jpeg(1) });
    const replaced = await json<EventJson>(
      await a.send("PUT", `/v3.0/events/${event.id}`, { media_file: jpeg(2), media_credits: "new" }),
    );
    expect(replaced.media_url).not.toBe(event.media_url);
    expect(replaced.media_credits).toBe("new");
    expect(await objectExists(keyOf(replaced.media_url))).toBe(true);
    expect(await objectExists(keyOf(event.media_url))).toBe(false);

    const cleared = await json<EventJson>(await a.send("PUT", `/v3.0/events/${event.id}`, { media_file: null }));
    expect(cleared.media_url).toBeNull();
    expect(await objectExists(keyOf(replaced.media_url))).toBe(false);
  });

  it("answers 403 for another account's event, 404 for none, changing nothing", async () => {
    const theirs = await createEvent(b, bPlace);
    const before = (await env.MEDIA.list()).objects.length;
    const res = await a.send("PUT", `/v3.0/events/${theirs.id}`, { name: "Mine", media_file: jpeg(4) });
    await expectProblem(res, 403);
    expect((await env.MEDIA.list()).objects.length).toBe(before);
    await expectProblem(await a.send("PUT", `/v3.0/events/${theirs.id}`, { pinpoint: aPlace }), 403);
    await expectProblem(await a.send("PUT", "/v3.0/events/999999", { name: "x" }), 404);
    expect(await json(await b.get(`/v3.0/events/${theirs.id}`))).toEqual(theirs);
  });
});

describe("DELETE /v3.0/events/{id}", () => {
  it("deletes the event and its media", async () => {
    const event = await createEvent(a, aPlace, { media_file: jpeg(5) });
    const res = await a.send("DELETE", `/v3.0/events/${event.id}`);
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    await expectProblem(await a.get(`/v3.0/events/${event.id}`), 404);
    await expectProblem(await a.send("DELETE", `/v3.0/events/${event.id}`), 404);
    expect(await objectExists(keyOf(event.media_url))).toBe(false);
  });

  it("answers 403 for another account's event, which stays", async () => {
    const theirs = await createEvent(b, bPlace);
    await expectProblem(await a.send("DELETE", `/v3.0/events/${theirs.id}`), 403);
    expect((await b.get(`/v3.0/events/${theirs.id}`)).status).toBe(200);
  });

  it("follows from deleting the pinpoint (cascade)", async () => {
    const place = await createPinpoint(a);
    const events = await Promise.all([createEvent(a, place.id), createEvent(a, place.id)]);
    const elsewhere = await createEvent(a, aPlace);
    expect((await a.send("DELETE", `/v3.0/pinpoints/${place.id}`)).status).toBe(204);
    for (const event of events) await expectProblem(await a.get(`/v3.0/events/${event.id}`), 404);
    const remaining = (await allPages<EventJson>(a, "/v3.0/events?limit=1000")).flatMap((p) => p.results);
    expect(remaining.map((e) => e.id)).not.toContain(events[0].id);
    expect(remaining.map((e) => e.id)).toContain(elsewhere.id);
    await expectProblem(await a.get(`/v3.0/events?pinpoint=${place.id}`), 404);
  });
});

describe("GET /v3.0/events", () => {
  it("lists only the caller's events, in pages", async () => {
    const c = await caller();
    const place = await createPinpoint(c);
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createEvent(c, place.id, { name: `E${i}` }));
    await createEvent(b, bPlace);
    const pages = await allPages<EventJson>(c, "/v3.0/events?limit=2");
    expect(pages.map((p) => p.results.length)).toEqual([2, 2, 1]);
    expect(pages.flatMap((p) => p.results)).toEqual(created);
  });

  it("filters by the caller's pinpoint, carrying the filter through the pages", async () => {
    const c = await caller();
    const [one, two] = await Promise.all([createPinpoint(c), createPinpoint(c)]);
    const atOne = [];
    for (let i = 0; i < 3; i++) {
      atOne.push(await createEvent(c, one.id));
      await createEvent(c, two.id);
    }
    const pages = await allPages<EventJson>(c, `/v3.0/events?pinpoint=${one.id}&limit=2`);
    expect(pages.flatMap((p) => p.results)).toEqual(atOne);
    expect(new URL(pages[0]!.next!).searchParams.get("pinpoint")).toBe(String(one.id));
    // A cursor issued for one pinpoint does not page another.
    const cursor = new URL(pages[0]!.next!).searchParams.get("cursor")!;
    await expectProblem(await c.get(`/v3.0/events?pinpoint=${two.id}&cursor=${encodeURIComponent(cursor)}`), 400, {
      pointers: ["cursor"],
    });
  });

  it("answers 403 for another account's pinpoint, 404 for none, 400 for a non-integer", async () => {
    await createEvent(b, bPlace);
    const forbidden = await a.get(`/v3.0/events?pinpoint=${bPlace}`);
    await expectProblem(forbidden, 403);
    await expectProblem(await a.get("/v3.0/events?pinpoint=999999"), 404);
    for (const bad of ["abc", "1.5", "-1", "0", ""]) {
      await expectProblem(await a.get(`/v3.0/events?pinpoint=${bad}`), 400, { pointers: ["pinpoint"] });
    }
  });
});
