/**
 * Transport and error rules (CONTRACT "Transport", "Errors"): trailing
 * slashes, JSON bodies (415, 400, 413), unknown and invalid fields, 404/405,
 * CORS, X-Request-Id, problem details, and 500s that leak nothing.
 */
import { Hono } from "hono";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { defaults } from "../src/core/config";
import type { AppEnv } from "../src/core/env";
import { onError } from "../src/http/errors";
import { DEFAULT_MAX_BODY_BYTES } from "../src/http/route-metadata";
import {
  BASE,
  call,
  caller,
  createList,
  createPinpoint,
  expectProblem,
  fetchWith,
  postBody,
  type Caller,
} from "./helpers";

const place = { name: "Place", latitude: 10, longitude: 20 };

let a: Caller;
beforeAll(async () => {
  a = await caller();
});

function raw(method: string, path: string, body: BodyInit | null, headers: Record<string, string> = {}) {
  return call(path, { method, headers: { Authorization: `Bearer ${a.token}`, ...headers }, body });
}

describe("trailing slashes", () => {
  it("serve collection paths with and without the slash, without redirects", async () => {
    for (const path of ["/v3.0/pinpoints/", "/v3.0/lists/"]) {
      const response = await a.get(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("Location")).toBeNull();
      expect(await response.json()).toMatchObject({ results: expect.any(Array) });
    }
    const created = await a.send("POST", "/v3.0/pinpoints/", place);
    expect(created.status).toBe(201);
    const list = await a.send("POST", "/v3.0/lists/", { name: "slashed" });
    expect(list.status).toBe(201);
    await list.body?.cancel();
    await created.body?.cancel();
  });

  it("serve item paths with and without the slash, for every method", async () => {
    const pinpoint = await createPinpoint(a);
    const list = await createList(a);
    const got = await a.get(`/v3.0/pinpoints/${pinpoint.id}/`);
    expect(got.status).toBe(200);
    expect((await got.json<{ id: number }>()).id).toBe(pinpoint.id);
    const put = await a.send("PUT", `/v3.0/pinpoints/${pinpoint.id}/`, { name: "Renamed" });
    expect(put.status).toBe(200);
    expect((await put.json<{ name: string }>()).name).toBe("Renamed");
    const added = await a.send("POST", `/v3.0/lists/${list.id}/pinpoints/`, [{ id: pinpoint.id }]);
    expect(added.status).toBe(200);
    expect(await added.json()).toEqual({ total: 1, errors: [] });
    const filtered = await a.get(`/v3.0/pinpoints/?list=${list.id}`);
    expect((await filtered.json<{ results: { id: number }[] }>()).results.map((p) => p.id)).toEqual([pinpoint.id]);
    const deleted = await a.send("DELETE", `/v3.0/pinpoints/${pinpoint.id}/`);
    expect(deleted.status).toBe(204);
    expect((await a.get(`/v3.0/pinpoints/${pinpoint.id}`)).status).toBe(404);
    const listGone = await a.send("DELETE", `/v3.0/lists/${list.id}/`);
    expect(listGone.status).toBe(204);
  });
});

