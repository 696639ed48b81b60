/**
 * Every example in the OpenAPI document is a request the service accepts:
 * /docs fills them in for "try it", so a newcomer's first request is one of
 * them. Each operation is sent with its request body examples (every media
 * type) and its parameter examples; what its path ids and the ids inside a
 * body name is created first, from the collection's own example.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, caller, type Caller } from "./helpers";

type Json = Record<string, any>;

let document: Json;
let a: Caller;

beforeAll(async () => {
  document = await (await call("/v3.0/openapi.json")).json<Json>();
  a = await caller();
});

const operations = (): [string, string, Json][] =>
  Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]): [string, string, Json] => [method, path, operation]),
  );

const resolved = (value: Json): Json =>
  value.$ref
    ? value.$ref
        .slice(2)
        .split("/")
        .reduce((node: Json, key: string) => node[key], document)
    : value;

/** The example of a body, with the ids it names replaced by ones this caller owns. */
async function withOwnIds(path: string, example: unknown): Promise<unknown> {
  if (path === "/v3.0/events" && example && typeof example === "object" && "pinpoint" in example)
    return { ...example, pinpoint: await create("/v3.0/pinpoints") };
  if (/^\/v3\.0\/lists\/\{id\}\/pinpoints$/.test(path) && Array.isArray(example))
    return Promise.all(example.map(async () => ({ id: await create("/v3.0/pinpoints") })));
  return example;
}

/** Creates an item of a collection from the collection's documented JSON example; returns its id. */
async function create(collection: string): Promise<number> {
  const example = document.paths[collection].post.requestBody.content["application/json"].example;
  const response = await a.send("POST", collection, await withOwnIds(collection, example));
  expect(response.status, `POST ${collection} with its example`).toBe(201);
  return (await response.json<{ id: number }>()).id;
}

/** The URL of an operation: path parameters from their examples, or created; query parameters' examples. */
async function urlOf(path: string, operation: Json): Promise<string> {
  const parameters = ((operation.parameters ?? []) as Json[]).map(resolved);
  let url = path;
  for (const parameter of parameters.filter((p) => p.in === "path")) {
    const example = parameter.example ?? parameter.schema?.example;
    const value =
      example ??
      (parameter.name === "featureId"
        ? await create("/v3.0/pinpoints")
        : await create(path.slice(0, path.indexOf(`/{${parameter.name}}`))));
    url = url.replace(`{${parameter.name}}`, encodeURI(String(value)));
  }
  const query = new URLSearchParams();
  for (const parameter of parameters.filter((p) => p.in === "query")) {
    const example = parameter.example ?? parameter.schema?.example;
    if (example !== undefined) query.set(parameter.name, Array.isArray(example) ? example.join(",") : String(example));
  }
  return query.size > 0 ? `${url}?${query}` : url;
}

function encoded(type: string, example: unknown): BodyInit {
  const fields = Object.entries(example as Record<string, string>);
  if (type === "application/x-www-form-urlencoded") return new URLSearchParams(fields);
  if (type === "multipart/form-data") {
    const form = new FormData();
    for (const [name, value] of fields) form.append(name, value);
    return form;
  }
  return JSON.stringify(example);
}

describe("the document's examples", () => {
  it("are on every request body, for every media type", () => {
    for (const [method, path, operation] of operations()) {
      for (const [type, media] of Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>))
        expect(media.example, `${method} ${path} ${type}`).toBeDefined();
    }
  });

  it("are requests the service accepts", async () => {
    let sent = 0;
    for (const [method, path, operation] of operations()) {
      const url = await urlOf(path, operation);
      // The token endpoint's client authenticates with HTTP Basic, as Swagger UI's Authorize does.
      const auth =
        path === "/v3.0/oauth2/token"
          ? { Authorization: basic(a.clientId, a.clientSecret) }
          : { Authorization: `Bearer ${a.token}` };
      const bodies = Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>);
      const requests =
        bodies.length === 0
          ? [{ headers: auth }]
          : await Promise.all(
              bodies.map(async ([type, { example }]) => {
                const body = encoded(type, await withOwnIds(path, example));
                // FormData sets its own Content-Type, with the boundary.
                const contentType: Record<string, string> =
                  type === "multipart/form-data" ? {} : { "Content-Type": type };
                return { headers: { ...auth, ...contentType }, body };
              }),
            );
      for (const init of requests) {
        const response = await call(url, { method: method.toUpperCase(), ...init });
        const text = await response.text();
        expect(response.status, `${method.toUpperCase()} ${url}: ${text.slice(0, 300)}`).toBeLessThan(300);
        sent++;
      }
    }
    expect(sent).toBeGreaterThan(30);
  });
});
