/**
 * /v3.0/members with people's tokens: pages checked against the directory, roles changed and members
 * removed with the owner rules, the last owner kept under many parallel requests, ownership transferred,
 * and a removed or lowered member's token acting as such at their very next request.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  allItems,
  caller,
  createList,
  createPerson,
  expectProblem,
  json,
  membersOf,
  personCaller,
  storedRole,
} from "./helpers";

type Member = { id: number; name: string; email: string; role: string; created_at: string; updated_at: string };

const NEW_PLACE = { name: "Harbour", latitude: 1, longitude: 2 };

async function version(accountId: number, personId: number): Promise<number> {
  const row = await env.DB.prepare("SELECT version FROM members WHERE account_id = ? AND person_id = ?")
    .bind(accountId, personId)
    .first<{ version: number }>();
  return row!.version;
}

describe("GET /v3.0/members", () => {
  it("pages through the account's members by person id, as the directory holds them", async () => {
    const owner = await personCaller("owner");
    await membersOf(owner.accountId, "editor", 4);
    await membersOf(owner.accountId, "viewer", 3);
    // Someone else's account and a list collaborator are not members of this one.
    await personCaller("admin");
    const list = await createList(owner);
    await personCaller(null, { accountId: owner.accountId, lists: [[list.id, "editor"]] });

    const listed = await allItems<Member>(owner, "/v3.0/members", 3);
    const { results: stored } = await env.DB.prepare(
      `SELECT p.id, p.name, p.email, m.role FROM members m JOIN people p ON p.id = m.person_id
       WHERE m.account_id = ? ORDER BY p.id`,
    )
      .bind(owner.accountId)
      .all<{ id: number; name: string; email: string; role: string }>();
    expect(stored).toHaveLength(8);
    expect(listed.map(({ id, name, email, role }) => ({ id, name, email, role }))).toEqual(stored);
    for (const member of listed) expect(Date.parse(member.created_at)).toBeGreaterThan(0);
  });

  it("is readable by every member, viewers included", async () => {
    const owner = await personCaller("owner");
    const [viewer] = await membersOf(owner.accountId, "viewer", 1);
    const page = await json<{ results: Member[] }>(await viewer!.get("/v3.0/members"));
    expect(page.results.map((m) => m.id).sort()).toEqual([owner.personId, viewer!.personId].sort());
  });

  it("refuses a client's token and a bad limit", async () => {
    const client = await caller();
    await expectProblem(await client.get("/v3.0/members"), 403);
    const owner = await personCaller("owner");
    await expectProblem(await owner.get("/v3.0/members?limit=-1"), 400, { pointers: ["limit"] });
  });
});

describe("PATCH /v3.0/members/{person_id}", () => {
  it("changes a role, bumps the member's version, and the member acts with it at their next request", async () => {
    const owner = await personCaller("owner");
    const [member] = await membersOf(owner.accountId, "viewer", 1);
    const before = await version(owner.accountId, member!.personId);
    await expectProblem(await member!.send("POST", "/v3.0/pinpoints", NEW_PLACE), 403);

    const raised = await owner.send("PATCH", `/v3.0/members/${member!.personId}`, { role: "editor" });
    expect(raised.status).toBe(200);
    expect(await json<Member>(raised)).toMatchObject({ id: member!.personId, role: "editor" });
    expect(await version(owner.accountId, member!.personId)).toBe(before + 1);
    expect((await member!.send("POST", "/v3.0/pinpoints", NEW_PLACE)).status).toBe(201);

    // The same role again is no change: no new version.
    expect((await owner.send("PATCH", `/v3.0/members/${member!.personId}`, { role: "editor" })).status).toBe(200);
    expect(await version(owner.accountId, member!.personId)).toBe(before + 1);

    const lowered = await owner.send("PATCH", `/v3.0/members/${member!.personId}`, { role: "viewer" });
    expect(lowered.status).toBe(200);
    await expectProblem(await member!.send("POST", "/v3.0/pinpoints", NEW_PLACE), 403, {
      code: "role_forbidden",
    });
  });

  it("validates the role and the body", async () => {
    const owner = await personCaller("owner");
    const [member] = await membersOf(owner.accountId, "editor", 1);
    const path = `/v3.0/members/${member!.personId}`;
    await expectProblem(await owner.send("PATCH", path, { role: "superuser" }), 400, { pointers: ["/role"] });
    await expectProblem(await owner.send("PATCH", path, {}), 400, { pointers: ["/role"] });
    await expectProblem(await owner.send("PATCH", path, { role: 3 }), 400, { pointers: ["/role"] });
    await expectProblem(await owner.send("PATCH", path, ["editor"]), 400);
    expect(await storedRole(owner.accountId, member!.personId)).toBe("editor");
  });

  it("answers 404 for a person who is not a member of this account, wherever else they are", async () => {
    const owner = await personCaller("owner");
    const elsewhere = await personCaller("editor");
    const list = await createList(owner);
    const collaborator = await personCaller(null, { accountId: owner.accountId, lists: [[list.id, "viewer"]] });
    for (const id of [elsewhere.personId, collaborator.personId, 987654321]) {
      await expectProblem(await owner.send("PATCH", `/v3.0/members/${id}`, { role: "viewer" }), 404, {
        code: "not_found",
      });
    }
    expect(await storedRole(elsewhere.accountId, elsewhere.personId)).toBe("editor");
    await expectProblem(await owner.send("PATCH", "/v3.0/members/abc", { role: "viewer" }), 404);
  });

  it("lets only an owner give, change or take the owner role", async () => {
    const owner = await personCaller("owner");
    const [admin, editor] = [
      ...(await membersOf(owner.accountId, "admin", 1)),
      ...(await membersOf(owner.accountId, "editor", 1)),
    ];
    await expectProblem(await admin!.send("PATCH", `/v3.0/members/${editor!.personId}`, { role: "owner" }), 403, {
      code: "owner_required",
    });
    await expectProblem(await admin!.send("PATCH", `/v3.0/members/${admin!.personId}`, { role: "owner" }), 403, {
      code: "owner_required",
    });
    await expectProblem(await admin!.send("PATCH", `/v3.0/members/${owner.personId}`, { role: "viewer" }), 403, {
      code: "owner_required",
    });
    expect(await storedRole(owner.accountId, owner.personId)).toBe("owner");
    expect(await storedRole(owner.accountId, editor!.personId)).toBe("editor");

    // An admin manages every other role, admins included.
    expect((await admin!.send("PATCH", `/v3.0/members/${editor!.personId}`, { role: "admin" })).status).toBe(200);
    expect((await admin!.send("PATCH", `/v3.0/members/${editor!.personId}`, { role: "contributor" })).status).toBe(200);
    // An owner makes another owner, who may then step down the first.
    expect((await owner.send("PATCH", `/v3.0/members/${editor!.personId}`, { role: "owner" })).status).toBe(200);
    expect((await editor!.send("PATCH", `/v3.0/members/${owner.personId}`, { role: "admin" })).status).toBe(200);
    expect(await storedRole(owner.accountId, owner.personId)).toBe("admin");
  });

  it("refuses to demote the last owner", async () => {
    const owner = await personCaller("owner");
    await expectProblem(await owner.send("PATCH", `/v3.0/members/${owner.personId}`, { role: "admin" }), 409, {
      code: "last_owner",
    });
    expect(await storedRole(owner.accountId, owner.personId)).toBe("owner");
  });

  it("keeps one owner when every owner demotes every owner at once", async () => {
    const owner = await personCaller("owner");
    const owners = [owner, ...(await membersOf(owner.accountId, "owner", 5))];
    const responses = await Promise.all(
      owners.flatMap((caller) =>
        owners.map((target) => caller.send("PATCH", `/v3.0/members/${target.personId}`, { role: "editor" })),
      ),
    );
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    // Some demotions are refused because their caller was demoted first (403), others to keep an owner (409).
    expect(
      statuses.every((s) => [200, 403, 409].includes(s)),
      statuses.join(","),
    ).toBe(true);
    expect(statuses).toContain(409);
    const { results } = await env.DB.prepare("SELECT person_id FROM members WHERE account_id = ? AND role = 'owner'")
      .bind(owner.accountId)
      .all();
    expect(results).toHaveLength(1);
  });
});

describe("DELETE /v3.0/members/{person_id}", () => {
  it("removes a member, whose token is refused at their very next request, and their collaborations", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const editor = await personCaller("editor", { accountId: owner.accountId, lists: [[list.id, "editor"]] });
    expect((await editor.get("/v3.0/lists")).status).toBe(200);

    const removed = await owner.send("DELETE", `/v3.0/members/${editor.personId}`);
    expect(removed.status).toBe(204);
    await expectProblem(await editor.get("/v3.0/lists"), 401, { code: "invalid_token" });
    expect(await storedRole(owner.accountId, editor.personId)).toBeNull();
    const collaborations = await env.DB.prepare("SELECT 1 FROM list_collaborators WHERE person_id = ?")
      .bind(editor.personId)
      .all();
    expect(collaborations.results).toHaveLength(0);
    await expectProblem(await owner.send("DELETE", `/v3.0/members/${editor.personId}`), 404);
  });

  it("leaves a collaborator who is no member alone, and answers 404", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const collaborator = await personCaller(null, { accountId: owner.accountId, lists: [[list.id, "viewer"]] });
    await expectProblem(await owner.send("DELETE", `/v3.0/members/${collaborator.personId}`), 404);
    expect((await collaborator.get(`/v3.0/lists/${list.id}`)).status).toBe(200);
  });

  it("answers 404 for another account's member and leaves them be", async () => {
    const owner = await personCaller("owner");
    const elsewhere = await personCaller("viewer");
    await expectProblem(await owner.send("DELETE", `/v3.0/members/${elsewhere.personId}`), 404);
    expect(await storedRole(elsewhere.accountId, elsewhere.personId)).toBe("viewer");
  });

  it("lets only an owner remove an owner, and never the last one", async () => {
    const owner = await personCaller("owner");
    const [admin] = await membersOf(owner.accountId, "admin", 1);
    await expectProblem(await admin!.send("DELETE", `/v3.0/members/${owner.personId}`), 403, {
      code: "owner_required",
    });
    await expectProblem(await owner.send("DELETE", `/v3.0/members/${owner.personId}`), 409, { code: "last_owner" });
    // An admin may remove themself.
    expect((await admin!.send("DELETE", `/v3.0/members/${admin!.personId}`)).status).toBe(204);
    expect(await storedRole(owner.accountId, owner.personId)).toBe("owner");
  });

  it("keeps exactly one owner when every owner removes every other at once", async () => {
    const owner = await personCaller("owner");
    const owners = [owner, ...(await membersOf(owner.accountId, "owner", 5))];
    const responses = await Promise.all(
      owners.flatMap((caller) =>
        owners
          .filter((target) => target !== caller)
          .map((target) => caller.send("DELETE", `/v3.0/members/${target.personId}`)),
      ),
    );
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    // Refused: callers removed before (401, or 403 once their request had started), targets gone (404), the last owner (409).
    expect(
      statuses.every((s) => [204, 401, 403, 404, 409].includes(s)),
      statuses.join(","),
    ).toBe(true);
    expect(statuses.filter((s) => s === 204)).toHaveLength(5);
    const { results } = await env.DB.prepare("SELECT role FROM members WHERE account_id = ?")
      .bind(owner.accountId)
      .all<{ role: string }>();
    expect(results.map((r) => r.role)).toEqual(["owner"]);
  });
});

describe("DELETE /v3.0/members/me", () => {
  it("lets any member leave; their next request is refused", async () => {
    const owner = await personCaller("owner");
    const [viewer] = await membersOf(owner.accountId, "viewer", 1);
    expect((await viewer!.send("DELETE", "/v3.0/members/me")).status).toBe(204);
    await expectProblem(await viewer!.get("/v3.0/lists"), 401, { code: "invalid_token" });
    expect(await storedRole(owner.accountId, viewer!.personId)).toBeNull();
  });

  it("keeps the last owner, even when every owner leaves at once", async () => {
    const owner = await personCaller("owner");
    await expectProblem(await owner.send("DELETE", "/v3.0/members/me"), 409, { code: "last_owner" });
    const owners = [owner, ...(await membersOf(owner.accountId, "owner", 9))];
    const responses = await Promise.all(owners.map((o) => o.send("DELETE", "/v3.0/members/me")));
    const statuses = responses.map((r) => r.status).sort();
    await Promise.all(responses.map((r) => r.body?.cancel()));
    expect(statuses).toEqual([...Array(9).fill(204), 409]);
    const { results } = await env.DB.prepare("SELECT role FROM members WHERE account_id = ?")
      .bind(owner.accountId)
      .all<{ role: string }>();
    expect(results.map((r) => r.role)).toEqual(["owner"]);
  });

  it("refuses a client", async () => {
    const client = await caller();
    await expectProblem(await client.send("DELETE", "/v3.0/members/me"), 403);
  });
});

describe("POST /v3.0/members/transfer-ownership", () => {
  it("makes the member an owner and the caller an admin, in one step", async () => {
    const owner = await personCaller("owner");
    const [editor] = await membersOf(owner.accountId, "editor", 1);
    const response = await owner.send("POST", "/v3.0/members/transfer-ownership", { person_id: editor!.personId });
    expect(response.status).toBe(200);
    const body = await json<{ owner: Member; former_owner: Member }>(response);
    expect(body.owner).toMatchObject({ id: editor!.personId, role: "owner" });
    expect(body.former_owner).toMatchObject({ id: owner.personId, role: "admin" });
    expect(await storedRole(owner.accountId, editor!.personId)).toBe("owner");
    expect(await storedRole(owner.accountId, owner.personId)).toBe("admin");
    // The former owner is an admin from their next request: no second transfer.
    await expectProblem(
      await owner.send("POST", "/v3.0/members/transfer-ownership", { person_id: editor!.personId }),
      403,
    );
  });

  it("validates the person: a member of the account, not the caller", async () => {
    const owner = await personCaller("owner");
    const elsewhere = await personCaller("editor");
    const path = "/v3.0/members/transfer-ownership";
    await expectProblem(await owner.send("POST", path, {}), 400, { pointers: ["/person_id"] });
    await expectProblem(await owner.send("POST", path, { person_id: "2" }), 400, { pointers: ["/person_id"] });
    await expectProblem(await owner.send("POST", path, { person_id: owner.personId }), 400, {
      pointers: ["/person_id"],
    });
    await expectProblem(await owner.send("POST", path, { person_id: elsewhere.personId }), 400, {
      pointers: ["/person_id"],
    });
    expect(await storedRole(owner.accountId, owner.personId)).toBe("owner");
  });

  it("hands the ownership to exactly one member when an owner transfers it to many at once", async () => {
    const owner = await personCaller("owner");
    const candidates = await membersOf(owner.accountId, "editor", 8);
    const responses = await Promise.all(
      candidates.map((c) => owner.send("POST", "/v3.0/members/transfer-ownership", { person_id: c.personId })),
    );
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    // The first transfer makes the caller an admin; the others find no owner calling.
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 403)).toHaveLength(7);
    const { results } = await env.DB.prepare("SELECT person_id FROM members WHERE account_id = ? AND role = 'owner'")
      .bind(owner.accountId)
      .all<{ person_id: number }>();
    expect(results).toHaveLength(1);
    expect(candidates.map((c) => c.personId)).toContain(results[0]!.person_id);
  });

  it("is an owner's: an admin is refused", async () => {
    const owner = await personCaller("owner");
    const [admin, editor] = [
      ...(await membersOf(owner.accountId, "admin", 1)),
      ...(await membersOf(owner.accountId, "editor", 1)),
    ];
    await expectProblem(
      await admin!.send("POST", "/v3.0/members/transfer-ownership", { person_id: editor!.personId }),
      403,
    );
    expect(await storedRole(owner.accountId, owner.personId)).toBe("owner");
  });
});

it("counts a person in several accounts separately", async () => {
  const person = await createPerson();
  const first = await personCaller("owner", { person });
  const second = await personCaller("editor", { person });
  const [other] = await membersOf(first.accountId, "owner", 1);
  expect((await other!.send("DELETE", `/v3.0/members/${person.personId}`)).status).toBe(204);
  await expectProblem(await first.get("/v3.0/lists"), 401);
  expect((await second.get("/v3.0/lists")).status).toBe(200);
});
