/**
 * Structured request logs (src/http/middleware/request-log.ts): one JSON line per request
 * with request id, method, route pattern, status, duration and account, and
 * never a token, a client secret or the signing key, wherever they were sent.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { app } from "../src/app";
import type { RequestLogLine } from "../src/http/middleware/request-log";
import { BASE, basic, call, caller, createClient, createPinpoint, personCaller } from "./helpers";

let log: MockInstance<typeof console.log>;
let info: MockInstance<typeof console.info>;
let error: MockInstance<typeof console.error>;
beforeEach(() => {
  log = vi.spyOn(console, "log").mockImplementation(() => {});
  info = vi.spyOn(console, "info").mockImplementation(() => {});
  error = vi.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Runs `request` and returns the one line it logged, checking it is a single JSON object written
 * with the console method of its level (console.info for info, console.log for error).
 */
async function loggedLine(request: () => Promise<Response>): Promise<{ line: RequestLogLine; text: string }> {
  log.mockClear();
  info.mockClear();
  const response = await request();
  await response.body?.cancel();
  const calls = [...log.mock.calls, ...info.mock.calls];
  expect(calls).toHaveLength(1);
  const [text, ...rest] = calls[0]!;
  expect(rest).toEqual([]);
  expect(typeof text).toBe("string");
  expect(text).not.toContain("\n");
  const line = JSON.parse(text as string) as RequestLogLine;
  expect(line.status).toBe(response.status);
  expect(line.level === "info" ? info : log).toHaveBeenCalledTimes(1);
  return { line, text: text as string };
}

describe("request log", () => {
  it("logs one JSON line with the request id, method, route pattern, status, duration and account", async () => {
    const who = await caller();
    const pinpoint = await createPinpoint(who);
    const { line } = await loggedLine(() =>
      call(`/v3.0/pinpoints/${pinpoint.id}`, {
        headers: { Authorization: `Bearer ${who.token}`, "X-Request-Id": "trace-42" },
      }),
    );
    expect(line).toEqual({
      level: "info",
      message: "request",
      request_id: "trace-42",
      method: "GET",
      route: "/v3.0/pinpoints/:id",
      status: 200,
      duration_ms: expect.any(Number),
      account_id: who.accountId,
      client_id: who.clientId,
      person_id: null,
      key_id: null,
    });
    expect(line.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("names the person whose token made the request", async () => {
    const person = await personCaller("viewer");
    const { line } = await loggedLine(() => person.get("/v3.0/lists"));
    expect(line).toMatchObject({
      route: "/v3.0/lists",
      status: 200,
      account_id: person.accountId,
      client_id: null,
      person_id: person.personId,
    });
  });

  it("names the generated request id the response carries", async () => {
    const who = await caller();
    let requestId: string | null = null;
    const { line } = await loggedLine(async () => {
      const response = await who.send("POST", "/v3.0/lists", { name: "Coffee" });
      requestId = response.headers.get("X-Request-Id");
      return response;
    });
    expect(line).toMatchObject({ method: "POST", route: "/v3.0/lists", status: 201, request_id: requestId });
  });

  it("never logs a token sent as the access_token query parameter, nor the query", async () => {
    const who = await caller();
    const { line, text } = await loggedLine(() =>
      call(`/v3.0/pinpoints?limit=5&access_token=${encodeURIComponent(who.token)}`),
    );
    expect(line).toMatchObject({ route: "/v3.0/pinpoints", status: 200, account_id: who.accountId });
    for (const part of [who.token, ...who.token.split("."), "access_token", "limit"]) {
      expect(text).not.toContain(part);
    }
  });

  it("never logs a token sent in the header, even a rejected one", async () => {
    const who = await caller();
    const forged = `${who.token.slice(0, -4)}AAAA`;
    const { line, text } = await loggedLine(() =>
      call("/v3.0/events", { headers: { Authorization: `Bearer ${forged}` } }),
    );
    // The token check refused it, yet the route that would have answered is named.
    expect(line).toMatchObject({ route: "/v3.0/events", status: 401, account_id: null, client_id: null });
    for (const part of forged.split(".")) expect(text).not.toContain(part);
  });

  it("never logs client credentials sent to the token endpoint", async () => {
    const client = await createClient();
    const { line, text } = await loggedLine(() =>
      call("/v3.0/oauth2/token", {
        method: "POST",
        headers: {
          Authorization: basic(client.clientId, client.clientSecret),
          "Content-Type": "application/x-www-form-urlencoded",
        },
        body: "grant_type=client_credentials",
      }),
    );
    expect(line).toMatchObject({ method: "POST", route: "/v3.0/oauth2/token", status: 200, account_id: null });
    expect(text).not.toContain(client.clientSecret);
    expect(text).not.toContain(basic(client.clientId, client.clientSecret).slice(6));
  });

  it("logs unknown paths without their path, and preflights and unknown ids by the resource pattern", async () => {
    const unknown = await loggedLine(() => call("/v3.0/secret-looking-path"));
    expect(unknown.line).toMatchObject({ route: null, status: 404 });
    expect(unknown.text).not.toContain("secret-looking-path");

    // No handler matches, so the resource's middleware pattern names it (its token check answers).
    const notAnId = await loggedLine(() => call("/v3.0/pinpoints/abc"));
    expect(notAnId.line).toMatchObject({ route: "/v3.0/pinpoints/*", status: 401 });

    const preflight = await loggedLine(() =>
      call("/v3.0/pinpoints", {
        method: "OPTIONS",
        headers: { Origin: "https://map.example", "Access-Control-Request-Method": "POST" },
      }),
    );
    expect(preflight.line).toMatchObject({ method: "OPTIONS", route: "/v3.0/pinpoints/*", status: 204 });
  });

  it("logs a 5xx at level error once, and leaves the error itself to onError's separate line", async () => {
    const who = await caller();
    // No D1 binding: reading the pinpoints fails on our side.
    const bindings = { ...env, DB: undefined as unknown as D1Database };
    const ctx = createExecutionContext();
    const { line, text } = await loggedLine(async () => {
      const request = new Request(new URL("/v3.0/pinpoints", BASE), {
        headers: { Authorization: `Bearer ${who.token}` },
      });
      const response = await app.fetch(request, bindings, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    });
    expect(line).toMatchObject({ level: "error", route: "/v3.0/pinpoints", status: 500 });
    expect(text).not.toContain("stack");
    expect(text).not.toContain("prepare");
    expect(error).toHaveBeenCalledTimes(1);
    expect(JSON.parse(error.mock.calls[0]![0] as string)).toMatchObject({
      level: "error",
      request_id: line.request_id,
    });
  });
});
