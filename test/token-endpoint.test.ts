/**
 * POST /v3.0/oauth2/token (CONTRACT "Clients, tokens, scopes"): client
 * authentication by Basic or form fields, grant and scope rules, and
 * RFC 6749 §5.2 error bodies.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { basic, call, createClient, requestToken, type TestClient } from "./helpers";

const TOKEN = "/v3.0/oauth2/token";
const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

type TokenBody = { access_token: string; token_type: string; expires_in: number; scope: string };
type OAuthErrorBody = { error: string; error_description: string };

function post(body: BodyInit | null, headers: Record<string, string> = FORM): Promise<Response> {
  return call(TOKEN, { method: "POST", headers, body });
}

function form(fields: Record<string, string>): URLSearchParams {
  return new URLSearchParams(fields);
}

/** Asserts an RFC 6749 §5.2 error response and returns its body. */
async function expectOAuthError(response: Response, status: number, error: string): Promise<OAuthErrorBody> {
  const body = await response.json<OAuthErrorBody>();
  expect(response.status, JSON.stringify(body)).toBe(status);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  expect(Object.keys(body).sort()).toEqual(["error", "error_description"]);
  expect(body.error).toBe(error);
  expect(body.error_description).toEqual(expect.any(String));
  return body;
}

async function expectToken(response: Response, scope: string): Promise<TokenBody> {
  const body = await response.json<TokenBody>();
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body).toEqual({ access_token: expect.any(String), token_type: "Bearer", expires_in: 36000, scope });
  return body;
}

/** The token works on a read operation. */
async function expectUsable(token: string): Promise<void> {
  const response = await call("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  await response.body?.cancel();
}

describe("token endpoint: success", () => {
  it("issues a Bearer token for Basic credentials, with no-store headers", async () => {
    const client = await createClient();
    const response = await requestToken(client);
    const body = await expectToken(response, "read write");
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(response.headers.get("Pragma")).toBe("no-cache");
    expect(body.access_token.split(".")).toHaveLength(3);
    await expectUsable(body.access_token);
  });

  it("accepts Basic credentials without the optional client_id field (SPEC example sends it; RFC does not require it)", async () => {
    const client = await createClient();
    const response = await post(form({ grant_type: "client_credentials" }), {
      ...FORM,
      Authorization: basic(client.clientId, client.clientSecret),
    });
    await expectToken(response, "read write");
  });

  it("accepts client_id and client_secret as form fields", async () => {
    const client = await createClient();
    const response = await post(
      form({ grant_type: "client_credentials", client_id: client.clientId, client_secret: client.clientSecret }),
    );
    const body = await expectToken(response, "read write");
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    await expectUsable(body.access_token);
  });

  it("accepts a multipart/form-data body", async () => {
    const client = await createClient();
    const data = new FormData();
    data.set("grant_type", "client_credentials");
    data.set("client_id", client.clientId);
    data.set("client_secret", client.clientSecret);
    // No Content-Type: the Request sets multipart/form-data with its boundary.
    const response = await call(TOKEN, { method: "POST", body: data });
    const body = await expectToken(response, "read write");
    await expectUsable(body.access_token);
  });

  it("accepts a form content type with parameters and the slashed path", async () => {
    const client = await createClient();
    const response = await call(`${TOKEN}/`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8",
        Authorization: basic(client.clientId, client.clientSecret),
      },
      body: form({ grant_type: "client_credentials" }),
    });
    expect(response.headers.get("Location")).toBeNull();
    await expectToken(response, "read write");
  });

  it("gives a read-only client a read token by default", async () => {
    const client = await createClient("read");
    await expectToken(await requestToken(client), "read");
  });
});

