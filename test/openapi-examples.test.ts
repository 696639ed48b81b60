/**
 * Every example in the OpenAPI document is a request the service accepts:
 * /docs fills them in for "try it", so a newcomer's first request is one of
 * them. Each operation is sent with its request body examples (every media
 * type) and its parameter examples; what its path ids and the ids inside a
 * body name is created first, from the collection's own example.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { isAccountOperation, PEOPLE_ONLY } from "../src/auth/roles";
import { basic, call, caller, json, personCaller, type Caller, type PersonCaller } from "./helpers";
import { openApiRequests, type Json } from "./openapi-requests";

let document: Json;
let a: Caller;
let fromDocument: ReturnType<typeof openApiRequests>;

/**
 * The people of `a`'s account that the people's operations are sent as or name: the owner for most;
 * a second owner hands ownership to `heir`; `member` has their role changed and is then removed; `leaver`
 * leaves.
 */
let people: Record<"owner" | "secondOwner" | "member" | "heir" | "leaver", PersonCaller>;

beforeAll(async () => {
  document = await (await call("/v3.0/openapi.json")).json<Json>();
  a = await caller();
  fromDocument = openApiRequests(document, a);
  const accountId = a.accountId;
  people = {
    owner: await personCaller("owner", { accountId }),
    secondOwner: await personCaller("owner", { accountId }),
    member: await personCaller("viewer", { accountId }),
    heir: await personCaller("editor", { accountId }),
    leaver: await personCaller("viewer", { accountId }),
  };
});

/** Who sends an operation: a person where only a person may, else `a`'s client; no one to accept an invitation. */
function senderOf(operationId: string): { token: string } | null {
  if (operationId === "acceptInvitation") return null;
  if (operationId === "leaveAccount") return people.leaver;
  // The owner is given the list the path names (peopleIds), so leaving it has something to leave.
  if (operationId === "leaveList") return people.owner;
  if (operationId === "transferOwnership") return people.secondOwner;
  return isAccountOperation(operationId) && PEOPLE_ONLY.has(operationId) ? people.owner : a;
}

/** The people, invitations and clients the path of an operation of people names: ones of `a`'s account. */
async function peopleIds(path: string): Promise<Record<string, string>> {
  if (path.startsWith("/v3.0/members/")) return { person_id: String(people.member.personId) };
  if (path.includes("/collaborators/")) {
    // A list the owner collaborates on already, so taking it away has something to take.
    const list = await json<{ id: number }>(await a.send("POST", "/v3.0/lists", { name: "Shared" }));
    const person_id = String(people.owner.personId);
    await people.owner.send("PUT", `/v3.0/lists/${list.id}/collaborators/${person_id}`, { role: "viewer" });
    return { id: String(list.id), person_id };
  }
  if (path === "/v3.0/invitations/{id}") {
    const email = `example-${crypto.randomUUID()}@example.test`;
    const made = await people.owner.send("POST", "/v3.0/invitations", { email, role: "viewer" });
    return { id: String((await json<{ id: number }>(made)).id) };
  }
  if (path.includes("{client_id}")) {
    const client = await json<{ id: string }>(await people.owner.send("POST", "/v3.0/clients", { name: "Example" }));
    return { client_id: client.id };
  }
  return {};
}

/** An example body with the person and invitation it names replaced by ones of `a`'s account. */
async function withPeople(path: string, example: unknown): Promise<unknown> {
  if (path === "/v3.0/members/transfer-ownership") return { ...(example as Json), person_id: people.heir.personId };
  if (path === "/v3.0/invitations/accept") {
    const email = `example-${crypto.randomUUID()}@example.test`;
    const made = await people.owner.send("POST", "/v3.0/invitations", { email, role: "viewer" });
    return { ...(example as Json), token: (await json<{ token: string }>(made)).token };
  }
  return example;
}

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
      const url = await fromDocument.urlOf(path, operation, await peopleIds(path));
      // The token endpoint's client authenticates with HTTP Basic, as Swagger UI's Authorize does.
      const sender = senderOf(operation.operationId);
      const auth: Record<string, string> =
        path === "/v3.0/oauth2/token"
          ? { Authorization: basic(a.clientId, a.clientSecret) }
          : sender
            ? { Authorization: `Bearer ${sender.token}` }
            : {};
      const bodies = Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>);
      const requests =
        bodies.length === 0
          ? [{ headers: auth }]
          : await Promise.all(
              bodies.map(async ([type, { example }]) => {
                const body = encoded(type, await withPeople(path, await fromDocument.withOwnIds(path, example, url)));
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
