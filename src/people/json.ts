/** Sessions, people and tokens as the API shows them: one function per shape. */
import type { Context } from "hono";
import type * as z from "zod";
import type { AppEnv } from "../core/env";
import { csrfToken } from "./csrf";
import type { meJson, sessionItemJson, sessionJson } from "./schemas";
import { accountsOf, collaborationsOf, passkeyCount, personById, type Person } from "./store";

export type SessionRow = {
  id: string;
  account_id: number | null;
  second_factor: "none" | "pending" | "done";
  user_agent: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
};

const iso = (ms: number) => new Date(ms).toISOString();

export function sessionItemToJson(row: SessionRow, currentId: string): z.output<typeof sessionItemJson> {
  return {
    id: row.id,
    current: row.id === currentId,
    second_factor: row.second_factor,
    account: row.account_id,
    user_agent: row.user_agent,
    created_at: iso(row.created_at),
    last_seen_at: iso(row.last_seen_at),
    expires_at: iso(row.expires_at),
  };
}

/** The request's session (`c.var.session`), its CSRF token, and, once signed in fully, its person and accounts. */
export async function sessionToJson(c: Context<AppEnv>): Promise<z.output<typeof sessionJson>> {
  const { id, personId, secondFactor } = c.var.session;
  const db = c.env.DB;
  const [row, token] = await Promise.all([
    db.prepare("SELECT * FROM sessions WHERE id = ?").bind(id).first<SessionRow>(),
    csrfToken(c.env, id),
  ]);
  const pending = secondFactor === "pending";
  const [person, accounts] = pending
    ? [undefined, []]
    : await Promise.all([personById(db, personId), accountsOf(db, personId)]);
  return {
    person: person ? { id: person.id, email: person.email, name: person.name } : null,
    session: sessionItemToJson(row!, id),
    csrf_token: token,
    accounts,
  };
}

export async function meToJson(db: D1Database, person: Person): Promise<z.output<typeof meJson>> {
  const [accounts, collaborations, passkeys] = await Promise.all([
    accountsOf(db, person.id),
    collaborationsOf(db, person.id),
    passkeyCount(db, person.id),
  ]);
  return {
    id: person.id,
    email: person.email,
    name: person.name,
    created_at: person.created_at.toISOString(),
    password: person.password_hash !== null,
    totp: person.totp_enabled_at !== null,
    passkeys,
    accounts,
    collaborations: collaborations.map(({ account_id, list_id, role }) => ({
      account: account_id,
      list: list_id,
      role,
    })),
  };
}
