/**
 * A person's access token: it works for the API as a client's does while the person's session is open and
 * they are in the account, and stops at the very next request once either ends.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createList, createPerson, expectProblem, json, personCaller } from "./helpers";

describe("a person's token", () => {
  it("reads and writes as a member, and is refused at the next request once the membership ends", async () => {
    const editor = await personCaller("editor");
    const created = await editor.send("POST", "/v3.0/pinpoints", { name: "Harbour", latitude: 1, longitude: 2 });
    expect(created.status).toBe(201);
    // A person's answers carry a bookmark to read their own writes with, as a client's do.
    expect(created.headers.get("X-D1-Bookmark")).toMatch(/^[A-Za-z0-9_-]{80}$/);
    const { id } = await json<{ id: number }>(created);
    const read = await editor.get(`/v3.0/pinpoints/${id}`, { "X-D1-Bookmark": created.headers.get("X-D1-Bookmark")! });
    expect(read.status).toBe(200);

    await env.DB.prepare("DELETE FROM members WHERE account_id = ? AND person_id = ?")
      .bind(editor.accountId, editor.personId)
      .run();
    await expectProblem(await editor.get(`/v3.0/pinpoints/${id}`), 401, { code: "invalid_token" });
  });

  it("reads only, as a viewer, and writes again at the next request once the role is raised", async () => {
    const viewer = await personCaller("viewer");
    expect((await viewer.get("/v3.0/pinpoints")).status).toBe(200);
    // The role answers before the token's scope (src/auth/operation-access.ts): a viewer creates nothing.
    await expectProblem(await viewer.send("POST", "/v3.0/pinpoints", { name: "x", latitude: 1, longitude: 2 }), 403, {
      code: "role_forbidden",
    });
    await env.DB.prepare("UPDATE members SET role = 'editor', version = version + 1 WHERE person_id = ?")
      .bind(viewer.personId)
      .run();
    expect((await viewer.send("POST", "/v3.0/pinpoints", { name: "x", latitude: 1, longitude: 2 })).status).toBe(201);
  });

  it("is refused once its session is revoked or has expired", async () => {
    const revoked = await personCaller("owner");
    await env.DB.prepare("UPDATE sessions SET revoked_at = ? WHERE id = ?").bind(Date.now(), revoked.sessionId).run();
    await expectProblem(await revoked.get("/v3.0/lists"), 401, { code: "invalid_token" });

    const expired = await personCaller("owner");
    await env.DB.prepare("UPDATE sessions SET expires_at = ? WHERE id = ?")
      .bind(Date.now() - 1, expired.sessionId)
      .run();
    await expectProblem(await expired.get("/v3.0/lists"), 401, { code: "invalid_token" });
  });

  it("belongs to one account: a member elsewhere, or nobody, is refused", async () => {
    const person = await createPerson();
    const elsewhere = await personCaller("admin", { person });
    const outsider = await personCaller(null, { person });
    expect((await elsewhere.get("/v3.0/lists")).status).toBe(200);
    await expectProblem(await outsider.get("/v3.0/lists"), 401, { code: "invalid_token" });
  });

  it("counts a list collaborator in as long as the collaboration lasts", async () => {
    const owner = await personCaller("owner");
    const list = await createList(owner, { name: "Shared" });
    const collaborator = await personCaller(null, { accountId: owner.accountId, lists: [[list.id, "viewer"]] });
    expect((await collaborator.get(`/v3.0/lists/${list.id}`)).status).toBe(200);
    expect((await collaborator.get("/v3.0/categories")).status).toBe(200);
    await env.DB.prepare("DELETE FROM list_collaborators WHERE person_id = ?").bind(collaborator.personId).run();
    await expectProblem(await collaborator.get(`/v3.0/lists/${list.id}`), 401, { code: "invalid_token" });
  });
});

describe("the role table", () => {
  it("refuses what a role may not do, and lets through what it may", async () => {
    const editor = await personCaller("editor");
    const hook = { url: "https://example.com/hook", events: ["*"] };
    await expectProblem(await editor.send("POST", "/v3.0/webhooks", hook), 403, { code: "role_forbidden" });
    await expectProblem(await editor.get("/v3.0/keys"), 403, { code: "role_forbidden" });
    const admin = await personCaller("admin");
    expect((await admin.get("/v3.0/keys")).status).toBe(200);

    const contributor = await personCaller("contributor", { accountId: admin.accountId });
    const created = await contributor.send("POST", "/v3.0/pinpoints", { name: "Mine", latitude: 1, longitude: 2 });
    expect(created.status).toBe(201);
    const { id } = await json<{ id: number }>(created);
    expect((await contributor.get(`/v3.0/pinpoints/${id}`)).status).toBe(200);
    // `own`: what the contributor created, and nothing another made (test/roles.test.ts checks every cell).
    const renamed = await contributor.send("PUT", `/v3.0/pinpoints/${id}`, {
      name: "Renamed",
      latitude: 1,
      longitude: 2,
    });
    expect(renamed.status).toBe(200);
    const theirs = await json<{ id: number }>(
      await admin.send("POST", "/v3.0/pinpoints", { name: "Theirs", latitude: 1, longitude: 2 }),
    );
    await expectProblem(await contributor.send("PUT", `/v3.0/pinpoints/${theirs.id}`, { name: "Renamed" }), 403, {
      code: "role_forbidden",
    });
  });
});
