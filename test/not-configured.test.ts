/**
 * A Worker without a usable TOKEN_SIGNING_KEY answers every request with one
 * 503 problem naming the secret and how to set it (plain `wrangler dev`
 * without .dev.vars, or a deployment without `wrangler secret put`).
 * scripts/test-dev.ts checks the same against a real `wrangler dev`.
 */
import { describe, expect, it } from "vitest";
import { caller, fetchWith } from "./helpers";

const tokenRequest: RequestInit = {
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: `Basic ${btoa("id:secret")}` },
  body: "grant_type=client_credentials",
};

describe("without a usable signing key", () => {
  const cases: [string, Partial<Cloudflare.Env>, RegExp][] = [
    ["missing", { TOKEN_SIGNING_KEY: undefined }, /^TOKEN_SIGNING_KEY is not set:/],
    ["empty", { TOKEN_SIGNING_KEY: "" }, /^TOKEN_SIGNING_KEY is not set:/],
    ["too short", { TOKEN_SIGNING_KEY: "x".repeat(31) }, /^TOKEN_SIGNING_KEY is shorter than 32 characters:/],
  ];

  it.each(cases)("%s: every request answers 503 not_configured", async (_name, secrets, reason) => {
    const { token } = await caller();
    const requests: [string, RequestInit][] = [
      ["/v3.0/oauth2/token", tokenRequest],
      ["/v3.0/pinpoints", { headers: { Authorization: `Bearer ${token}` } }],
      ["/v3.0/lists/1", { method: "DELETE", headers: { Authorization: `Bearer ${token}` } }],
      ["/v3.0/openapi.json", {}],
      ["/docs", {}],
      ["/media/builtin/default-pin.png", {}],
      ["/no/such/path", {}],
    ];
    for (const [path, init] of requests) {
      const response = await fetchWith(secrets, path, init);
      expect(response.status, path).toBe(503);
      expect(response.headers.get("Content-Type")).toBe("application/problem+json");
      expect(response.headers.get("X-Request-Id")).toBeTruthy();
      const problem = await response.json<{ type: string; title: string; detail: string; instance: string }>();
      expect(problem.type).toBe("urn:poi-api:problem:not_configured");
      expect(problem.title).toBe("The service is not configured");
      expect(problem.instance).toBe(path);
      expect(problem.detail).toMatch(reason);
      expect(problem.detail).toContain("`npm start`");
      expect(problem.detail).toContain("`npx wrangler secret put TOKEN_SIGNING_KEY`");
    }
  });

  it("a browser can read the 503 (CORS), and preflights still pass", async () => {
    const secrets = { TOKEN_SIGNING_KEY: undefined };
    const origin = { Origin: "https://maps.example.com" };
    const response = await fetchWith(secrets, "/v3.0/pinpoints", { headers: origin });
    expect(response.status).toBe(503);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    const preflight = await fetchWith(secrets, "/v3.0/pinpoints", {
      method: "OPTIONS",
      headers: { ...origin, "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
  });

  it("the previous key alone is not enough", async () => {
    const response = await fetchWith(
      { TOKEN_SIGNING_KEY: undefined, TOKEN_SIGNING_KEY_PREVIOUS: "p".repeat(40) },
      "/v3.0/oauth2/token",
      tokenRequest,
    );
    expect(response.status).toBe(503);
  });
});

it("with the key set, the same requests are served", async () => {
  expect((await fetchWith({}, "/v3.0/openapi.json")).status).toBe(200);
  expect((await fetchWith({}, "/media/builtin/default-pin.png")).status).toBe(200);
  expect((await fetchWith({}, "/v3.0/oauth2/token", tokenRequest)).status).toBe(401);
});