describe("request bodies", () => {
  it("accept application/json with parameters and in any case", async () => {
    for (const type of ["application/json;charset=UTF-8", "application/json; charset=utf-8", "Application/JSON"]) {
      const response = await raw("POST", "/v3.0/pinpoints", JSON.stringify(place), { "Content-Type": type });
      expect(response.status, type).toBe(201);
      await response.body?.cancel();
    }
  });

  it("refuse another media type with 415", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data"]) {
      const response = await raw("POST", "/v3.0/pinpoints", JSON.stringify(place), { "Content-Type": type });
      await expectProblem(response, 415, { code: "unsupported_media_type" });
    }
    const pinpoint = await createPinpoint(a);
    const put = await raw("PUT", `/v3.0/pinpoints/${pinpoint.id}`, JSON.stringify({ name: "x" }), {
      "Content-Type": "text/plain",
    });
    await expectProblem(put, 415);
    // Nothing changed.
    expect((await (await a.get(`/v3.0/pinpoints/${pinpoint.id}`)).json<{ name: string }>()).name).toBe("Place");
  });

  it("refuse a declared body of another type with 415 before reading it", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const response = await postBody(a, "/v3.0/pinpoints", body, {
      "Content-Type": "text/plain",
      "Content-Length": "10000000",
    });
    await expectProblem(response, 415, { code: "unsupported_media_type" });
    expect(pulled).toBeLessThanOrEqual(2);
  });

  it("refuse a body without a Content-Type with 415", async () => {
    // A Blob without a type sends no Content-Type header.
    const response = await raw("POST", "/v3.0/lists", new Blob([JSON.stringify({ name: "x" })]));
    await expectProblem(response, 415, { code: "unsupported_media_type" });
  });

  it("refuse malformed JSON with 400 malformed_json", async () => {
    for (const body of ['{"name": "x",', "{name: 'x'}", "not json", '{"a":1}}', ""]) {
      const response = await raw("POST", "/v3.0/pinpoints", body, { "Content-Type": "application/json" });
      await expectProblem(response, 400, { code: "malformed_json" });
    }
  });

  it("say where a malformed JSON body stops being JSON", async () => {
    const cases: [string, string][] = [
      ['{"name": "x",}', "line 1, column 14 (character 14)"],
      ['{\n  "name": "x"\n  "latitude": 1\n}', "line 3, column 3 (character 19)"],
      ["{name: 'x'}", "line 1, column 2 (character 2)"],
      ['{"a":1}}', "line 1, column 8 (character 8)"],
      ['{"name": "x",', "It ends too early (line 1, column 14)"],
    ];
    for (const [body, where] of cases) {
      const response = await raw("POST", "/v3.0/pinpoints", body, { "Content-Type": "application/json" });
      const problem = await response.json<{ detail: string }>();
      expect(response.status, body).toBe(400);
      expect(problem.detail, body).toContain(where);
    }
  });

  it("word a field of the wrong type as the other field errors are, not as the validator does", async () => {
    const body = JSON.stringify({ name: 5, latitude: "48.8", longitude: null, tags: "museum" });
    const response = await raw("POST", "/v3.0/pinpoints", body, { "Content-Type": "application/json" });
    expect(response.status).toBe(400);
    const problem = await response.json<{ detail: string; errors: { pointer: string; detail: string }[] }>();
    expect(problem.errors).toEqual(
      expect.arrayContaining([
        { pointer: "/name", detail: "must be a string" },
        { pointer: "/latitude", detail: "must be a number" },
        { pointer: "/longitude", detail: "must be a number, not null" },
        { pointer: "/tags", detail: "must be an array" },
      ]),
    );
    expect(problem.detail).not.toMatch(/Invalid input|expected/);
  });

  it("refuse a body that is not UTF-8 with 400", async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const response = await raw("POST", "/v3.0/lists", bytes, { "Content-Type": "application/json" });
    await expectProblem(response, 400, { code: "malformed_json" });
  });

  it("ignore unknown fields, including ones that name columns", async () => {
    const other = await caller();
    const response = await a.send("POST", "/v3.0/pinpoints", {
      ...place,
      id: 999_999,
      account_id: other.accountId,
      media_url: "https://evil.example/x.png",
      created_at: "1999-01-01T00:00:00.000Z",
      format: "json",
      nested: { deep: [1, 2, 3] },
    });
    expect(response.status).toBe(201);
    const body = await response.json<Record<string, unknown>>();
    expect(body.id).not.toBe(999_999);
    expect(body.media_url).toBeNull();
    expect(body.created_at).not.toBe("1999-01-01T00:00:00.000Z");
    expect(body).not.toHaveProperty("format");
    expect(body).not.toHaveProperty("nested");
    expect(body).not.toHaveProperty("account_id");
    // Still the caller's, not the other account's.
    expect((await a.get(`/v3.0/pinpoints/${body.id}`)).status).toBe(200);
    expect((await other.get(`/v3.0/pinpoints/${body.id}`)).status).toBe(403);
  });

  it("report wrong types and out-of-range values, one entry per field", async () => {
    const response = await a.send("POST", "/v3.0/pinpoints", {
      name: 5,
      latitude: 91,
      longitude: "east",
      tags: ["ok", 7],
      unknown: "ignored",
    });
    const body = await expectProblem(response, 400);
    const byPointer = Object.fromEntries((body.errors ?? []).map((e) => [e.pointer, e.detail]));
    expect(Object.keys(byPointer).sort()).toEqual(["/latitude", "/longitude", "/name", "/tags/1"]);
    expect(body.errors).toHaveLength(4);
    expect(byPointer["/latitude"]).toBe("must be between -90 and 90");
    for (const error of body.errors!) expect(error.detail).toEqual(expect.any(String));
  });

  it("point at each offending field of an update, and change nothing", async () => {
    const pinpoint = await createPinpoint(a);
    const response = await a.send("PUT", `/v3.0/pinpoints/${pinpoint.id}`, {
      name: "Would change",
      latitude: -90.5,
      longitude: 180.01,
    });
    const body = await expectProblem(response, 400);
    expect(body.errors?.map((e) => e.pointer).sort()).toEqual(["/latitude", "/longitude"]);
    const after = await (await a.get(`/v3.0/pinpoints/${pinpoint.id}`)).json<{ name: string }>();
    expect(after.name).toBe("Place");
  });

  it("accept the boundary values of a range", async () => {
    const response = await a.send("POST", "/v3.0/pinpoints", { name: "Pole", latitude: -90, longitude: 180 });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ latitude: -90, longitude: 180 });
  });

  it("report a missing required field by its pointer", async () => {
    const response = await a.send("POST", "/v3.0/pinpoints", { latitude: 1, longitude: 2 });
    const body = await expectProblem(response, 400);
    expect(body.errors).toEqual([{ pointer: "/name", detail: expect.any(String) }]);
  });

  it("refuse a JSON document that is not an object with 400", async () => {
    for (const document of [[], "text", 42, null]) {
      const response = await a.send("POST", "/v3.0/lists", document);
      await expectProblem(response, 400);
    }
  });
});

