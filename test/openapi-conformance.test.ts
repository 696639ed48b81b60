/**
 * The OpenAPI document against the server, for what independent testing found
 * the document got wrong (issue 12): real requests go to the Worker, and both
 * what the document says of each request (valid or not) and each response
 * (status, media type, body schema) are checked against /v3.0/openapi.json,
 * validated with @cfworker/json-schema (draft 2020-12, the dialect of OpenAPI
 * 3.1; it needs no code generation, so it runs in workerd).
 */
import { Validator, type Schema } from "@cfworker/json-schema";
import { beforeAll, describe, expect, it } from "vitest";
import { defaults } from "../src/core/config";
import { call, caller, createPinpoint, json, type Caller } from "./helpers";
import { mediaFile, samples, type SampleType } from "./media-fixtures";

type Json = Record<string, any>;

const DOCUMENT_ID = "https://api.example.test/v3.0/openapi.json";
let document: Json;
let a: Caller;

beforeAll(async () => {
  document = await (await call("/v3.0/openapi.json")).json<Json>();
  a = await caller();
});

/** A JSON Pointer fragment (RFC 6901) to a place in the document. */
const pointer = (...segments: (string | number)[]) =>
  "#/" + segments.map((s) => String(s).replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

const at = (fragment: string): Json =>
  fragment
    .slice(2)
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((node: Json, key) => node?.[key], document);

/** Validates `value` against the schema at `fragment` of the document, `$ref`s resolved within it. */
function validate(fragment: string, value: unknown) {
  const validator = new Validator({ $ref: DOCUMENT_ID + fragment } as Schema, "2020-12", false);
  validator.addSchema(document as Schema, DOCUMENT_ID);
  return validator.validate(value);
}

function operation(method: string, path: string): Json {
  const found = document.paths[path]?.[method.toLowerCase()];
  expect(found, `${method} ${path} is in the document`).toBeDefined();
  return found;
}

/** Whether the document accepts this request body of that media type. */
function documentAccepts(method: string, path: string, body: unknown, mediaType = "application/json"): boolean {
  operation(method, path);
  const fragment = pointer("paths", path, method.toLowerCase(), "requestBody", "content", mediaType, "schema");
  expect(at(fragment), `${method} ${path} documents a ${mediaType} body`).toBeDefined();
  return validate(fragment, body).valid;
}

/** The response matches the document: a documented status, its media type and, for JSON, its schema. */
async function expectDocumented(method: string, path: string, response: Response): Promise<void> {
  const responses = operation(method, path).responses;
  let fragment = pointer("paths", path, method.toLowerCase(), "responses", String(response.status));
  expect(responses[String(response.status)], `${method} ${path} documents ${response.status}`).toBeDefined();
  if (at(fragment).$ref) fragment = at(fragment).$ref;
  const documented = at(fragment);
  const type = response.headers.get("Content-Type")?.split(";")[0]?.trim();
  if (!documented.content) {
    expect(await response.text(), `${method} ${path} ${response.status} has no body`).toBe("");
    return;
  }
  const mediaType = type && documented.content[type] ? type : "*/*";
  expect(documented.content[mediaType], `${method} ${path} ${response.status} documents ${type}`).toBeDefined();
  if (!type?.endsWith("json")) {
    await response.body?.cancel();
    return;
  }
  const body = await response.json();
  const result = validate(`${fragment}/content/${mediaType.replaceAll("/", "~1")}/schema`, body);
  expect(result.valid, `${method} ${path} ${response.status}: ${JSON.stringify(result.errors.slice(0, 3))}`).toBe(true);
}

/** Sends a body; the server accepts it (2xx) exactly when the document says it is valid. */
async function expectAgree(
  method: string,
  path: string,
  url: string,
  body: unknown,
  mediaType = "application/json",
): Promise<Response> {
  const accepted = documentAccepts(method, path, body, mediaType);
  const response = await a.send(method, url, body, { "Content-Type": mediaType });
  const copy = response.clone();
  await expectDocumented(method, path, response);
  expect(
    copy.status < 300,
    `${method} ${url} ${JSON.stringify(body).slice(0, 200)}: document says ${accepted ? "valid" : "invalid"}, server answered ${copy.status}`,
  ).toBe(accepted);
  return copy;
}

describe("media types", () => {
  const configured = defaults.mediaTypes.split(",");
  const enumOf = (schema: string) =>
    at(pointer("components", "schemas", schema, "properties", "type")).enum as string[];

  it("lists the configured types and their aliases, images only for image_file", () => {
    expect(enumOf("MediaFile")).toEqual([...configured, "image/jpg", "image/pjpeg"]);
    expect(enumOf("ImageFile")).toEqual([
      ...configured.filter((t) => t.startsWith("image/")),
      "image/jpg",
      "image/pjpeg",
    ]);
  });

  it("accepts exactly the documented types for media_file and image_file", async () => {
    const place = { name: "Place", latitude: 1, longitude: 2 };
    const uploads: [string, SampleType][] = [
      ...configured.map((t): [string, SampleType] => [t, t as SampleType]),
      ["image/jpg", "image/jpeg"],
      ["image/pjpeg", "image/jpeg"],
      ["image/bmp", "image/png"],
      ["image/svg+xml", "image/png"],
      ["text/html", "image/png"],
    ];
    for (const [type, sample] of uploads) {
      await expectAgree("POST", "/v3.0/pinpoints", "/v3.0/pinpoints", {
        ...place,
        media_file: { ...mediaFile(sample), type },
      });
      await expectAgree("POST", "/v3.0/categories", "/v3.0/categories", {
        name: `c ${type}`,
        image_file: { ...mediaFile(sample), type },
      });
    }
  });
});

describe("event dates", () => {
  it("document exactly the date-times the server accepts", async () => {
    const { id: pinpoint } = await createPinpoint(a);
    const cases = [
      "2026-11-21T18:30:00Z",
      "2026-11-21T18:30:00.123Z",
      "2026-11-21T20:30+02:00",
      "2026-11-21T20:30:00+0200",
      "2026-11-21T20:30:00-05",
      "2026-11-21t18:30:00,5z",
      "2026-11-21T18:30:00",
      "2026-11-21",
      "2026-11-21 18:30:00Z",
      "tomorrow",
      "2026-11-21T18:30:00+2:00",
    ];
    for (const start of cases) {
      await expectAgree("POST", "/v3.0/events", "/v3.0/events", {
        name: "Concert",
        pinpoint,
        dates: [{ start, end: "9999-01-01T00:00:00Z" }],
      });
      await expectAgree("POST", "/v3.0/events", "/v3.0/events", {
        name: "Concert",
        pinpoint,
        dates: [{ start: "2000-01-01T00:00:00Z", end: start }],
      });
    }
  });
});

describe("names", () => {
  it("refuse only white space, in the document as on the server", async () => {
    const { id: pinpoint } = await createPinpoint(a);
    for (const name of ["   ", "\t\n", "\u00a0\u3000", "", " a ", "x", "\u00a0b"]) {
      await expectAgree("POST", "/v3.0/pinpoints", "/v3.0/pinpoints", { name, latitude: 1, longitude: 2 });
      await expectAgree("POST", "/v3.0/lists", "/v3.0/lists", { name });
      await expectAgree("POST", "/v3.0/events", "/v3.0/events", {
        name,
        pinpoint,
        dates: [{ start: "2026-01-01T00:00:00Z", end: "2026-01-01T01:00:00Z" }],
      });
    }
  });
});

describe("collection filters", () => {
  it("answer a documented 404 for a list or pinpoint that does not exist", async () => {
    const pinpoints = await a.get("/v3.0/pinpoints?list=999999999");
    expect(pinpoints.status).toBe(404);
    await expectDocumented("GET", "/v3.0/pinpoints", pinpoints);
    const events = await a.get("/v3.0/events?pinpoint=999999999");
    expect(events.status).toBe(404);
    await expectDocumented("GET", "/v3.0/events", events);
    await expectDocumented("GET", "/v3.0/pinpoints", await a.get("/v3.0/pinpoints"));
    await expectDocumented("GET", "/v3.0/events", await a.get("/v3.0/events"));
  });
});

describe("media route", () => {
  it("documents HEAD, with an example key that exists", async () => {
    const get = operation("GET", "/media/{key}");
    const head = operation("HEAD", "/media/{key}");
    const example = get.parameters.find((p: Json) => p.name === "key").example as string;
    expect(head.parameters.find((p: Json) => p.name === "key").example).toBe(example);
    for (const method of ["GET", "HEAD"]) {
      await expectDocumented(method, "/media/{key}", await call(`/media/${example}`, { method }));
      await expectDocumented(method, "/media/{key}", await call("/media/m/nothing.png", { method }));
    }
  });

  it("documents the 200 a Range with a stale If-Range gets", async () => {
    const response = await createPinpoint(a, { media_file: mediaFile("image/png") });
    const url = new URL(response.media_url as string);
    const ranged = await call(url.pathname, { headers: { Range: "bytes=0-3", "If-Range": '"stale"' } });
    expect(ranged.status).toBe(200);
    await expectDocumented("GET", "/media/{key}", ranged);
    const partial = await call(url.pathname, { headers: { Range: "bytes=0-3" } });
    expect(partial.status).toBe(206);
    await expectDocumented("GET", "/media/{key}", partial);
    // HEAD ignores Range: the document lists no 206 for it.
    await expectDocumented(
      "HEAD",
      "/media/{key}",
      await call(url.pathname, { method: "HEAD", headers: { Range: "bytes=0-3" } }),
    );
    expect(samples["image/png"].byteLength).toBeGreaterThan(4);
  });
});

describe("GeoJSON", () => {
  const GEOJSON = "application/geo+json";

  it("documents both representations of every read that has them, and format=", async () => {
    const pinpoint = await createPinpoint(a, { altitude: 35, tags: ["x"] });
    const flat = await createPinpoint(a);
    const event = await json<{ id: number }>(
      await a.send("POST", "/v3.0/events", {
        name: "Concert",
        pinpoint: pinpoint.id,
        dates: [{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T20:00:00Z" }],
      }),
    );
    const reads: [string, string][] = [
      ["/v3.0/pinpoints", "/v3.0/pinpoints?limit=3"],
      ["/v3.0/pinpoints", `/v3.0/pinpoints?latitude=1&longitude=2&limit=3`],
      ["/v3.0/pinpoints/{id}", `/v3.0/pinpoints/${pinpoint.id}`],
      ["/v3.0/pinpoints/{id}", `/v3.0/pinpoints/${flat.id}`],
      ["/v3.0/events", "/v3.0/events?limit=3"],
      ["/v3.0/events/{id}", `/v3.0/events/${event.id}`],
    ];
    for (const [path, url] of reads) {
      const op = operation("GET", path);
      expect(Object.keys(op.responses["200"].content).sort(), path).toEqual([
        "application/geo+json",
        "application/json",
      ]);
      const asked = [
        await a.get(url, { Accept: GEOJSON }),
        await a.get(`${url}${url.includes("?") ? "&" : "?"}format=geojson`),
        await a.get(url),
      ];
      expect(asked.map((r) => r.headers.get("Content-Type")?.split(";")[0])).toEqual([
        GEOJSON,
        GEOJSON,
        "application/json",
      ]);
      for (const response of asked) await expectDocumented("GET", path, response);

      // `format` takes exactly the values the document lists.
      const parameter = op.parameters.find((p: Json) => p.name === "format" && p.in === "query");
      expect(parameter, `${path} documents format`).toBeDefined();
      for (const format of ["json", "geojson", "kml", "GeoJSON", ""]) {
        const documented = new Validator(parameter.schema, "2020-12").validate(format).valid;
        const response = await a.get(`${url}${url.includes("?") ? "&" : "?"}format=${format}`);
        expect(response.status < 300, `${path} format=${format}`).toBe(documented);
        await expectDocumented("GET", path, response);
      }
    }
  });

  it("documents exactly the imports the server accepts, and its answers", async () => {
    const feature = (coordinates: unknown, properties: unknown = { name: "Place" }, type = "Point") => ({
      type: "Feature",
      geometry: { type, coordinates },
      properties,
    });
    const collection = (...features: unknown[]) => ({ type: "FeatureCollection", features });
    const bodies: unknown[] = [
      collection(
        feature([2.2945, 48.8584, 35], {
          name: "Tower",
          address: "Champ de Mars",
          category: 1,
          description: "<p>Iron</p>",
          media_credits: "me",
          tags: ["a", "b"],
        }),
        feature([-180, -90], { name: "Corner", id: 7, created_at: "ignored", altitude: 5 }),
      ),
      collection(feature([200, 0])),
      collection(feature([0, 91])),
      collection(feature([0, 0, 100_001])),
      collection(feature([1])),
      collection(feature([1, 2, 3, 4])),
      collection(feature(["1", 2])),
      collection(feature([1, 2], {})),
      collection(feature([1, 2], { name: "   " })),
      collection(feature([1, 2], null)),
      collection(feature([1, 2], { name: "x", tags: "a" })),
      collection(feature([1, 2], { name: "x", media_file: { content: "AA==", type: "image/png" } })),
      collection(feature([[1, 2]], { name: "x" }, "LineString")),
      collection({ type: "feature", geometry: { type: "Point", coordinates: [1, 2] }, properties: { name: "x" } }),
      collection(),
      collection(...Array.from({ length: 1001 }, (_, i) => feature([0, 0], { name: `p${i}` }))),
      collection(...Array.from({ length: 1000 }, (_, i) => feature([i % 180, 0], { name: `p${i}` }))),
      feature([1, 2]),
      { type: "FeatureCollection" },
    ];
    let created = 0;
    for (const body of bodies) {
      const response = await expectAgree("POST", "/v3.0/pinpoints", "/v3.0/pinpoints", body, GEOJSON);
      if (response.status === 201) created++;
    }
    expect(created).toBe(2);
  });
});
