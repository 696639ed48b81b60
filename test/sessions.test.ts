/**
 * Signed-in sessions (src/people/sessions.ts): fixation, rotation, the idle and absolute timeouts,
 * revocation and signing out (everywhere), CSRF defences on writes with the cookie, the bearer token minted
 * from a session, and /v3.0/me.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { app } from "../src/app";
import { clock } from "../src/core/clock";
import { issueResetTicket } from "../src/people/reset-tickets";
import {
  Browser,
  BASE,
  PASSWORD,
  addMember,
  call,
  createAccount,
  createList,
  expectProblem,
  personCaller,
  personWithPassword,
  signedIn,
} from "./helpers";

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** Moves the service's clock `ms` past the real one. */
function later(ms: number): void {
  const start = realNow();
  clock.now = () => start + ms;
}

const HOUR = 3600 * 1000;
const COOKIE = "__Host-poi_session";

/** A bearer token's request for the account's pinpoints. */
const listPinpoints = (token: string) => call("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${token}` } });

describe("every route that takes the session cookie", () => {
  const PUBLIC = new Set([
    "POST /v3.0/auth/sign-in",
    "POST /v3.0/auth/password-reset/:token{[A-Za-z0-9_-]{43}}",
    "POST /v3.0/auth/passkeys/sign-in/options",
    "POST /v3.0/auth/passkeys/sign-in",
  ]);
  const routes = [
    ...new Set(
      app.routes
        .filter(({ method, path }) => method !== "ALL" && /^\/v3\.0\/(auth|me)(\/|$)/.test(path))
        .map(({ method, path }) => `${method} ${path}`),
    ),
  ].filter((route) => !PUBLIC.has(route));

  it("is listed", () => {
    expect(routes).toEqual(
      expect.arrayContaining(["GET /v3.0/auth/session", "POST /v3.0/auth/token", "GET /v3.0/me", "PATCH /v3.0/me"]),
    );
  });

  it.each(routes)("%s answers 401 without a session, and with a cookie that names none", async (route) => {
    const [method, pattern] = route.split(" ") as [string, string];
    // 43 characters: a session's id, and a passkey's credential id of 32 bytes.
    const path = pattern.replace(/:\w+\{.*\}$/, "A".repeat(43));
    for (const cookie of [undefined, `${COOKIE}=${"x".repeat(43)}`]) {
      const response = await call(path, {
        method,
        headers: { ...(cookie ? { Cookie: cookie } : {}), "Content-Type": "application/json" },
        body: method === "GET" ? undefined : "{}",
      });
      await expectProblem(response, 401, { code: "unauthorized" });
    }
  });

  it("is in the OpenAPI document with the session cookie as its security", async () => {
    const document = await (await call("/v3.0/openapi.json")).json<Record<string, any>>();
    expect(document.components.securitySchemes.session).toMatchObject({ type: "apiKey", in: "cookie" });
    for (const route of routes) {
      const [method, pattern] = route.split(" ") as [string, string];
      const path = pattern.replace(/:(\w+)\{.*\}$/, "{$1}");
      const operation = document.paths[path]?.[method.toLowerCase()];
      expect(operation, route).toBeDefined();
      expect(operation.security, route).toEqual([{ session: [] }]);
      expect(operation.tags).toEqual(["people"]);
    }
    expect(document.paths["/v3.0/auth/sign-in"].post.security).toBeUndefined();
  });
});

describe("session fixation", () => {
  it("never makes a cookie set before sign-in the session after it", async () => {
    const { email } = await personWithPassword();
    const browser = new Browser();
    browser.cookies.set(COOKIE, "planted-by-someone-else-0000000000000000000");
    expect((await browser.signIn(email, PASSWORD)).status).toBe(200);
    const after = browser.cookies.get(COOKIE)!;
    expect(after).not.toBe("planted-by-someone-else-0000000000000000000");
    const planted = await call("/v3.0/auth/session", {
      headers: { Cookie: `${COOKIE}=planted-by-someone-else-0000000000000000000` },
    });
    await expectProblem(planted, 401);
  });

  it("ends a real session planted in the browser when someone signs in on it", async () => {
    const attacker = await signedIn();
    const victim = await personWithPassword();
    const browser = new Browser();
    const planted = attacker.browser.cookies.get(COOKIE)!;
    browser.cookies.set(COOKIE, planted);
    expect((await browser.signIn(victim.email, PASSWORD)).status).toBe(200);
    expect(browser.cookies.get(COOKIE)).not.toBe(planted);
    const session = await (await browser.get("/v3.0/auth/session")).json<{ person: { id: number } }>();
    expect(session.person.id).toBe(victim.personId);
    // The attacker's session, whose cookie was planted, is over: they learn nothing of the victim's.
    await expectProblem(await attacker.browser.get("/v3.0/auth/session"), 401);
  });
});

describe("rotation", () => {
  it("gives a new session, cookie and CSRF token when the account changes, and ends the one before", async () => {
    const { browser, personId, accountId } = await signedIn("editor");
    const second = await createAccount();
    await addMember(second, personId, "viewer");
    const before = { cookie: browser.cookies.get(COOKIE)!, csrf: browser.csrf! };
    const old = new Browser();
    old.cookies.set(COOKIE, before.cookie);

    const first = await browser.send("POST", "/v3.0/auth/token", { account: accountId });
    expect(first.status).toBe(200);
    const firstBody = await first.json<Record<string, unknown>>();
    expect(firstBody).toMatchObject({ token_type: "Bearer", expires_in: 300, scope: "read write", account: accountId });
    const afterFirst = browser.cookies.get(COOKIE)!;
    expect(afterFirst).not.toBe(before.cookie);
    expect(browser.csrf).not.toBe(before.csrf);
    await expectProblem(await old.get("/v3.0/auth/session"), 401);

    // The same account again: nothing changes, no rotation.
    expect((await browser.send("POST", "/v3.0/auth/token", {})).status).toBe(200);
    expect(browser.cookies.get(COOKIE)).toBe(afterFirst);

    const switched = await browser.send("POST", "/v3.0/auth/token", { account: second });
    expect(await switched.json()).toMatchObject({ scope: "read", account: second });
    expect(browser.cookies.get(COOKIE)).not.toBe(afterFirst);
    const session = await (await browser.get("/v3.0/auth/session")).json<Record<string, any>>();
    expect(session.session.account).toBe(second);
    // The absolute timeout still counts from the sign-in.
    const rows = await env.DB.prepare("SELECT created_at FROM sessions WHERE person_id = ? ORDER BY created_at")
      .bind(personId)
      .all<{ created_at: number }>();
    expect(new Set(rows.results.map((r) => r.created_at)).size).toBe(1);
  });

  it("refuses a token for an account the person is not in, and asks which account when there are several", async () => {
    const { browser, personId } = await signedIn("editor");
    const elsewhere = await createAccount();
    await expectProblem(await browser.send("POST", "/v3.0/auth/token", { account: elsewhere }), 403, {
      code: "forbidden",
    });
    await addMember(elsewhere, personId, "admin");
    await expectProblem(await browser.send("POST", "/v3.0/auth/token", {}), 400, { pointers: ["/account"] });
    expect((await browser.send("POST", "/v3.0/auth/token", { account: elsewhere })).status).toBe(200);
  });
});

describe("the bearer token from a session", () => {
  it("works for every /v3.0 operation as the person's role allows, and stops when the session ends", async () => {
    const { browser } = await signedIn("editor");
    const token = await browser.token();
    const created = await call("/v3.0/pinpoints", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Harbour", latitude: 1, longitude: 2 }),
    });
    expect(created.status).toBe(201);
    expect((await listPinpoints(token)).status).toBe(200);

    expect((await browser.send("POST", "/v3.0/auth/sign-out")).status).toBe(204);
    await expectProblem(await listPinpoints(token), 401, { code: "invalid_token" });
  });

  it("is read-only for a viewer", async () => {
    const { browser } = await signedIn("viewer");
    const response = await browser.send("POST", "/v3.0/auth/token", {});
    expect(await response.json()).toMatchObject({ scope: "read" });
  });

  it("works for a list collaborator in the list's account", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner, { name: "Shared" });
    const person = await personWithPassword();
    await env.DB.prepare(
      "INSERT INTO list_collaborators (account_id, list_id, person_id, role) VALUES (?, ?, ?, 'editor')",
    )
      .bind(owner.accountId, list.id, person.personId)
      .run();
    const browser = new Browser();
    const session = await (await browser.signIn(person.email, PASSWORD)).json<Record<string, any>>();
    expect(session.accounts).toEqual([{ id: owner.accountId, name: expect.any(String), role: null }]);
    const token = await browser.token();
    // The token stands (the shared categories read); which rows it reaches is the role table's to say.
    const read = await call("/v3.0/categories", { headers: { Authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
  });
});

describe("timeouts", () => {
  it("ends a session unused for 2 hours; a request moves the deadline on", async () => {
    const { browser, personId } = await signedIn();
    const deadline = async () =>
      (await env.DB.prepare("SELECT expires_at FROM sessions WHERE person_id = ? AND revoked_at IS NULL")
        .bind(personId)
        .first<{ expires_at: number }>())!.expires_at;
    later(2 * HOUR - 60_000);
    // Within the idle timeout; the request moves it on.
    expect((await browser.get("/v3.0/auth/session")).status).toBe(200);
    expect(await deadline()).toBe(clock.now() + 2 * HOUR);
    later(4 * HOUR - 120_000);
    expect((await browser.get("/v3.0/auth/session")).status).toBe(200);
    later(6 * HOUR);
    await expectProblem(await browser.get("/v3.0/auth/session"), 401, { code: "unauthorized" });
    expect(browser.cookies.has(COOKIE)).toBe(false);
  });

  it("ends a session 7 days after sign-in, however busy", async () => {
    const { browser } = await signedIn();
    for (let hours = 1; hours < 7 * 24; hours += 1.5) {
      later(hours * HOUR);
      const response = await browser.get("/v3.0/auth/session");
      expect(response.status, `after ${hours} hours`).toBe(200);
      await response.body?.cancel();
    }
    // A bearer token minted a minute before the end outlives its own expiry check, but not its session.
    later(7 * 24 * HOUR - 60_000);
    const token = await browser.token();
    expect((await listPinpoints(token)).status).toBe(200);
    later(7 * 24 * HOUR + 1000);
    await expectProblem(await listPinpoints(token), 401, { code: "invalid_token" });
    await expectProblem(await browser.get("/v3.0/auth/session"), 401, { code: "unauthorized" });
  });
});

describe("revocation", () => {
  it("lists the person's open sessions, and ends one by its id", async () => {
    const { browser, email } = await signedIn();
    const phone = new Browser();
    expect((await phone.signIn(email, PASSWORD)).status).toBe(200);
    const token = await phone.token();

    const listed = await (await browser.get("/v3.0/auth/sessions")).json<{ sessions: Record<string, any>[] }>();
    expect(listed.sessions).toHaveLength(2);
    expect(listed.sessions.filter((s) => s.current)).toHaveLength(1);
    const phoneId = listed.sessions.find((s) => !s.current)!.id;

    expect((await browser.send("DELETE", `/v3.0/auth/sessions/${phoneId}`)).status).toBe(204);
    await expectProblem(await phone.get("/v3.0/auth/session"), 401);
    await expectProblem(await listPinpoints(token), 401, { code: "invalid_token" });
    await expectProblem(await browser.send("DELETE", `/v3.0/auth/sessions/${phoneId}`), 404, { code: "not_found" });
    expect((await browser.get("/v3.0/auth/session")).status).toBe(200);
  });

  it("does not end another person's session", async () => {
    const { browser } = await signedIn();
    const other = await signedIn();
    const theirs = await (await other.browser.get("/v3.0/auth/session")).json<{ session: { id: string } }>();
    await expectProblem(await browser.send("DELETE", `/v3.0/auth/sessions/${theirs.session.id}`), 404);
    expect((await other.browser.get("/v3.0/auth/session")).status).toBe(200);
  });

  it("signs out: the session ends and its cookie goes", async () => {
    const { browser } = await signedIn();
    const response = await browser.send("POST", "/v3.0/auth/sign-out");
    expect(response.status).toBe(204);
    expect(response.headers.getSetCookie().some((l) => l.startsWith(`${COOKIE}=;`) && /Max-Age=0/.test(l))).toBe(true);
    expect(browser.cookies.has(COOKIE)).toBe(false);
  });

  it("signs out everywhere: every session of the person ends, others' stay", async () => {
    const { browser, email } = await signedIn();
    const browsers = [browser];
    for (let i = 0; i < 3; i++) {
      const another = new Browser();
      expect((await another.signIn(email, PASSWORD)).status).toBe(200);
      browsers.push(another);
    }
    const bystander = await signedIn();
    expect((await browsers[2]!.send("POST", "/v3.0/auth/sign-out-everywhere")).status).toBe(204);
    for (const each of browsers) await expectProblem(await each.get("/v3.0/auth/session"), 401);
    expect((await bystander.browser.get("/v3.0/auth/session")).status).toBe(200);
  });
});

describe("CSRF", () => {
  it("refuses a write with the cookie from another site, from another origin, or without the token", async () => {
    const { browser } = await signedIn();
    // The session acts in the account from now on, so the token requests below do not rotate it.
    await browser.token();
    await expectProblem(await browser.send("POST", "/v3.0/auth/token", {}, { "Sec-Fetch-Site": "cross-site" }), 403, {
      code: "csrf_failed",
    });
    await expectProblem(await browser.send("POST", "/v3.0/auth/token", {}, { "Sec-Fetch-Site": "same-site" }), 403, {
      code: "csrf_failed",
    });
    // A browser without Fetch Metadata: its Origin decides.
    const cookie = `${COOKIE}=${browser.cookies.get(COOKIE)}`;
    const withoutMetadata = (headers: Record<string, string>) =>
      call("/v3.0/auth/token", {
        method: "POST",
        headers: { Cookie: cookie, "Content-Type": "application/json", "X-CSRF-Token": browser.csrf!, ...headers },
        body: "{}",
      });
    await expectProblem(await withoutMetadata({ Origin: "https://evil.example" }), 403, { code: "csrf_failed" });
    await expectProblem(await withoutMetadata({ Origin: "null" }), 403, { code: "csrf_failed" });
    expect((await withoutMetadata({ Origin: BASE })).status).toBe(200);
    // Same origin, but no token, or another session's.
    const other = await signedIn();
    await expectProblem(await browser.send("POST", "/v3.0/auth/token", {}, { "X-CSRF-Token": "" }), 403, {
      code: "csrf_failed",
    });
    await expectProblem(
      await browser.send("POST", "/v3.0/auth/token", {}, { "X-CSRF-Token": other.browser.csrf! }),
      403,
      { code: "csrf_failed" },
    );
    // And so for every write: the name stays.
    await expectProblem(
      await browser.send("PATCH", "/v3.0/me", { name: "Mallory" }, { "Sec-Fetch-Site": "cross-site" }),
      403,
    );
    await expectProblem(
      await browser.send("POST", "/v3.0/auth/sign-out-everywhere", undefined, { "X-CSRF-Token": "x" }),
      403,
    );
    expect((await browser.get("/v3.0/auth/session")).status).toBe(200);
  });

  it("accepts a same-origin write with the token, and needs none on reads or with a bearer token", async () => {
    const { browser } = await signedIn();
    expect((await browser.send("PATCH", "/v3.0/me", { name: "Ana Lima" })).status).toBe(200);
    expect((await browser.get("/v3.0/me", { "Sec-Fetch-Site": "cross-site" })).status).toBe(200);
    const token = await browser.token();
    const created = await call("/v3.0/lists", {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        "Sec-Fetch-Site": "cross-site",
        Origin: "https://editor.example",
      },
      body: JSON.stringify({ name: "From the app" }),
    });
    expect(created.status).toBe(201);
  });
});

