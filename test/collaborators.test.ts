/**
 * /v3.0/lists/{id}/collaborators with people's tokens: pages checked against the directory, grants
 * given, changed and taken (each read by the collaborator's next request), lists of other accounts out
 * of reach, person ids the account does not know refused, and a deleted list taking its grants with it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { allItems, caller, createList, expectProblem, json, membersOf, personCaller } from "./helpers";

type Collaborator = { id: number; name: string; email: string; list: number; role: string };

async function collaboration(listId: number, personId: number) {
  return env.DB.prepare("SELECT role, version FROM list_collaborators WHERE list_id = ? AND person_id = ?")
    .bind(listId, personId)
    .first<{ role: string; version: number }>();
}

describe("GET /v3.0/lists/{id}/collaborators", () => {
  it("pages through the list's collaborators by person id, as the directory holds them", async () => {
    const owner = await personCaller("owner");
    const [list, other] = [await createList(owner), await createList(owner)];
    const people = await membersOf(owner.accountId, "viewer", 5);
    for (const [i, person] of people.entries()) {
      const role = i % 2 === 0 ? "editor" : "viewer";
      expect(
        (await owner.send("PUT", `/v3.0/lists/${list.id}/collaborators/${person.personId}`, { role })).status,
      ).toBe(201);
    }
    // On another list: not this one's.
    await owner.send("PUT", `/v3.0/lists/${other.id}/collaborators/${people[0]!.personId}`, { role: "viewer" });

    const listed = await allItems<Collaborator>(owner, `/v3.0/lists/${list.id}/collaborators`, 2);
    const { results: stored } = await env.DB.prepare(
      `SELECT p.id, p.name, p.email, c.list_id AS list, c.role FROM list_collaborators c
       JOIN people p ON p.id = c.person_id WHERE c.list_id = ? ORDER BY p.id`,
    )
      .bind(list.id)
      .all<Collaborator>();
    expect(stored).toHaveLength(5);
    expect(listed.map(({ id, name, email, list, role }) => ({ id, name, email, list, role }))).toEqual(stored);
  });

  it("answers 404 for another account's list and for a list that does not exist", async () => {
    const owner = await personCaller("owner");
    const stranger = await personCaller("owner");
    const theirs = await createList(stranger);
    await expectProblem(await owner.get(`/v3.0/lists/${theirs.id}/collaborators`), 404, { code: "not_found" });
    await expectProblem(await owner.get("/v3.0/lists/987654321/collaborators"), 404);
    await expectProblem(await owner.get("/v3.0/lists/x/collaborators"), 404);
  });

  it("is refused to a client's token and to members who do not administer the account", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const client = await caller("read write", owner.accountId);
    await expectProblem(await client.get(`/v3.0/lists/${list.id}/collaborators`), 403);
    const [editor] = await membersOf(owner.accountId, "editor", 1);
    await expectProblem(await editor!.get(`/v3.0/lists/${list.id}/collaborators`), 403);
    await expectProblem(
      await editor!.send("PUT", `/v3.0/lists/${list.id}/collaborators/${editor!.personId}`, { role: "editor" }),
      403,
    );
    expect(await collaboration(list.id, editor!.personId)).toBeNull();
  });
});

describe("PUT /v3.0/lists/{id}/collaborators/{person_id}", () => {
  it("gives (201), keeps (200, same version) and changes (200, next version) a person's role", async () => {
    const admin = await personCaller("admin");
    const list = await createList(admin);
    const [member] = await membersOf(admin.accountId, "viewer", 1);
    const path = `/v3.0/lists/${list.id}/collaborators/${member!.personId}`;

    const given = await admin.send("PUT", path, { role: "viewer" });
    expect(given.status).toBe(201);
    expect(await json<Collaborator>(given)).toMatchObject({ id: member!.personId, list: list.id, role: "viewer" });
    expect(await collaboration(list.id, member!.personId)).toEqual({ role: "viewer", version: 1 });

    expect((await admin.send("PUT", path, { role: "viewer" })).status).toBe(200);
    expect(await collaboration(list.id, member!.personId)).toEqual({ role: "viewer", version: 1 });

    const changed = await admin.send("PUT", path, { role: "editor" });
    expect(changed.status).toBe(200);
    expect(await json<Collaborator>(changed)).toMatchObject({ role: "editor" });
    expect(await collaboration(list.id, member!.personId)).toEqual({ role: "editor", version: 2 });
  });

  it("validates the role", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const path = `/v3.0/lists/${list.id}/collaborators/${owner.personId}`;
    for (const body of [{}, { role: "owner" }, { role: "admin" }, { role: null }]) {
      await expectProblem(await owner.send("PUT", path, body), 400, { pointers: ["/role"] });
    }
    expect(await collaboration(list.id, owner.personId)).toBeNull();
  });

  it("reaches only people the account knows: others are invited by email", async () => {
    const owner = await personCaller("owner");
    const [list, other] = [await createList(owner), await createList(owner)];
    const elsewhere = await personCaller("owner");
    await expectProblem(
      await owner.send("PUT", `/v3.0/lists/${list.id}/collaborators/${elsewhere.personId}`, { role: "viewer" }),
      404,
    );
    await expectProblem(
      await owner.send("PUT", `/v3.0/lists/${list.id}/collaborators/987654321`, { role: "viewer" }),
      404,
    );
    expect(await collaboration(list.id, elsewhere.personId)).toBeNull();

    // A collaborator on one of the account's lists may be given another.
    const collaborator = await personCaller(null, { accountId: owner.accountId, lists: [[other.id, "viewer"]] });
    const given = await owner.send("PUT", `/v3.0/lists/${list.id}/collaborators/${collaborator.personId}`, {
      role: "editor",
    });
    expect(given.status).toBe(201);
    expect(await json<Collaborator>(given)).toMatchObject({ name: expect.any(String), email: expect.any(String) });
  });

  it("answers 404 for another account's list and writes nothing", async () => {
    const owner = await personCaller("owner");
    const stranger = await personCaller("owner");
    const theirs = await createList(stranger);
    await expectProblem(
      await owner.send("PUT", `/v3.0/lists/${theirs.id}/collaborators/${owner.personId}`, { role: "editor" }),
      404,
    );
    expect(await collaboration(theirs.id, owner.personId)).toBeNull();
  });
});

describe("DELETE /v3.0/lists/{id}/collaborators/{person_id}", () => {
  it("takes the list; a person left with nothing of the account is refused at their next request", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner);
    const collaborator = await personCaller(null, { accountId: owner.accountId, lists: [[list.id, "editor"]] });
    expect((await collaborator.get(`/v3.0/lists/${list.id}`)).status).toBe(200);

    const path = `/v3.0/lists/${list.id}/collaborators/${collaborator.personId}`;
    expect((await owner.send("DELETE", path)).status).toBe(204);
    expect(await collaboration(list.id, collaborator.personId)).toBeNull();
    await expectProblem(await collaborator.get(`/v3.0/lists/${list.id}`), 401, { code: "invalid_token" });
    await expectProblem(await owner.send("DELETE", path), 404);
  });

  it("answers 404 for another account's list and leaves its collaborators be", async () => {
    const owner = await personCaller("owner");
    const stranger = await personCaller("owner");
    const theirs = await createList(stranger);
    const collaborator = await personCaller(null, { accountId: stranger.accountId, lists: [[theirs.id, "viewer"]] });
    await expectProblem(
      await owner.send("DELETE", `/v3.0/lists/${theirs.id}/collaborators/${collaborator.personId}`),
      404,
    );
    expect(await collaboration(theirs.id, collaborator.personId)).toEqual({ role: "viewer", version: 1 });
  });
});

it("deleting a list ends its collaborations and revokes the invitations to it", async () => {
  const owner = await personCaller("owner");
  const [list, kept] = [await createList(owner), await createList(owner)];
  const collaborator = await personCaller(null, { accountId: owner.accountId, lists: [[list.id, "editor"]] });
  const [member] = await membersOf(owner.accountId, "viewer", 1);
  await owner.send("PUT", `/v3.0/lists/${list.id}/collaborators/${member!.personId}`, { role: "editor" });
  await owner.send("PUT", `/v3.0/lists/${kept.id}/collaborators/${member!.personId}`, { role: "viewer" });
  const invite = (listId: number, hash: string) =>
    env.DB.prepare(
      `INSERT INTO invitations (account_id, email, email_key, role, list_id, token_hash, invited_by, expires_at)
       VALUES (?, 'x@example.test', 'x@example.test', 'viewer', ?, ?, ?, ?) RETURNING id`,
    )
      .bind(owner.accountId, listId, hash, `person:${owner.personId}`, Date.now() + 60_000)
      .first<number>("id");
  const pending = await invite(list.id, crypto.randomUUID());
  const other = await invite(kept.id, crypto.randomUUID());

  expect((await owner.send("DELETE", `/v3.0/lists/${list.id}`)).status).toBe(204);
  const { results } = await env.DB.prepare("SELECT list_id, person_id FROM list_collaborators WHERE account_id = ?")
    .bind(owner.accountId)
    .all();
  expect(results).toEqual([{ list_id: kept.id, person_id: member!.personId }]);
  const revoked = await env.DB.prepare("SELECT id, revoked_at FROM invitations WHERE id IN (?, ?) ORDER BY id")
    .bind(pending, other)
    .all<{ id: number; revoked_at: number | null }>();
  expect(revoked.results.map((r) => [r.id, r.revoked_at !== null])).toEqual([
    [pending, true],
    [other, false],
  ]);
  // Their only grant gone, the collaborator is refused; the member keeps their role.
  await expectProblem(await collaborator.get("/v3.0/lists"), 401);
  expect((await member!.get("/v3.0/lists")).status).toBe(200);
});
