/**
 * Every example in the OpenAPI document is a request the service accepts:
 * /docs fills them in for "try it", so a newcomer's first request is one of
 * them. Each operation is sent with its request body examples (every media
 * type) and its parameter examples; what its path ids and the ids inside a
 * body name is created first, from the collection's own example.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { basic, call, caller, type Caller } from "./helpers";
import { openApiRequests, type Json } from "./openapi-requests";

let document: Json;
let a: Caller;
let fromDocument: ReturnType<typeof openApiRequests>;

beforeAll(async () => {
  document = await (await call("/v3.0/openapi.json")).json<Json>();
  a = await caller();
  fromDocument = openApiRequests(document, a);
});

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
    for (const [method, path, operation] of fromDocument.operations()) {
      for (const [type, media] of Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>))
        expect(media.example, `${method} ${path} ${type}`).toBeDefined();
    }
  });

  it("are requests the service accepts", async () => {
    let sent = 0;
    for (const [method, path, operation] of fromDocument.operations()) {
      // A signed-in browser's operations take its session cookie: test/sessions.test.ts and test/passkeys.test.ts
      // send their examples.
      if ((operation.tags as string[]).includes("people")) continue;
      const url = await fromDocument.urlOf(path, operation);
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
                const body = encoded(type, await fromDocument.withOwnIds(path, example));
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
