/**
 * The `people` and `sign-in` groups: what acting as a person costs.
 * - `people`: the first page of account A's pinpoints read with a person's
 *   token (an editor of A, signed in, the token minted from the session) and
 *   with a client's. A person's token is checked against the directory at
 *   every request (their session and membership, src/auth/person-status.ts),
 *   a client's against a status cached for a minute; the goal is a person's
 *   request within 10% of a client's. Run in alternating rounds.
 * - `sign-in`: POST /v3.0/auth/sign-in with the right password (a PBKDF2
 *   hash of 100,000 iterations, src/people/passwords.ts, and a new session
 *   row) beside POST /v3.0/oauth2/token (one SHA-256): workerd's CPU per
 *   request is what a sign-in attempt costs.
 * The person is made as `npm run people -- create` makes one (scripts/lib/people.ts).
 * A person's token lives 300 seconds, so each run gets a fresh one (Target.headersNow).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createPerson } from "../scripts/lib/people.ts";
import type { Execute } from "../scripts/lib/registry.ts";
import { personToken, signIn } from "../scripts/lib/sign-in.ts";
import type { Runtime } from "./runtime.ts";
import type { Group, Target } from "./scenarios.ts";
import type { D1, Seeded } from "./seed.ts";

const EMAIL = "editor@bench.example";
const PASSWORD = "a long phrase the bench signs in with";

/** The groups, with the person created in account A and signed in. */
export async function peopleGroups(rt: Runtime, seeded: Seeded, token: string, dir: string): Promise<Group[]> {
  const db = (await rt.mf.getD1Database("DB", "api")) as unknown as D1;
  const execute: Execute = async (statements) =>
    ((await db.batch(statements.map((sql) => db.prepare(sql)))) as { results: Record<string, unknown>[] }[]).map(
      (r) => r.results,
    );
  const [[account] = []] = await execute([`SELECT name FROM accounts WHERE id = ${seeded.accountA}`]);
  await createPerson(execute, { account: String(account!.name), email: EMAIL, role: "editor", password: PASSWORD });
  const session = await signIn(rt.api.origin, EMAIL, PASSWORD);

  const page = new URL("/v3.0/pinpoints?limit=20", rt.api).href;
  const signInBody = join(dir, "sign-in.json");
  writeFileSync(signInBody, JSON.stringify({ email: EMAIL, password: PASSWORD }));
  const tokenForm = join(dir, "people-token.form");
  writeFileSync(tokenForm, "grant_type=client_credentials");

  const clientPage: Target = {
    key: "client-page",
    label: "GET /v3.0/pinpoints?limit=20, a client's token",
    request: { method: "GET", url: page, headers: { Authorization: `Bearer ${token}` } },
    status: 200,
  };
  const personPage: Target = {
    key: "person-page",
    label: "GET /v3.0/pinpoints?limit=20, a person's token (editor)",
    request: { method: "GET", url: page },
    headersNow: async () => ({ Authorization: `Bearer ${await personToken(session, seeded.accountA)}` }),
    status: 200,
  };
  const clientToken: Target = {
    key: "client-token",
    label: "POST /v3.0/oauth2/token (client credentials, SHA-256)",
    request: {
      method: "POST",
      url: new URL("/v3.0/oauth2/token", rt.api).href,
      headers: {
        Authorization: `Basic ${btoa(`${seeded.client.id}:${seeded.client.secret}`)}`,
        "Content-Type": "application/x-www-form-urlencoded",
      },
      bodyFile: tokenForm,
    },
    status: 200,
  };
  const personSignIn: Target = {
    key: "sign-in",
    label: "POST /v3.0/auth/sign-in (PBKDF2, 100,000 iterations; a new session)",
    request: {
      method: "POST",
      url: new URL("/v3.0/auth/sign-in", rt.api).href,
      headers: { "Content-Type": "application/json" },
      bodyFile: signInBody,
    },
    status: 200,
  };
  return [
    { name: "people", alternate: true, targets: [clientPage, personPage] },
    { name: "sign-in", targets: [clientToken, personSignIn] },
  ];
}
