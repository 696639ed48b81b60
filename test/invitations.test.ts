/**
 * Invitations: made by an admin (validated, the owner rule, only the link's hash stored, mailed where
 * email is set up), listed with their status, revoked, and accepted once: by the person the email names,
 * signed in with the session cookie, or by a new person, never after expiry (the test clock), reuse or
 * revocation, and once only however many requests race with one link.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { hashSecret } from "../src/core/secrets";
import {
  addMember,
  allItems,
  BASE,
  Browser,
  call,
  caller,
  createList,
  createPerson,
  expectProblem,
  fetchWith,
  json,
  membersOf,
  personCaller,
  personWithPassword,
  storedRole,
  type PersonCaller,
} from "./helpers";

type Invitation = {
  id: number;
  email: string;
  role: string;
  list: number | null;
  status: string;
  invited_by: { type: string; id: number; name: string | null };
  expires_at: string;
  accepted_at: string | null;
  accepted_by: number | null;
  revoked_at: string | null;
  created_at: string;
};
type Created = Invitation & { token: string; link: string; mailed: boolean };
type Accepted = {
  account: { id: number; name: string };
  role: string;
  list: number | null;
  person: { id: number; name: string; email: string };
  person_created: boolean;
};

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

const DAY = 24 * 3600 * 1000;
const PASSWORD = "correct horse battery staple";
const freshEmail = () => `invitee-${crypto.randomUUID()}@example.test`;

async function invite(who: PersonCaller, body: Record<string, unknown>): Promise<Created> {
  const response = await who.send("POST", "/v3.0/invitations", body);
  expect(response.status, await response.clone().text()).toBe(201);
  return json<Created>(response);
}

/** A person with `email`, in no account yet, signed in on a browser of their own. */
async function signedInAs(email: string): Promise<{ personId: number; browser: Browser }> {
  const { personId } = await personWithPassword(PASSWORD, email);
  const browser = new Browser();
  const response = await browser.signIn(email, PASSWORD);
  expect(response.status, await response.clone().text()).toBe(200);
  return { personId, browser };
}

/** Accepting as a signed-in browser does: with the session cookie and its CSRF token. */
function acceptSignedIn(
  browser: Browser,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return browser.send("POST", "/v3.0/invitations/accept", body, headers);
}