describe("/v3.0/me", () => {
  it("shows the person, their accounts with roles, their lists, passkeys and TOTP, and changes the name", async () => {
    const { browser, personId, accountId, email } = await signedIn("contributor");
    await env.DB.prepare(
      "INSERT INTO list_collaborators (account_id, list_id, person_id, role) VALUES (?, 77, ?, 'viewer')",
    )
      .bind(accountId, personId)
      .run();
    const me = await (await browser.get("/v3.0/me")).json<Record<string, unknown>>();
    expect(me).toEqual({
      id: personId,
      email,
      name: expect.any(String),
      created_at: expect.any(String),
      password: true,
      totp: false,
      passkeys: 0,
      accounts: [{ id: accountId, name: expect.any(String), role: "contributor" }],
      collaborations: [{ account: accountId, list: 77, role: "viewer" }],
    });
    const renamed = await browser.send("PATCH", "/v3.0/me", { name: "  Ana Lima  " });
    expect(await renamed.json()).toMatchObject({ name: "Ana Lima" });
    expect((await (await browser.get("/v3.0/me")).json<{ name: string }>()).name).toBe("Ana Lima");

    await expectProblem(await browser.send("PATCH", "/v3.0/me", { name: "   " }), 400, { pointers: ["/name"] });
    await expectProblem(await browser.send("PATCH", "/v3.0/me", { name: "Ana\nLima" }), 400, { pointers: ["/name"] });
    await expectProblem(await browser.send("PATCH", "/v3.0/me", { name: "x".repeat(101) }), 400, {
      pointers: ["/name"],
    });
    await expectProblem(await browser.send("PATCH", "/v3.0/me", {}), 400, { pointers: ["/name"] });
  });
});

