/**
 * The OpenAPI document against the server, for what independent testing found
 * the document got wrong: real requests go to the Worker, and both
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

/**
 * The document without its request and response examples, which are data: the validator reads an `id` in
 * any object as a schema's URI (draft 4's `id`), and two examples of one passkey share its id.
 */
function withoutExamples(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutExamples);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => key !== "example" || typeof value !== "object" || value === null)
      .map(([key, value]) => [key, withoutExamples(value)]),
  );
}

/** Validates `value` against the schema at `fragment` of the document, `$ref`s resolved within it. */
function validate(fragment: string, value: unknown) {
  const validator = new Validator({ $ref: DOCUMENT_ID + fragment } as Schema, "2020-12", false);
  validator.addSchema(withoutExamples(document) as Schema, DOCUMENT_ID);
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
      "2026-80-21T18:30:00Z",
      "2026-11-21T96:30:00Z",
      "2026-11-21T18:30:00+24:00",
      "2026-11-21T18:60:00Z",
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

/** A text value read as the document's schema for it: one value, or a comma-separated array (`explode: false`). */
function decoded(schema: Json, text: string): unknown {
  const arrays = (schema.oneOf ?? [schema]) as Json[];
  const itemType = (array: Json, i: number): string | undefined => (array.prefixItems?.[i] ?? array.items)?.type;
  const read = (type: string | undefined, part: string) =>
    (type === "number" || type === "integer") && part.trim() !== "" && Number.isFinite(Number(part))
      ? Number(part)
      : part;
  if (arrays[0]?.type === "array") {
    const parts = text.split(",");
    return parts.map((part, i) =>
      read(itemType(arrays.find((a) => a.maxItems === parts.length) ?? arrays[0]!, i), part),
    );
  }
  return read(schema.type, text);
}

/** The server accepts every query value or header the document says is valid. */
async function expectParameterAccepted(
  method: string,
  path: string,
  url: string,
  name: string,
  values: string[],
  alongside: Record<string, string> = {},
): Promise<void> {
  const parameters = operation(method, path).parameters as Json[];
  const index = parameters.findIndex((p) => (p.$ref ? at(p.$ref) : p).name === name);
  expect(index, `${method} ${path} documents ${name}`).toBeGreaterThanOrEqual(0);
  const given = parameters[index]!;
  const fragment = given.$ref
    ? `${given.$ref}/schema`
    : pointer("paths", path, method.toLowerCase(), "parameters", index, "schema");
  const where = given.$ref ? at(given.$ref).in : given.in;
  let valid = 0;
  for (const value of values) {
    // A parameter's schema stands alone (no $ref): the validator does not index schemas inside parameter lists.
    if (!new Validator(at(fragment) as Schema, "2020-12").validate(decoded(at(fragment), value)).valid) continue;
    valid++;
    const query = new URLSearchParams(alongside);
    if (where === "query") query.set(name, value);
    const target = `${url}${query.size > 0 ? `?${query}` : ""}`;
    const headers = where === "header" ? { [name]: value } : {};
    const response =
      method === "GET" ? await a.get(target, headers) : await a.send(method, target, { name: "Conformance" }, headers);
    expect(response.status, `${method} ${target} ${JSON.stringify(headers)}: documented valid, refused`).toBeLessThan(
      300,
    );
    await response.body?.cancel();
  }
  // Each list has values the document accepts, or the test would prove nothing.
  expect(valid, `${method} ${path} ${name}: documented-valid samples`).toBeGreaterThan(0);
}

describe("query parameters and headers", () => {
  const instants = [
    "2026-11-21T18:30:00Z",
    "2026-11-21T20:30+02:00",
    "2026-11-21t18:30:00,5z",
    "2026-11-21T20:30:00-0500",
    "2026-11-21T20:30:00-05",
    "2026-80-21T18:30:00Z",
    "2026-11-21T96:30:00Z",
    "2026-11-21T18:30:00+24:00",
    "2026-11-21",
    "soon",
  ];
  const samples: Record<string, string[]> = {
    limit: ["0", "1", "20", "1000", "5000", "-1", "1.5", "x", ""],
    bbox: ["2.25,48.81,2.42,48.9", "-180,-90,180,90", "170,-10,-170,10", "1,2,3", "200,0,0,0", "a,b,c,d", ""],
    q: ["tour", "Tour Eiffel", "é", "東京", "   ", "!!!", "a".repeat(200), "a".repeat(201)],
    tags: ["museum", "museum,free", " x ", Array.from({ length: 20 }, (_, i) => `t${i}`).join(), "a,,b", " ", ""],
    category: ["1", "3,7", "999999999999999", "0", "1000000000000000", "x", ""],
    updated_since: instants,
    from: instants,
    to: instants,
  };
  const point = (name: string): Record<string, string> =>
    name === "radius"
      ? { latitude: "0", longitude: "0" }
      : name === "latitude"
        ? { longitude: "0" }
        : { latitude: "0" };
  const coordinates: Record<string, string[]> = {
    latitude: ["0", "-90", "90", "48.8566", "1e1", "91", "x"],
    longitude: ["0", "-180", "180", "2.35", "181", "x"],
    radius: ["0", "1000", "20015114", "20015115", "20037508", "1e300", "1.5", "-1", "1e400", "x"],
  };

  it("accept what the document says is valid, on /v3.0", async () => {
    for (const path of ["/v3.0/pinpoints", "/v3.0/events"]) {
      for (const [name, values] of Object.entries(samples)) {
        if (path === "/v3.0/pinpoints" && (name === "from" || name === "to")) continue;
        if (path === "/v3.0/events" && name === "category") continue;
        await expectParameterAccepted("GET", path, path, name, values);
      }
      for (const [name, values] of Object.entries(coordinates))
        await expectParameterAccepted("GET", path, path, name, values, point(name));
    }
    for (const path of ["/v3.0/lists", "/v3.0/categories", "/v3.0/changes", "/v3.0/keys"])
      await expectParameterAccepted("GET", path, path, "limit", samples.limit!);
    const ids = (id: number) => [String(id), "0", "-1", "1.5", "x", ""];
    const list = await (await a.send("POST", "/v3.0/lists", { name: "Filter" })).json<{ id: number }>();
    await expectParameterAccepted("GET", "/v3.0/pinpoints", "/v3.0/pinpoints", "list", ids(list.id));
    const pinpoint = await (
      await a.send("POST", "/v3.0/pinpoints", { name: "Filter", latitude: 0, longitude: 0 })
    ).json<{ id: number }>();
    await expectParameterAccepted("GET", "/v3.0/events", "/v3.0/events", "pinpoint", ids(pinpoint.id));
  });

  it("accept what the document says is valid, on /ogc", async () => {
    const path = "/ogc/collections/{collectionId}/items";
    for (const collection of ["pinpoints", "events"]) {
      const url = `/ogc/collections/${collection}/items`;
      await expectParameterAccepted("GET", path, url, "limit", ["1", "100", "1000", "5000", "0", "x"]);
      await expectParameterAccepted("GET", path, url, "bbox", [
        ...samples.bbox!,
        "2.25,48.81,0,2.42,48.9,100",
        "2.25,48.81,0,2.42,48.9",
        "1,2,3,4,5,x",
      ]);
      await expectParameterAccepted("GET", path, url, "datetime", [
        "2026-06-01T00:00:00Z",
        "2026-06-01T00:00:00Z/..",
        "../2026-06-01T00:00:00Z",
        "/2026-06-01T00:00:00Z",
        "2026-06-01T00:00:00Z/",
        "2026-06-01T00:00:00Z/2026-07-01T00:00:00.5+02:00",
        "2026-06-01t00:00:00z",
        "2026-06-01 00:00:00+02:00",
        "../..",
        "2026-13-01T00:00:00Z",
        "2026-06-01T25:00:00Z",
        "2026-06-01T00:00:00+24:00",
        "2026-06-01",
      ]);
    }
  });

  it("accept the Idempotency-Key values the document says are valid", async () => {
    const keys = () => [
      crypto.randomUUID(),
      `k-${crypto.randomUUID()}!~`,
      "x".repeat(245) + Date.now(),
      "a b",
      "é",
      "",
    ];
    await expectParameterAccepted("POST", "/v3.0/lists", "/v3.0/lists", "Idempotency-Key", keys());
    expect(validate(pointer("components", "parameters", "IdempotencyKey", "schema"), "x".repeat(256)).valid).toBe(
      false,
    );
  });
});