describe("body size", () => {
  const max = defaults.maxBodyBytes;

  it("is configured at 15 MiB by default", () => {
    expect(max).toBe(15 * 1024 * 1024);
  });

  it("refuses a body whose Content-Length exceeds the maximum with 413", async () => {
    const body = new Uint8Array(max + 1).fill(0x20);
    const response = await raw("POST", "/v3.0/pinpoints", body, { "Content-Type": "application/json" });
    const problem = await expectProblem(response, 413, { code: "payload_too_large" });
    expect(problem.detail).toContain(String(max));
  });

  it("refuses a streamed body (no Content-Length) that grows past the maximum with 413", async () => {
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Far more than the limit: the service must stop reading, not drain it.
        if (sent >= 4 * max) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const streamed = { method: "POST", body: new ReadableStream(), duplex: "half" } as RequestInit;
    expect(new Request(BASE, streamed).headers.get("Content-Length")).toBeNull();
    await expectProblem(await postBody(a, "/v3.0/pinpoints", stream), 413, { code: "payload_too_large" });
    // Refused while reading: the stream was cancelled soon after the limit, not drained.
    expect(sent).toBeGreaterThan(max);
    expect(sent).toBeLessThan(max + 8 * chunk.byteLength);
  });

  it("accepts a body of exactly the configured maximum and refuses one byte more", async () => {
    const limit = 1000;
    const json = JSON.stringify(place);
    const exact = json + " ".repeat(limit - json.length);
    const send = (body: BodyInit) =>
      fetchWith(
        { MAX_BODY_BYTES: String(limit) },
        new Request(new URL("/v3.0/pinpoints", BASE), {
          method: "POST",
          headers: { Authorization: `Bearer ${a.token}`, "Content-Type": "application/json" },
          body,
        }),
      );
    const ok = await send(exact);
    expect(ok.status).toBe(201);
    await ok.body?.cancel();
    await expectProblem(await send(exact + " "), 413);
    const streamed = new Blob([exact + " "]).stream();
    await expectProblem(await send(streamed), 413);
  });

  it("ignores a nonsensical Content-Length rather than failing", async () => {
    const response = await raw("POST", "/v3.0/lists", JSON.stringify({ name: "cl" }), {
      "Content-Type": "application/json",
      "Content-Length": "-1",
    });
    expect(response.status).toBe(201);
    await response.body?.cancel();
  });
});