function accept(
  body: Record<string, unknown>,
  token?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return call("/v3.0/invitations/accept", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

async function invitationRow(id: number) {
  return env.DB.prepare("SELECT * FROM invitations WHERE id = ?").bind(id).first<Record<string, unknown>>();
}

describe("POST /v3.0/invitations", () => {
  it("answers the single-use link once, storing only its hash, for 7 days by default", async () => {
    const admin = await personCaller("admin");
    const before = Date.now();
    const response = await admin.send("POST", "/v3.0/invitations", { email: " Ada@Example.org ", role: "editor" });
    expect(response.status).toBe(201);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const made = await json<Created>(response);
    expect(made).toMatchObject({
      email: "Ada@Example.org",
      role: "editor",
      list: null,
      status: "pending",
      mailed: false,
      invited_by: { type: "person", id: admin.personId, name: expect.any(String) },
      accepted_at: null,
      revoked_at: null,
    });
    expect(made.link).toBe(`${BASE}/invitations/accept?token=${made.token}`);
    expect(made.token.length).toBeGreaterThanOrEqual(43);
    const expires = Date.parse(made.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 7 * DAY);
    expect(expires).toBeLessThanOrEqual(Date.now() + 7 * DAY);

    const row = await invitationRow(made.id);
    expect(row).toMatchObject({
      account_id: admin.accountId,
      email_key: "ada@example.org",
      token_hash: await hashSecret(made.token),
    });
    expect(JSON.stringify(row)).not.toContain(made.token);
  });

  it("takes expires_in from an hour to 30 days", async () => {
    const owner = await personCaller("owner");
    const hour = await invite(owner, { email: freshEmail(), role: "viewer", expires_in: 3600 });
    expect(Date.parse(hour.expires_at) - Date.parse(hour.created_at)).toBe(3600 * 1000);
    const month = await invite(owner, { email: freshEmail(), role: "viewer", expires_in: 30 * 24 * 3600 });
    expect(Date.parse(month.expires_at) - Date.parse(month.created_at)).toBe(30 * DAY);
    for (const expires_in of [3599, 30 * 24 * 3600 + 1, 3600.5, "3600", 0, -1]) {
      await expectProblem(
        await owner.send("POST", "/v3.0/invitations", { email: freshEmail(), role: "viewer", expires_in }),
        400,
        { pointers: ["/expires_in"] },
      );
    }
  });

  it("validates the email, the role and the list, and writes nothing for a bad request", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const stranger = await personCaller("owner");
    const theirs = await createList(stranger);
    const cases: [Record<string, unknown>, string[]][] = [
      [{ role: "editor" }, ["/email"]],
      [{ email: "not an address", role: "editor" }, ["/email"]],
      [{ email: `${"x".repeat(250)}@example.test`, role: "editor" }, ["/email"]],
      [{ email: freshEmail() }, ["/role"]],
      [{ email: freshEmail(), role: "superuser" }, ["/role"]],
      [{ email: freshEmail(), role: "admin", list: list.id }, ["/role"]],
      [{ email: freshEmail(), role: "editor", list: theirs.id }, ["/list"]],
      [{ email: freshEmail(), role: "editor", list: 987654321 }, ["/list"]],
      [{ email: freshEmail(), role: "editor", list: "1" }, ["/list"]],
    ];
    for (const [body, pointers] of cases) {
      await expectProblem(await owner.send("POST", "/v3.0/invitations", body), 400, { pointers });
    }
    const { results } = await env.DB.prepare("SELECT 1 FROM invitations WHERE account_id = ?")
      .bind(owner.accountId)
      .all();
    expect(results).toHaveLength(0);
  });

  it("lets only an owner invite an owner", async () => {
    const owner = await personCaller("owner");
    const [admin] = await membersOf(owner.accountId, "admin", 1);
    await expectProblem(await admin!.send("POST", "/v3.0/invitations", { email: freshEmail(), role: "owner" }), 403, {
      code: "owner_required",
    });
    expect((await invite(owner, { email: freshEmail(), role: "owner" })).role).toBe("owner");
  });

  it("refuses someone who has the access already (409), whatever the case of the address", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const email = freshEmail();
    const person = await createPerson(email);
    await personCaller("viewer", { accountId: owner.accountId, person });
    await expectProblem(
      await owner.send("POST", "/v3.0/invitations", { email: email.toUpperCase(), role: "admin" }),
      409,
      { code: "already_member" },
    );
    await owner.send("PUT", `/v3.0/lists/${list.id}/collaborators/${person.personId}`, { role: "viewer" });
    await expectProblem(await owner.send("POST", "/v3.0/invitations", { email, role: "editor", list: list.id }), 409, {
      code: "already_member",
    });
    // To another list of the account, they may be invited.
    const other = await createList(owner);
    expect((await invite(owner, { email, role: "editor", list: other.id })).list).toBe(other.id);
  });

  it("links to PUBLIC_ORIGIN when the operator set it", async () => {
    const owner = await personCaller("owner");
    const response = await fetchWith({ PUBLIC_ORIGIN: "https://api.example.com" }, "/v3.0/invitations", {
      method: "POST",
      headers: { Authorization: `Bearer ${owner.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ email: freshEmail(), role: "viewer" }),
    });
    const made = await json<Created>(response);
    expect(made.link).toBe(`https://api.example.com/invitations/accept?token=${made.token}`);
  });

  it("mails the link where an EMAIL binding and EMAIL_FROM are set, and not otherwise", async () => {
    const owner = await personCaller("owner");
    const sent: Record<string, unknown>[] = [];
    const recorder = { send: async (message: Record<string, unknown>) => void sent.push(message) };
    const post = (bindings: Record<string, unknown>, email: string) =>
      fetchWith(bindings, "/v3.0/invitations", {
        method: "POST",
        headers: { Authorization: `Bearer ${owner.token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ email, role: "editor" }),
      }).then((r) => json<Created>(r));

    const email = freshEmail();
    const mailed = await post({ EMAIL: recorder, EMAIL_FROM: "invites@example.test" }, email);
    expect(mailed.mailed).toBe(true);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ from: "invites@example.test", to: email });
    expect(String(sent[0]!.subject)).toContain("invited");
    expect(String(sent[0]!.text)).toContain(mailed.link);

    expect((await post({ EMAIL: recorder, EMAIL_FROM: "" }, freshEmail())).mailed).toBe(false);
    expect((await post({ EMAIL: recorder, EMAIL_FROM: "Invites <invites@example.test>" }, freshEmail())).mailed).toBe(
      false,
    );
    expect((await post({ EMAIL_FROM: "invites@example.test" }, freshEmail())).mailed).toBe(false);
    expect(sent).toHaveLength(1);
    const failing = { send: async () => Promise.reject(new Error("destination not verified")) };
    const unsent = await post({ EMAIL: failing, EMAIL_FROM: "invites@example.test" }, freshEmail());
    expect(unsent).toMatchObject({ mailed: false, status: "pending" });
  });

  it("is refused to a client and to members who do not administer the account", async () => {
    const client = await caller();
    await expectProblem(await client.send("POST", "/v3.0/invitations", { email: freshEmail(), role: "viewer" }), 403);
    const owner = await personCaller("owner");
    const [editor] = await membersOf(owner.accountId, "editor", 1);
    await expectProblem(await editor!.send("POST", "/v3.0/invitations", { email: freshEmail(), role: "viewer" }), 403);
    await expectProblem(await editor!.get("/v3.0/invitations"), 403);
  });
});

describe("GET /v3.0/invitations", () => {
  it("pages through the account's invitations with their status, never a link", async () => {
    const owner = await personCaller("owner");
    const made: Created[] = [];
    for (let i = 0; i < 5; i++) made.push(await invite(owner, { email: freshEmail(), role: "viewer" }));
    await invite(await personCaller("owner"), { email: freshEmail(), role: "viewer" });
    expect((await owner.send("DELETE", `/v3.0/invitations/${made[1]!.id}`)).status).toBe(204);
    expect((await accept({ token: made[2]!.token, name: "Grace", password: PASSWORD })).status).toBe(200);
    await env.DB.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, made[3]!.id)
      .run();

    const listed = await allItems<Invitation>(owner, "/v3.0/invitations", 2);
    expect(listed.map((i) => [i.id, i.status])).toEqual([
      [made[0]!.id, "pending"],
      [made[1]!.id, "revoked"],
      [made[2]!.id, "accepted"],
      [made[3]!.id, "expired"],
      [made[4]!.id, "pending"],
    ]);
    expect(listed[2]!.accepted_by).toEqual(expect.any(Number));
    const text = JSON.stringify(listed);
    for (const { token } of made) expect(text).not.toContain(token);
  });
});

describe("DELETE /v3.0/invitations/{id}", () => {
  it("revokes: its link is refused; again, it changes nothing", async () => {
    const admin = await personCaller("admin");
    const made = await invite(admin, { email: freshEmail(), role: "editor" });
    expect((await admin.send("DELETE", `/v3.0/invitations/${made.id}`)).status).toBe(204);
    const revokedAt = (await invitationRow(made.id))!.revoked_at;
    expect(revokedAt).toEqual(expect.any(Number));
    await expectProblem(await accept({ token: made.token, name: "Eve", password: PASSWORD }), 410, {
      code: "invitation_revoked",
    });
    expect((await admin.send("DELETE", `/v3.0/invitations/${made.id}`)).status).toBe(204);
    expect((await invitationRow(made.id))!.revoked_at).toBe(revokedAt);
  });

  it("answers 404 for another account's invitation and leaves it pending; 409 for an accepted one", async () => {
    const owner = await personCaller("owner");
    const stranger = await personCaller("owner");
    const theirs = await invite(stranger, { email: freshEmail(), role: "viewer" });
    await expectProblem(await owner.send("DELETE", `/v3.0/invitations/${theirs.id}`), 404);
    await expectProblem(await owner.send("DELETE", "/v3.0/invitations/987654321"), 404);
    expect((await invitationRow(theirs.id))!.revoked_at).toBeNull();

    const mine = await invite(owner, { email: freshEmail(), role: "viewer" });
    expect((await accept({ token: mine.token, name: "Alan", password: PASSWORD })).status).toBe(200);
    await expectProblem(await owner.send("DELETE", `/v3.0/invitations/${mine.id}`), 409, { code: "conflict" });
  });
});

describe("POST /v3.0/invitations/accept, signed in", () => {
  it("makes the person the invitation names a member, whatever the case of the address", async () => {
    const admin = await personCaller("admin");
    const email = freshEmail();
    const person = await signedInAs(email.toUpperCase());
    const made = await invite(admin, { email, role: "editor" });

    const response = await acceptSignedIn(person.browser, { token: made.token });
    expect(response.status).toBe(200);
    expect(await json<Accepted>(response)).toMatchObject({
      account: { id: admin.accountId },
      role: "editor",
      list: null,
      person: { id: person.personId, email: email.toUpperCase() },
      person_created: false,
    });
    expect(await storedRole(admin.accountId, person.personId)).toBe("editor");
    expect((await invitationRow(made.id))!.accepted_by).toBe(person.personId);
    // The session's token for the account works from now on.
    const token = await person.browser.token(admin.accountId);
    expect((await call("/v3.0/lists", { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it("refuses the person another address names (403), and leaves the invitation pending", async () => {
    const owner = await personCaller("owner");
    const made = await invite(owner, { email: freshEmail(), role: "viewer" });
    const someoneElse = await signedInAs(freshEmail());
    await expectProblem(await acceptSignedIn(someoneElse.browser, { token: made.token }), 403, {
      code: "invitation_email_mismatch",
    });
    expect((await invitationRow(made.id))!.accepted_at).toBeNull();
    expect(await storedRole(owner.accountId, someoneElse.personId)).toBeNull();
  });

  it("works once: reuse is 410, however many accept at once", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const person = await signedInAs(email);
    const made = await invite(owner, { email, role: "contributor" });
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => acceptSignedIn(person.browser, { token: made.token })),
    );
    const statuses = responses.map((r) => r.status).sort();
    const codes = await Promise.all(responses.filter((r) => r.status === 410).map((r) => json<{ type: string }>(r)));
    await Promise.all(responses.filter((r) => r.status !== 410).map((r) => r.body?.cancel()));
    expect(statuses).toEqual([200, ...Array(9).fill(410)]);
    expect(new Set(codes.map((c) => c.type))).toEqual(new Set(["urn:poi-api:problem:invitation_used"]));
    expect(await storedRole(owner.accountId, person.personId)).toBe("contributor");

    await expectProblem(await acceptSignedIn(person.browser, { token: made.token }), 410, { code: "invitation_used" });
  });

  it("keeps the role of someone who became a member meanwhile", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const person = await signedInAs(email);
    const made = await invite(owner, { email, role: "admin" });
    await addMember(owner.accountId, person.personId, "viewer");
    const accepted = await json<Accepted>(await acceptSignedIn(person.browser, { token: made.token }));
    expect(accepted.role).toBe("viewer");
    expect(await storedRole(owner.accountId, person.personId)).toBe("viewer");
  });

  it("refuses an expired invitation", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const person = await signedInAs(email);
    const made = await invite(owner, { email, role: "viewer" });
    await env.DB.prepare("UPDATE invitations SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, made.id)
      .run();
    await expectProblem(await acceptSignedIn(person.browser, { token: made.token }), 410, {
      code: "invitation_expired",
    });
    expect(await storedRole(owner.accountId, person.personId)).toBeNull();
  });

  it("takes the session cookie, never a token; refuses a write without its CSRF token and an ended session", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const made = await invite(owner, { email, role: "viewer" });
    const person = await signedInAs(email);
    // A bearer token signs no one in here: the request is a signed-out one, for an address someone has.
    const client = await caller();
    await expectProblem(await accept({ token: made.token }, client.token), 409, { code: "sign_in_to_accept" });
    await expectProblem(
      await acceptSignedIn(person.browser, { token: made.token }, { "X-CSRF-Token": "not-this-sessions" }),
      403,
      { code: "csrf_failed" },
    );
    await env.DB.prepare("UPDATE sessions SET revoked_at = ? WHERE person_id = ?")
      .bind(Date.now(), person.personId)
      .run();
    await expectProblem(await acceptSignedIn(person.browser, { token: made.token }), 401, { code: "unauthorized" });
    // The ended session's cookie is gone: what the browser sends next is a signed-out request.
    await expectProblem(await acceptSignedIn(person.browser, { token: made.token }), 409, {
      code: "sign_in_to_accept",
    });
    expect((await invitationRow(made.id))!.accepted_at).toBeNull();
  });
});

describe("POST /v3.0/invitations/accept, not signed in", () => {
  it("makes the person, with their password stored as every password is, and a member who signs in", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const made = await invite(owner, { email, role: "editor" });
    const response = await accept({ token: made.token, name: " Ada Lovelace ", password: PASSWORD });
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const accepted = await json<Accepted>(response);
    expect(accepted).toMatchObject({ role: "editor", person: { name: "Ada Lovelace", email }, person_created: true });
    const person = await env.DB.prepare("SELECT * FROM people WHERE id = ?")
      .bind(accepted.person.id)
      .first<Record<string, unknown>>();
    expect(person).toMatchObject({ email, email_key: email.toLowerCase(), name: "Ada Lovelace" });
    expect(String(person!.password_hash)).toMatch(/^\$pbkdf2-sha256\$i=100000\$/);
    expect(String(person!.password_hash)).not.toContain(PASSWORD);
    expect(await storedRole(owner.accountId, accepted.person.id)).toBe("editor");
    // The hash is src/people/passwords.ts's: the new person signs in with the password they chose.
    expect((await new Browser().signIn(email, PASSWORD)).status).toBe(200);
  });

  it("needs a name and a password the password policy accepts", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const made = await invite(owner, { email, role: "viewer" });
    await expectProblem(await accept({ token: made.token }), 400, { pointers: ["/name", "/password"] });
    await expectProblem(await accept({ token: made.token, name: "Ada" }), 400, { pointers: ["/password"] });
    await expectProblem(await accept({ token: made.token, name: "Ada", password: "eleven char" }), 400, {
      pointers: ["/password"],
    });
    await expectProblem(await accept({ token: made.token, name: "Ada", password: "x".repeat(129) }), 400, {
      pointers: ["/password"],
    });
    for (const password of ["password12345", "aaaaaaaaaaaaaa", email]) {
      await expectProblem(await accept({ token: made.token, name: "Ada", password }), 400, { pointers: ["/password"] });
    }
    await expectProblem(await accept({ token: made.token, name: "", password: PASSWORD }), 400, {
      pointers: ["/name"],
    });
    await expectProblem(await accept({}), 400, { pointers: ["/token"] });
    // Twelve characters, counted as people count them (an emoji is one).
    expect((await accept({ token: made.token, name: "Ada", password: "🔑🌍🚲🏠🎈🍎🐟🌵🎸📚🧭🐙" })).status).toBe(200);
    const { results } = await env.DB.prepare("SELECT 1 FROM people WHERE email_key = ?").bind(email).all();
    expect(results).toHaveLength(1);
  });

  it("is refused from another site's page, as a signed-in browser's is, and makes no one", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const made = await invite(owner, { email, role: "editor" });
    const body = { token: made.token, name: "Ada", password: PASSWORD };
    const foreign: Record<string, string>[] = [
      { "Sec-Fetch-Site": "cross-site" },
      { Origin: "https://attacker.example" },
    ];
    for (const headers of foreign) {
      await expectProblem(await accept(body, undefined, headers), 403, { code: "csrf_failed" });
    }
    expect((await invitationRow(made.id))!.accepted_at).toBeNull();
    expect(await env.DB.prepare("SELECT 1 FROM people WHERE email_key = ?").bind(email).first()).toBeNull();
    // From this service's own page, it goes through.
    expect((await accept(body, undefined, { "Sec-Fetch-Site": "same-origin" })).status).toBe(200);
  });

  it("asks someone whose address is taken to sign in (409), and makes no one", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    await createPerson(email.toUpperCase());
    const made = await invite(owner, { email, role: "viewer" });
    await expectProblem(await accept({ token: made.token, name: "Ada", password: PASSWORD }), 409, {
      code: "sign_in_to_accept",
    });
    expect((await invitationRow(made.id))!.accepted_at).toBeNull();
  });

  it("refuses an unknown token (404) and an expired invitation, by the test clock", async () => {
    const owner = await personCaller("owner");
    await expectProblem(await accept({ token: "no-such-token", name: "Ada", password: PASSWORD }), 404);
    const made = await invite(owner, { email: freshEmail(), role: "viewer", expires_in: 3600 });
    const expires = Date.parse(made.expires_at);
    clock.now = () => expires;
    await expectProblem(await accept({ token: made.token, name: "Ada", password: PASSWORD }), 410, {
      code: "invitation_expired",
    });
    clock.now = () => expires - 1;
    expect((await accept({ token: made.token, name: "Ada", password: PASSWORD })).status).toBe(200);
  });

  it("makes one person and one member however many accept at once", async () => {
    const owner = await personCaller("owner");
    const email = freshEmail();
    const made = await invite(owner, { email, role: "viewer" });
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => accept({ token: made.token, name: `Racer ${i}`, password: PASSWORD })),
    );
    const statuses = responses.map((r) => r.status).sort();
    await Promise.all(responses.map((r) => r.body?.cancel()));
    // The losers see it accepted (410), or, having checked before the winner made the person, taken (409).
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(
      statuses.every((s) => s === 200 || s === 410 || s === 409),
      statuses.join(","),
    ).toBe(true);
    const people = await env.DB.prepare("SELECT id FROM people WHERE email_key = ?").bind(email).all<{ id: number }>();
    expect(people.results).toHaveLength(1);
    const members = await env.DB.prepare("SELECT person_id FROM members WHERE account_id = ? AND role = 'viewer'")
      .bind(owner.accountId)
      .all<{ person_id: number }>();
    expect(members.results).toEqual([{ person_id: people.results[0]!.id }]);
  });
});

describe("an invitation to a list", () => {
  it("makes a collaborator on the list, not a member of the account", async () => {
    const admin = await personCaller("admin");
    const list = await createList(admin);
    const email = freshEmail();
    const made = await invite(admin, { email, role: "viewer", list: list.id });
    expect(made).toMatchObject({ list: list.id, role: "viewer" });
    const accepted = await json<Accepted>(await accept({ token: made.token, name: "Lin", password: PASSWORD }));
    expect(accepted).toMatchObject({ list: list.id, role: "viewer" });
    expect(await storedRole(admin.accountId, accepted.person.id)).toBeNull();
    const collaborators = await allItems<{ id: number; role: string }>(
      admin,
      `/v3.0/lists/${list.id}/collaborators`,
      5,
    );
    expect(collaborators).toEqual([expect.objectContaining({ id: accepted.person.id, role: "viewer" })]);
  });

  it("is revoked with its list", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const made = await invite(owner, { email: freshEmail(), role: "editor", list: list.id });
    expect((await owner.send("DELETE", `/v3.0/lists/${list.id}`)).status).toBe(204);
    await expectProblem(await accept({ token: made.token, name: "Lin", password: PASSWORD }), 410, {
      code: "invitation_revoked",
    });
  });
});

it("accepting needs no token, and is no page of an account (405 for another method)", async () => {
  const response = await call("/v3.0/invitations/accept");
  expect(response.status).toBe(405);
  expect(response.headers.get("Allow")).toContain("POST");
  await response.body?.cancel();
  await expectProblem(await accept({ token: "unknown" }), 404);
});
