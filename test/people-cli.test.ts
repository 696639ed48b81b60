/**
 * `npm run people`'s operations (scripts/lib/people.ts), run against the real
 * local D1 with the same SQL `wrangler d1 execute` receives, and checked
 * through the Worker itself: the people it makes sign in at POST
 * /v3.0/auth/sign-in and call /v3.0 with the token of their session, the
 * memberships it takes away stop their tokens, and its reset links set a
 * password at POST /v3.0/auth/password-reset/{token}.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ROLES as SERVICE_ROLES } from "../src/auth/roles";
import { emailKey } from "../src/people/email";
import { passwordProblem } from "../src/people/password-policy";
import { PBKDF2_ITERATIONS as SERVICE_ITERATIONS, verifyPassword } from "../src/people/passwords";
import { RESET_TICKET_MS as SERVICE_RESET_MS } from "../src/people/reset-tickets";
import {
  createPerson,
  ensurePerson,
  generatePassword,
  hashPassword,
  issueReset,
  listPeople,
  PBKDF2_ITERATIONS,
  removeMember,
  RESET_TICKET_MS,
  ROLES,
} from "../scripts/lib/people.ts";
import { RegistryError, UsageError, type Execute } from "../scripts/lib/registry.ts";
import { Browser, createAccount, expectProblem } from "./helpers";

const execute: Execute = async (statements) =>
  (await env.DB.batch(statements.map((sql) => env.DB.prepare(sql)))).map((r) => r.results as Record<string, unknown>[]);

/** A fresh account's id and name (the tool names accounts). */
async function account(): Promise<{ id: number; name: string }> {
  const id = await createAccount();
  const row = await env.DB.prepare("SELECT name FROM accounts WHERE id = ?").bind(id).first<{ name: string }>();
  return { id, name: row!.name };
}

let people = 0;
const address = (local = "person") => `${local}-${++people}-${crypto.randomUUID().slice(0, 8)}@example.test`;

const stored = (email: string) =>
  env.DB.prepare("SELECT * FROM people WHERE email_key = ?")
    .bind(emailKey(email))
    .first<{ id: number; email: string; name: string; password_hash: string | null }>();

const count = async (sql: string, ...values: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...values)
    .first<{ n: number }>())!.n;