describe("body size per route", () => {
  const limit = DEFAULT_MAX_BODY_BYTES;
  /** Membership items of one pinpoint, in JSON text, `count` of them. */
  const items = (id: number, count: number) => `[${Array(count).fill(`{"id":${id}}`).join(",")}]`;
  let members: string;
  let pinpoint: number;
  beforeAll(async () => {
    pinpoint = (await createPinpoint(a)).id;
    members = `/v3.0/lists/${(await createList(a)).id}/pinpoints`;
  });

  it("is 64 KiB for JSON without media: a batch of 1,000 ids fits, with room to spare", async () => {
    expect(limit).toBe(64 * 1024);
    const batch = JSON.stringify(
      Array.from({ length: 1000 }, () => ({ id: Number.MAX_SAFE_INTEGER })),
      null,
      4,
    );
    expect(batch.length).toBeLessThan(limit);
    const response = await raw("POST", members, items(pinpoint, 1000), { "Content-Type": "application/json" });
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });

  it("refuses a membership batch whose Content-Length is over its limit before reading the body", async () => {
    // A body that would never end: the service must answer without reading it.
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode(`{"id":${pinpoint}},`.repeat(1000)));
      },
    });
    const response = await postBody(a, members, endless, { "Content-Length": String(limit + 1) });
    const problem = await expectProblem(response, 413, { code: "payload_too_large" });
    expect(problem.detail).toContain(String(limit));
    expect(pulled).toBeLessThanOrEqual(2);
    // The declared length is what counts: a short body behind it is not read either.
    const short = await raw("DELETE", members, `[{"id":${pinpoint}}]`, {
      "Content-Type": "application/json",
      "Content-Length": String(limit + 1),
    });
    await expectProblem(short, 413, { code: "payload_too_large" });
  });

  it("refuses a chunked membership batch (no Content-Length) once it grows past its limit", async () => {
    const chunk = new TextEncoder().encode(`{"id":${pinpoint}},`.repeat(100));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode("["));
      },
      pull(controller) {
        if (sent >= 100 * limit) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    await expectProblem(await postBody(a, members, stream), 413, { code: "payload_too_large" });
    expect(sent).toBeGreaterThan(limit - chunk.byteLength);
    expect(sent).toBeLessThan(limit + 64 * chunk.byteLength);
  });

  it("takes a list whose description is at its longest, escaped as \\u00e9 throughout", async () => {
    const body = JSON.stringify({ name: "é".repeat(200), description: "é".repeat(100_000) }).replaceAll("é", "\\u00e9");
    expect(body.length).toBeGreaterThan(600_000);
    const response = await raw("POST", "/v3.0/lists", body, { "Content-Type": "application/json" });
    expect(response.status).toBe(201);
    await response.body?.cancel();
    const over = await raw("POST", "/v3.0/lists", body + " ".repeat(20_000), { "Content-Type": "application/json" });
    await expectProblem(over, 413, { code: "payload_too_large" });
  });

  it("is MAX_BODY_BYTES where a media file is taken, and never more than MAX_BODY_BYTES", async () => {
    const padded = JSON.stringify(place) + " ".repeat(limit);
    const created = await raw("POST", "/v3.0/pinpoints", padded, { "Content-Type": "application/json" });
    expect(created.status).toBe(201);
    await created.body?.cancel();
    const small = (path: string, body: string) =>
      fetchWith(
        { MAX_BODY_BYTES: "100" },
        new Request(new URL(path, BASE), {
          method: "POST",
          headers: { Authorization: `Bearer ${a.token}`, "Content-Type": "application/json" },
          body,
        }),
      );
    await expectProblem(await small(members, items(pinpoint, 20)), 413, { code: "payload_too_large" });
  });
});