describe("the examples of the people operations in the OpenAPI document", () => {
  it("are requests the service accepts; those with a code are well-formed, and only not the current code", async () => {
    const document = await (await call("/v3.0/openapi.json")).json<Record<string, any>>();
    const example = (method: string, path: string) =>
      document.paths[path][method].requestBody.content["application/json"].example;
    const signIn = example("post", "/v3.0/auth/sign-in");
    const person = await personWithPassword(signIn.password, signIn.email);
    await addMember(await createAccount(), person.personId, "editor");
    const browser = new Browser();
    expect((await browser.send("POST", "/v3.0/auth/sign-in", signIn)).status).toBe(200);
    expect((await browser.send("POST", "/v3.0/auth/token", example("post", "/v3.0/auth/token"))).status).toBe(200);
    expect((await browser.send("PATCH", "/v3.0/me", example("patch", "/v3.0/me"))).status).toBe(200);
    expect((await browser.send("PUT", "/v3.0/auth/password", example("put", "/v3.0/auth/password"))).status).toBe(200);
    const link = await issueResetTicket(env.DB, person.personId);
    const reset = example("post", "/v3.0/auth/password-reset/{token}");
    expect((await new Browser().send("POST", `/v3.0/auth/password-reset/${link}`, reset)).status).toBe(204);

    const other = await signedIn();
    // Valid bodies, refused only for what they are sent to: no second factor awaited, TOTP off.
    await expectProblem(
      await other.browser.send("POST", "/v3.0/auth/second-factor", example("post", "/v3.0/auth/second-factor")),
      409,
      { code: "conflict" },
    );
    await expectProblem(
      await other.browser.send("DELETE", "/v3.0/auth/totp", example("delete", "/v3.0/auth/totp")),
      409,
      {
        code: "conflict",
      },
    );
    expect((await other.browser.send("POST", "/v3.0/auth/totp")).status).toBe(200);
    await expectProblem(
      await other.browser.send("POST", "/v3.0/auth/totp/confirm", example("post", "/v3.0/auth/totp/confirm")),
      400,
      { code: "invalid_credentials" },
    );
  });
});