describe("token endpoint: scope", () => {
  it("narrows to the requested scope; a read token is then refused writes", async () => {
    const client = await createClient();
    const { access_token } = await expectToken(await requestToken(client, { scope: "read" }), "read");
    await expectUsable(access_token);
    const write = await call("/v3.0/pinpoints", {
      method: "POST",
      headers: { Authorization: `Bearer ${access_token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "x", latitude: 1, longitude: 1 }),
    });
    expect(write.status).toBe(403);
    expect(write.headers.get("WWW-Authenticate")).toContain('error="insufficient_scope"');
    await write.body?.cancel();
  });

  it("answers scopes in canonical order whatever order they were asked in", async () => {
    const client = await createClient();
    await expectToken(await requestToken(client, { scope: "write  read" }), "read write");
  });

  it("treats an empty scope parameter as the client's scopes", async () => {
    const client = await createClient();
    await expectToken(await requestToken(client, { scope: "" }), "read write");
  });

  it("refuses an unknown scope with invalid_scope", async () => {
    const client = await createClient();
    await expectOAuthError(await requestToken(client, { scope: "read admin" }), 400, "invalid_scope");
  });

  it("refuses a scope the client was not granted", async () => {
    const client = await createClient("read");
    await expectOAuthError(await requestToken(client, { scope: "write" }), 400, "invalid_scope");
  });
});

describe("token endpoint: request errors", () => {
  it("refuses a form client_id that differs from the Basic one", async () => {
    const client = await createClient();
    const other = await createClient();
    await expectOAuthError(await requestToken(client, { client_id: other.clientId }), 400, "invalid_request");
  });

  it("refuses Basic credentials together with client_secret", async () => {
    const client = await createClient();
    await expectOAuthError(await requestToken(client, { client_secret: client.clientSecret }), 400, "invalid_request");
  });

  it("requires grant_type", async () => {
    const client = await createClient();
    const response = await post(form({ client_id: client.clientId }), {
      ...FORM,
      Authorization: basic(client.clientId, client.clientSecret),
    });
    await expectOAuthError(response, 400, "invalid_request");
  });

  it("refuses any grant other than client_credentials", async () => {
    const client = await createClient();
    for (const grant_type of ["password", "authorization_code", "refresh_token", "CLIENT_CREDENTIALS"]) {
      await expectOAuthError(await requestToken(client, { grant_type }), 400, "unsupported_grant_type");
    }
  });

  it("refuses a repeated parameter (RFC 6749 §3.1)", async () => {
    const client = await createClient();
    const body = "grant_type=client_credentials&grant_type=client_credentials";
    const response = await post(body, { ...FORM, Authorization: basic(client.clientId, client.clientSecret) });
    await expectOAuthError(response, 400, "invalid_request");
  });

  it("refuses a malformed Basic header with 400", async () => {
    const client = await createClient();
    for (const header of ["Basic !!!", `Basic ${btoa(client.clientId)}`, "Basic", `Basic ${btoa("%zz:secret")}`]) {
      const response = await post(form({ grant_type: "client_credentials" }), { ...FORM, Authorization: header });
      await expectOAuthError(response, 400, "invalid_request");
    }
  });

  it("refuses a body that is not a form", async () => {
    const client = await createClient();
    const auth = { Authorization: basic(client.clientId, client.clientSecret) };
    const json = await post(JSON.stringify({ grant_type: "client_credentials" }), {
      ...auth,
      "Content-Type": "application/json",
    });
    await expectOAuthError(json, 400, "invalid_request");
    const text = await post("grant_type=client_credentials", { ...auth, "Content-Type": "text/plain" });
    await expectOAuthError(text, 400, "invalid_request");
    const none = await post(null, auth);
    await expectOAuthError(none, 400, "invalid_request");
  });

  it("refuses an oversized form with invalid_request", async () => {
    const client = await createClient();
    const response = await post(form({ grant_type: "client_credentials", padding: "x".repeat(64 * 1024) }), {
      ...FORM,
      Authorization: basic(client.clientId, client.clientSecret),
    });
    await expectOAuthError(response, 400, "invalid_request");
  });

  it("answers GET with 405 and Allow", async () => {
    const response = await call(TOKEN);
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")?.split(", ")).toContain("POST");
    expect(response.headers.get("Allow")?.split(", ")).not.toContain("GET");
    expect(response.headers.get("Content-Type")).toBe("application/problem+json");
    await response.body?.cancel();
  });
});

describe("token endpoint: client authentication", () => {
  async function expectInvalidClient(response: Response): Promise<void> {
    await expectOAuthError(response, 401, "invalid_client");
    expect(response.headers.get("WWW-Authenticate")).toMatch(/^Basic realm="api"/);
  }

  it("refuses a wrong secret", async () => {
    const client = await createClient();
    await expectInvalidClient(await requestToken({ ...client, clientSecret: `${client.clientSecret}x` }));
  });

  it("refuses a wrong secret sent as a form field", async () => {
    const client = await createClient();
    const response = await post(
      form({ grant_type: "client_credentials", client_id: client.clientId, client_secret: "nope" }),
    );
    await expectInvalidClient(response);
  });

  it("refuses an unknown client", async () => {
    const client = await createClient();
    const unknown: TestClient = { ...client, clientId: "0".repeat(32) };
    await expectInvalidClient(await requestToken(unknown));
  });

  it("refuses a revoked client", async () => {
    const client = await createClient();
    await env.DB.prepare("UPDATE clients SET revoked_at = ? WHERE id = ?").bind(Date.now(), client.clientId).run();
    await expectInvalidClient(await requestToken(client));
  });

  it("refuses a request with no client authentication", async () => {
    const client = await createClient();
    await expectInvalidClient(await post(form({ grant_type: "client_credentials", client_id: client.clientId })));
  });

  it("says the same thing for an unknown client and a wrong secret", async () => {
    const client = await createClient();
    const wrong = await (await requestToken({ ...client, clientSecret: "wrong" })).json();
    const unknown = await (await requestToken({ ...client, clientId: "f".repeat(32) })).json();
    expect(wrong).toEqual(unknown);
  });
});