/** Signs in on a browser of its own and reads the account's pinpoints with the session's token: the status. */
async function readsAs(
  email: string,
  password: string,
  accountId: number,
): Promise<{ browser: Browser; token: string }> {
  const browser = new Browser();
  const signIn = await browser.signIn(email, password);
  expect(signIn.status, await signIn.clone().text()).toBe(200);
  const token = await browser.token(accountId);
  const read = await browser.fetch("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${token}` } });
  expect(read.status, await read.clone().text()).toBe(200);
  await read.body?.cancel();
  return { browser, token };
}

const readStatus = async (token: string) => {
  const response = await new Browser().fetch("/v3.0/pinpoints", { headers: { Authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  return response.status;
};

describe("the tool writes what the service writes", () => {
  it("has the service's roles, PBKDF2 iterations and reset link lifetime", () => {
    expect(ROLES).toEqual(SERVICE_ROLES);
    expect(PBKDF2_ITERATIONS).toBe(SERVICE_ITERATIONS);
    expect(RESET_TICKET_MS).toBe(SERVICE_RESET_MS);
  });

  it("hashes as src/people/passwords.ts does: the service verifies the hash and keeps it (no rehash)", async () => {
    for (const password of ["a long phrase only this test knows", "Ｆｕｌｌｗｉｄｔｈ ｐａｓｓｗｏｒｄ"]) {
      const hash = await hashPassword(password);
      expect(hash).toMatch(/^\$pbkdf2-sha256\$i=100000\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
      expect(await verifyPassword(password, hash)).toEqual({ matches: true, rehash: false });
      // Compared as NFKC, as the service does: the same password typed on another keyboard matches.
      expect((await verifyPassword(password.normalize("NFKC"), hash)).matches).toBe(true);
      expect((await verifyPassword(`${password}!`, hash)).matches).toBe(false);
    }
  });

  it("generates passwords the policy accepts, each different", () => {
    const generated = Array.from({ length: 200 }, generatePassword);
    expect(new Set(generated).size).toBe(200);
    for (const password of generated) {
      expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(passwordProblem(password, "someone@example.test")).toBeNull();
    }
  });
});

describe("create", () => {
  it("makes a person with the password given, who signs in and calls /v3.0 in the account; the hash stays", async () => {
    const { id, name } = await account();
    const email = address("O'Brien");
    const created = await createPerson(execute, {
      account: name,
      email: `  ${email.toUpperCase()} `,
      role: "editor",
      name: "Ana 'the editor'",
      password: "a long phrase only Ana knows",
    });
    expect(created).toEqual({
      person_id: expect.any(Number),
      email: email.toUpperCase(),
      name: "Ana 'the editor'",
      account: name,
      account_id: id,
      role: "editor",
      person_created: true,
      member_added: true,
      password: "a long phrase only Ana knows",
      password_generated: false,
    });
    const row = await stored(email);
    expect(row).toMatchObject({ id: created.person_id, email: email.toUpperCase(), name: "Ana 'the editor'" });
    expect(row!.password_hash).not.toContain("a long phrase");
    expect(
      await env.DB.prepare("SELECT role FROM members WHERE account_id = ? AND person_id = ?")
        .bind(id, created.person_id)
        .first(),
    ).toEqual({ role: "editor" });

    // Any case of the address signs in; the token writes, as an editor's does.
    const { browser, token } = await readsAs(email, "a long phrase only Ana knows", id);
    const write = await browser.fetch("/v3.0/pinpoints", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ name: "Ana's place", latitude: 48.85, longitude: 2.35 }),
    });
    expect(write.status, await write.clone().text()).toBe(201);
    expect((await stored(email))!.password_hash).toBe(row!.password_hash);
  });

  it("generates a password when none is given, returned once, that signs in", async () => {
    const { id, name } = await account();
    const email = address();
    const created = await createPerson(execute, { account: name, email, role: "viewer" });
    expect(created).toMatchObject({ person_created: true, password_generated: true, name: email.split("@")[0] });
    expect(created.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    const { token } = await readsAs(email, created.password!, id);
    expect(await readStatus(token)).toBe(200);
  });

  it("adds an existing person to another account, leaving their name and password; again, changes nothing", async () => {
    const first = await account();
    const second = await account();
    const email = address();
    const created = await createPerson(execute, {
      account: first.name,
      email,
      role: "owner",
      password: "first long phrase",
    });
    const before = await stored(email);

    const added = await createPerson(execute, {
      account: second.name,
      email: email.toUpperCase(),
      role: "contributor",
      name: "Another name",
      password: "another long phrase",
    });
    expect(added).toMatchObject({
      person_id: created.person_id,
      email,
      person_created: false,
      member_added: true,
      role: "contributor",
      password: null,
      password_generated: false,
    });
    expect(await stored(email)).toEqual(before);

    const again = await createPerson(execute, { account: second.name, email, role: "contributor" });
    expect(again).toMatchObject({ person_created: false, member_added: false, password: null });
    expect(await count("SELECT count(*) AS n FROM members WHERE person_id = ?", created.person_id)).toBe(2);
    // The first password still signs in, in both accounts.
    await readsAs(email, "first long phrase", second.id);
    await readsAs(email, "first long phrase", first.id);
  });

  it("refuses another role for a member, changing nothing", async () => {
    const { id, name } = await account();
    const email = address();
    const created = await createPerson(execute, { account: name, email, role: "viewer" });
    await expect(createPerson(execute, { account: name, email, role: "admin" })).rejects.toThrow(
      new RegistryError(
        `${email} is a member of account "${name}" as viewer already; nothing changed. ` +
          "To give them another role: npm run people -- remove, then create again.",
      ),
    );
    expect(
      await env.DB.prepare("SELECT role FROM members WHERE account_id = ? AND person_id = ?")
        .bind(id, created.person_id)
        .first(),
    ).toEqual({ role: "viewer" });
  });

  it("refuses an unknown account and writes no person", async () => {
    const email = address();
    await expect(
      createPerson(execute, { account: `no such account ${crypto.randomUUID()}`, email, role: "editor" }),
    ).rejects.toThrow(RegistryError);
    expect(await stored(email)).toBeNull();
  });

  it("refuses bad input before anything is written", async () => {
    const { name } = await account();
    const email = address();
    const cases: [Parameters<typeof createPerson>[1], string][] = [
      [
        { account: name, email, role: "boss" },
        `--role must be one of owner, admin, editor, contributor, viewer, not "boss".`,
      ],
      [
        { account: name, email, role: "Editor" },
        `--role must be one of owner, admin, editor, contributor, viewer, not "Editor".`,
      ],
      [{ account: name, email: "not-an-address", role: "editor" }, "--email must be an email address"],
      [{ account: name, email: "a b@example.test", role: "editor" }, "--email must be an email address"],
      [{ account: name, email: `${"a".repeat(250)}@example.test`, role: "editor" }, "--email must be at most 254"],
      [{ account: name, email, role: "editor", password: "eleven char" }, "--password must be at least 12 characters."],
      [
        { account: name, email, role: "editor", password: "x".repeat(129) },
        "--password must be at most 128 characters.",
      ],
      [{ account: name, email, role: "editor", password: "Password1234" }, "--password is one of the most common"],
      [{ account: name, email, role: "editor", password: "aaaaaaaaaaaaaaa" }, "--password is one character repeated"],
      [{ account: name, email, role: "editor", password: email }, "--password must not be your email address."],
      [{ account: name, email, role: "editor", name: "   " }, "--name must not be empty."],
      [{ account: name, email, role: "editor", name: "two\nlines" }, "--name must not contain control characters"],
      [{ account: "  ", email, role: "editor" }, "The account name must not be empty."],
    ];
    for (const [input, message] of cases) {
      const error = await createPerson(execute, input).catch((e: unknown) => e);
      expect(error, JSON.stringify(input)).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain(message);
    }
    expect(await stored(email)).toBeNull();
  });
});

describe("remove", () => {
  it("takes the membership away: the token stops at its next request; the person and their other account stay", async () => {
    const first = await account();
    const second = await account();
    const email = address();
    const created = await createPerson(execute, {
      account: first.name,
      email,
      role: "editor",
      password: "remove me phrase",
    });
    await createPerson(execute, { account: second.name, email, role: "viewer" });
    const { token } = await readsAs(email, "remove me phrase", first.id);
    const { token: other } = await readsAs(email, "remove me phrase", second.id);

    expect(await removeMember(execute, { account: first.name, email: email.toUpperCase() })).toEqual({
      person_id: created.person_id,
      email,
      account: first.name,
      role: "editor",
      other_accounts: 1,
    });
    expect(await readStatus(token)).toBe(401);
    expect(await readStatus(other)).toBe(200);
    expect(await stored(email)).not.toBeNull();

    await expect(removeMember(execute, { account: first.name, email })).rejects.toThrow(
      new RegistryError(`${email} is not a member of account "${first.name}".`),
    );
    expect(await removeMember(execute, { account: second.name, email })).toMatchObject({ other_accounts: 0 });
    expect(await stored(email)).not.toBeNull();
  });

  it("keeps an account's only owner; a second owner makes the first removable", async () => {
    const { id, name } = await account();
    const owner = address();
    const other = address();
    await createPerson(execute, { account: name, email: owner, role: "owner" });
    await createPerson(execute, { account: name, email: other, role: "admin" });
    await expect(removeMember(execute, { account: name, email: owner })).rejects.toThrow(/the only owner/);
    expect(await count("SELECT count(*) AS n FROM members WHERE account_id = ? AND role = 'owner'", id)).toBe(1);

    await removeMember(execute, { account: name, email: other });
    await createPerson(execute, { account: name, email: other, role: "owner" });
    await removeMember(execute, { account: name, email: owner });
    await expect(removeMember(execute, { account: name, email: other })).rejects.toThrow(/the only owner/);
    expect(await count("SELECT count(*) AS n FROM members WHERE account_id = ?", id)).toBe(1);
  });

  it("says which of account and person is unknown", async () => {
    const { name } = await account();
    await expect(
      removeMember(execute, { account: `nowhere ${crypto.randomUUID()}`, email: address() }),
    ).rejects.toThrow(/There is no account named/);
    const nobody = address();
    await expect(removeMember(execute, { account: name, email: nobody })).rejects.toThrow(
      new RegistryError(`There is no person with the email address ${nobody}.`),
    );
  });
});

describe("reset", () => {
  it("issues a single-use link that sets the password; a newer link voids the older", async () => {
    const { id, name } = await account();
    const email = address();
    await createPerson(execute, { account: name, email, role: "editor", password: "the old long phrase" });
    const older = await issueReset(execute, { email: email.toUpperCase() });
    const issued = await issueReset(execute, { email });
    expect(issued.email).toBe(email);
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const lifetime = Date.parse(issued.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(RESET_TICKET_MS - 60_000);
    expect(lifetime).toBeLessThanOrEqual(RESET_TICKET_MS);
    // Only the hash is kept.
    expect(await count("SELECT count(*) AS n FROM auth_tickets WHERE id = ?", issued.token)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM auth_tickets WHERE person_id = ?", issued.person_id)).toBe(1);

    const reset = (token: string, password: string) =>
      new Browser().send("POST", `/v3.0/auth/password-reset/${token}`, { password });
    await expectProblem(await reset(older.token, "older link long phrase"), 404, { code: "not_found" });
    expect((await reset(issued.token, "the new long phrase")).status).toBe(204);
    await expectProblem(await reset(issued.token, "a third long phrase"), 404, { code: "not_found" });

    await readsAs(email, "the new long phrase", id);
    expect((await new Browser().signIn(email, "the old long phrase")).status).toBe(400);
  });

  it("refuses an unknown person and a malformed address", async () => {
    const nobody = address();
    await expect(issueReset(execute, { email: nobody })).rejects.toThrow(
      new RegistryError(`There is no person with the email address ${nobody}.`),
    );
    await expect(issueReset(execute, { email: "nobody" })).rejects.toThrow(UsageError);
  });
});

describe("list", () => {
  it("gives an account's members and list collaborators, their roles and sign-in, as the tables hold them", async () => {
    const { id, name } = await account();
    const elsewhere = await account();
    const emails = [address(), address(), address()];
    for (const [i, role] of (["owner", "editor", "viewer"] as const).entries()) {
      await createPerson(execute, { account: name, email: emails[i]!, role });
    }
    await createPerson(execute, { account: elsewhere.name, email: emails[1]!, role: "admin" });
    const outsider = address();
    const { person_id: outsiderId } = await createPerson(execute, {
      account: elsewhere.name,
      email: outsider,
      role: "viewer",
    });
    const list = await env.DB.prepare("INSERT INTO lists (account_id, name) VALUES (?, 'Shared') RETURNING id")
      .bind(id)
      .first<{ id: number }>();
    await env.DB.prepare(
      "INSERT INTO list_collaborators (account_id, list_id, person_id, role) VALUES (?, ?, ?, 'editor')",
    )
      .bind(id, list!.id, outsiderId)
      .run();
    await env.DB.prepare("INSERT INTO passkeys (id, person_id, name, public_key) VALUES (?, ?, 'laptop', 'x')")
      .bind(crypto.randomUUID(), outsiderId)
      .run();

    const listed = await listPeople(execute, { account: name });
    // Brute force: every person with a member or collaborator row in the account, from the tables.
    const { results: expected } = await env.DB.prepare(
      `SELECT id FROM people WHERE id IN (SELECT person_id FROM members WHERE account_id = ?1
                                          UNION SELECT person_id FROM list_collaborators WHERE account_id = ?1)
       ORDER BY id`,
    )
      .bind(id)
      .all<{ id: number }>();
    expect(listed.map((p) => p.id)).toEqual(expected.map((r) => r.id));
    expect(listed.map((p) => p.email)).toEqual([...emails, outsider]);
    expect(listed.map((p) => p.memberships.map((m) => m.role))).toEqual([["owner"], ["editor"], ["viewer"], []]);
    expect(listed[3]).toMatchObject({
      password: true,
      passkeys: 1,
      totp: false,
      lists: [{ account: name, account_id: id, list_id: list!.id, role: "editor" }],
    });
    expect(JSON.stringify(listed)).not.toContain("pbkdf2");

    // Without an account: everyone, each with every membership.
    const all = await listPeople(execute);
    expect(all.length).toBe(await count("SELECT count(*) AS n FROM people"));
    expect(all.find((p) => p.email === emails[1])!.memberships.map((m) => [m.account, m.role])).toEqual([
      [name, "editor"],
      [elsewhere.name, "admin"],
    ]);
    await expect(listPeople(execute, { account: `none ${crypto.randomUUID()}` })).rejects.toThrow(RegistryError);
  });
});

describe("the development person (npm start)", () => {
  it("is created, kept, given its password back and made owner again, saying what it did", async () => {
    const { id, name } = await account();
    const email = address("developer");
    const password = generatePassword();
    const passwordHash = await hashPassword(password);
    const input = { account: name, email, name: "Developer", role: "owner" as const, passwordHash };
    expect(await ensurePerson(execute, input)).toEqual({ person: "created", member: "added" });
    expect(await ensurePerson(execute, input)).toEqual({ person: "kept", member: "kept" });
    await readsAs(email, password, id);

    const person = await stored(email);
    await env.DB.batch([
      env.DB.prepare("UPDATE people SET password_hash = ? WHERE id = ?").bind(
        await hashPassword("changed in a browser"),
        person!.id,
      ),
      env.DB.prepare("UPDATE members SET role = 'viewer' WHERE person_id = ?").bind(person!.id),
    ]);
    expect(await ensurePerson(execute, input)).toEqual({ person: "password set", member: "role set" });
    expect((await stored(email))!.password_hash).toBe(passwordHash);
    await readsAs(email, password, id);
    expect(await count("SELECT count(*) AS n FROM people WHERE email_key = ?", emailKey(email))).toBe(1);
  });
});