describe("unknown paths and methods", () => {
  it("answer an unknown path with a 404 problem", async () => {
    for (const path of [
      "/",
      "/v3.0",
      "/v3.0/nothing",
      "/v2.0/pinpoints",
      "/v3.0/oauth2/authorize",
      "/v3.0/pinpoints/1/x",
    ]) {
      const response = await a.get(path);
      const body = await expectProblem(response, 404, { code: "not_found" });
      expect(body.detail).toContain(path);
    }
  });

  it("answer a non-integer id as an unknown path (404)", async () => {
    for (const id of ["abc", "1.5", "-1", "0x10"]) {
      await expectProblem(await a.get(`/v3.0/pinpoints/${id}`), 404);
    }
  });

  it("answer a known path with another method with 405 and Allow", async () => {
    const pinpoint = await createPinpoint(a);
    const cases: [string, string, string[]][] = [
      ["PATCH", `/v3.0/pinpoints/${pinpoint.id}`, ["GET", "PUT", "DELETE"]],
      ["POST", `/v3.0/pinpoints/${pinpoint.id}`, ["GET", "PUT", "DELETE"]],
      ["PUT", "/v3.0/pinpoints", ["GET", "POST"]],
      ["DELETE", "/v3.0/lists/", ["GET", "POST"]],
      ["GET", "/v3.0/oauth2/token", ["POST"]],
      ["PUT", "/v3.0/oauth2/token", ["POST"]],
    ];
    for (const [method, path, expected] of cases) {
      const response = await a.send(method, path, method === "GET" ? undefined : {});
      await expectProblem(response, 405, { code: "method_not_allowed" });
      const allow = response.headers.get("Allow")!.split(", ");
      for (const m of expected) expect(allow, `${method} ${path}`).toContain(m);
      expect(allow).not.toContain(method);
    }
  });
});

