/**
 * A method a path does not take is a 405 with `Allow`, before anything reads
 * the request (src/http/middleware/allowed-methods.ts): every path of the
 * OpenAPI document, asked with every method it does not document, answers
 * 405 whatever it carries (no credential, a bad token, two credentials at
 * once, a malformed bookmark, an unknown query parameter, a body of another
 * type), with an `Allow` that names exactly the methods the document gives
 * the path, HEAD beside GET, and OPTIONS.
 */
import { beforeAll, expect, it } from "vitest";
import { app } from "../src/app";
import { call, caller, type Caller } from "./helpers";
import type { Json } from "./openapi-requests";

const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "TRACE", "PROPFIND"];

let document: Json;
let who: Caller;

beforeAll(async () => {
  document = await (await call("/v3.0/openapi.json")).json<Json>();
  who = await caller();
});

/** A URL of the path: each parameter from its example, else an id no test creates (the method comes first). */
function urlOf(path: string, operations: Json[]): string {
  const parameters = operations.flatMap((operation) => (operation.parameters ?? []) as Json[]);
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const parameter = parameters.find((p) => p.name === name && p.in === "path");
    return encodeURI(String(parameter?.example ?? parameter?.schema?.example ?? "987654321"));
  });
}

/** What a request may carry that a credential check, a bookmark check or the body rules refuse. */
const anything = (method: string, token: string): RequestInit => ({
  method,
  headers: { Authorization: `Bearer ${token}`, "X-D1-Bookmark": "garbage", "Content-Type": "text/plain" },
  // A GET or HEAD request cannot have a body.
  ...(method === "GET" || method === "HEAD" ? {} : { body: "hello" }),
});

it("answers every path of the document with 405 and its Allow for a method it does not take, before any check", async () => {
  const paths = Object.entries(document.paths as Record<string, Record<string, Json>>);
  expect(paths.length).toBeGreaterThan(30);
  let checked = 0;
  for (const [path, item] of paths) {
    const documented = Object.keys(item).map((method) => method.toUpperCase());
    const allowed = new Set([...documented, ...(documented.includes("GET") ? ["HEAD"] : []), "OPTIONS"]);
    const url = urlOf(path, Object.values(item));
    for (const method of METHODS.filter((m) => !allowed.has(m))) {
      const unauthenticated = call(url, { method });
      // Two credentials at once (a key beside the token), and an unknown query parameter.
      const everything = call(`${url}?key=pk_${"x".repeat(24)}&nonsense=1`, anything(method, who.token));
      const garbage = call(url, { method, headers: { Authorization: "Bearer not-a-token" } });
      for (const response of await Promise.all([unauthenticated, everything, garbage])) {
        const where = `${method} ${url}`;
        expect(response.status, `${where}: ${await response.clone().text()}`).toBe(405);
        expect(response.headers.get("Content-Type"), where).toBe("application/problem+json");
        expect(new Set(response.headers.get("Allow")!.split(", ")), where).toEqual(allowed);
        expect(response.headers.get("WWW-Authenticate"), where).toBeNull();
        await response.body?.cancel();
        checked++;
      }
    }
  }
  expect(checked).toBeGreaterThan(300);
});

it("covers every route of the app but the reference page and the map page, which have GET only, and /operator", async () => {
  // The document's paths in Hono's form, to compare with the app's route table.
  const documented = new Set(
    Object.keys(document.paths).map((path) => path.replace(/\{(\w+)\}(\.\w+)?/g, (_, name) => `:${name}`)),
  );
  const undocumented = [
    ...new Set(
      app.routes
        // The operator routes stay unknown (404) to anyone without the operator secret (test/operator.test.ts).
        .filter((route) => route.method !== "ALL" && !route.path.startsWith("/operator"))
        // A parameter's pattern may hold a quantifier in braces of its own (a passkey's `{22,1364}`).
        .map((route) => route.path.replace(/:(\w+)\{(?:[^{}]|\{[^{}]*\})*\}/g, ":$1").replace(/\/$/, "")),
    ),
  ].filter((path) => !documented.has(path));
  expect(undocumented.sort()).toEqual(["/docs", "/maps/:id"]);
  for (const path of ["/docs", "/maps/1"]) {
    const response = await call(path, { method: "TRACE" });
    expect(response.status, path).toBe(405);
    expect(response.headers.get("Allow"), path).toBe("GET, HEAD, OPTIONS");
    await response.body?.cancel();
  }
});

it("still answers a path no route has with 404, after the credential check of the resource it lies under", async () => {
  const anonymous = await call("/v3.0/pinpoints/not-an-id", { method: "TRACE" });
  expect(anonymous.status).toBe(401);
  await anonymous.body?.cancel();
  const authenticated = await who.send("TRACE", "/v3.0/pinpoints/not-an-id");
  expect(authenticated.status).toBe(404);
  await authenticated.body?.cancel();
  const nowhere = await call("/nowhere", { method: "TRACE" });
  expect(nowhere.status).toBe(404);
  await nowhere.body?.cancel();
});