describe("CORS", () => {
  const preflight = (origin: string) =>
    new Request(new URL("/v3.0/pinpoints", BASE), {
      method: "OPTIONS",
      headers: {
        Origin: origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
      },
    });

  it("answers a preflight allowing the Authorization header, any origin by default", async () => {
    const response = await call(preflight("https://maps.example").url, preflight("https://maps.example"));
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const headers = response.headers.get("Access-Control-Allow-Headers")!.toLowerCase().split(/, */);
    expect(headers).toEqual(expect.arrayContaining(["authorization", "content-type"]));
    const methods = response.headers.get("Access-Control-Allow-Methods")!.split(/, */);
    expect(methods).toEqual(expect.arrayContaining(["GET", "POST", "PUT", "DELETE"]));
    expect(Number(response.headers.get("Access-Control-Max-Age"))).toBeGreaterThan(0);
    // No cookies are used, so credentials are never allowed.
    expect(response.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    expect(response.headers.get("X-Request-Id")).toBeTruthy();
    expect(await response.text()).toBe("");
  });

  it("lets scripts fetch public media conditionally and by range", async () => {
    const response = await call("/media/anything", {
      method: "OPTIONS",
      headers: {
        Origin: "https://maps.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "if-none-match, range, if-range",
      },
    });
    expect(response.status).toBe(204);
    const allowed = response.headers.get("Access-Control-Allow-Headers")!.toLowerCase().split(/, */);
    expect(allowed).toEqual(expect.arrayContaining(["if-none-match", "range", "if-range"]));
    const exposed = response.headers.get("Access-Control-Expose-Headers")!.toLowerCase().split(/, */);
    expect(exposed).toEqual(expect.arrayContaining(["etag", "content-range", "accept-ranges"]));
  });

  it("needs no token for a preflight, on the token endpoint too", async () => {
    const response = await call("/v3.0/oauth2/token", {
      method: "OPTIONS",
      headers: { Origin: "https://maps.example", "Access-Control-Request-Method": "POST" },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });

  it("marks simple and error responses readable cross-origin and exposes the useful headers", async () => {
    const origin = { Origin: "https://maps.example" };
    const ok = await call("/v3.0/pinpoints", { headers: { ...origin, Authorization: `Bearer ${a.token}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const exposed = ok.headers.get("Access-Control-Expose-Headers")!.toLowerCase().split(/, */);
    expect(exposed).toEqual(expect.arrayContaining(["location", "x-request-id", "www-authenticate"]));
    await ok.body?.cancel();
    // A browser client must be able to read a 401 to know it needs a token.
    const denied = await call("/v3.0/pinpoints", { headers: origin });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("Access-Control-Allow-Origin")).toBe("*");
    await denied.body?.cancel();
  });

  it("allows only the configured origins when CORS_ORIGINS lists them", async () => {
    const vars = { CORS_ORIGINS: "https://maps.example, https://other.example" };
    const allowed = await fetchWith(vars, preflight("https://other.example"));
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get("Access-Control-Allow-Origin")).toBe("https://other.example");
    expect(allowed.headers.get("Vary")).toContain("Origin");

    const refused = await fetchWith(vars, preflight("https://evil.example"));
    expect(refused.headers.get("Access-Control-Allow-Origin")).toBeNull();

    const simple = await fetchWith(
      vars,
      new Request(new URL("/v3.0/pinpoints", BASE), {
        headers: { Origin: "https://maps.example", Authorization: `Bearer ${a.token}` },
      }),
    );
    expect(simple.status).toBe(200);
    expect(simple.headers.get("Access-Control-Allow-Origin")).toBe("https://maps.example");
    expect(simple.headers.get("Vary")).toContain("Origin");
    await simple.body?.cancel();
  });
});

describe("X-Request-Id", () => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  it("is generated for every response, successes and errors alike, and differs per request", async () => {
    const responses = [
      await a.get("/v3.0/pinpoints"),
      await call("/v3.0/pinpoints"),
      await call("/nowhere"),
      await call("/v3.0/oauth2/token", { method: "POST" }),
    ];
    const ids = responses.map((r) => r.headers.get("X-Request-Id"));
    for (const id of ids) expect(id).toMatch(uuid);
    expect(new Set(ids).size).toBe(ids.length);
    await Promise.all(responses.map((r) => r.body?.cancel()));
  });

  it("echoes a sane id the client sent", async () => {
    for (const id of ["abc-123", "req_01HX7Z.trace:42", "0f8fad5b-d9cb-469f-a165-70867728950e"]) {
      const response = await call("/v3.0/pinpoints", { headers: { "X-Request-Id": id } });
      expect(response.headers.get("X-Request-Id")).toBe(id);
      await response.body?.cancel();
    }
  });

  it("replaces an unusable id with a generated one", async () => {
    for (const id of ["has spaces", "<script>", "x".repeat(201), "a,b", "a;b"]) {
      const response = await call("/v3.0/pinpoints", { headers: { "X-Request-Id": id } });
      expect(response.headers.get("X-Request-Id")).toMatch(uuid);
      await response.body?.cancel();
    }
  });
});

describe("server errors", () => {
  const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
  afterEach(() => spy.mockClear());

  it("answer a real failure (a missing D1 binding) with a 500 that names only the request id", async () => {
    const response = await fetchWith(
      { DB: undefined },
      new Request(new URL("/v3.0/pinpoints", BASE), {
        headers: { Authorization: `Bearer ${a.token}`, "X-Request-Id": "trace-500" },
      }),
    );
    const text = await response.clone().text();
    const body = await expectProblem(response, 500, { code: "internal_error" });
    expect(response.headers.get("X-Request-Id")).toBe("trace-500");
    expect(body.detail).toContain("trace-500");
    expect(text).not.toMatch(/prepare|stack|at .*\.ts|Error/);
    // Logged, with the request id, for the operator.
    const logged = spy.mock.calls.map((args) => args.join(" ")).join("\n");
    expect(logged).toContain("trace-500");
    expect(logged).toContain("TypeError");
  });

  it("never copy an error's message or stack into the body", async () => {
    const secret = "SELECT secret_hash FROM clients WHERE id = 'x'";
    const tiny = new Hono<AppEnv>()
      .use(async (c, next) => {
        c.set("requestId", "unit-1");
        await next();
      })
      .get("/boom", () => {
        throw new Error(secret);
      });
    tiny.onError(onError);
    const response = await tiny.request("/boom");
    const text = await response.clone().text();
    const body = await expectProblem(response, 500, { code: "internal_error" });
    expect(text).not.toContain("SELECT");
    expect(text).not.toMatch(/at .*\.(ts|js)/);
    expect(Object.keys(body).sort()).toEqual(["detail", "instance", "status", "title", "type"]);
    expect(body.detail).toContain("unit-1");
    expect(spy).toHaveBeenCalledTimes(1);
    expect(String(spy.mock.calls[0]![0])).toContain(secret);
  });
});
