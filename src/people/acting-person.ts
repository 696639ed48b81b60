/**
 * The person a request on an account's people (members, invitations, list
 * collaborators, clients) acts as. The role table (src/auth/roles.ts) decides
 * who may call these operations; the handlers need the person and their role
 * besides, for the rules the table cannot state (only an owner touches the
 * owner role; an account keeps an owner), so they read them here, checked
 * against the same table.
 */
import type { Context } from "hono";
import { permission, type AccountOperation } from "../auth/roles";
import type { AppEnv, PersonPrincipal } from "../core/env";
import { ApiError } from "../core/problem";

/** The calling person; 403 for a client or a publishable key. */
export function callingPerson(c: Context<AppEnv>): PersonPrincipal {
  const { principal } = c.var;
  if (principal.kind !== "person") {
    throw new ApiError("forbidden", "Only a person signed in to the account may manage its people and clients.");
  }
  return principal;
}

/** The calling person, whom the role table lets call `operation`; 403 for anyone else, clients included. */
export function actingPerson(c: Context<AppEnv>, operation: AccountOperation): PersonPrincipal {
  const principal = callingPerson(c);
  if (permission(operation, principal.role, principal.lists.values()) === "none") {
    throw new ApiError("forbidden", `Your role in this account does not allow ${operation}.`);
  }
  return principal;
}

/** The actor a row records for the person (`person:<id>`, as `created_by` does). */
export const personActor = (person: PersonPrincipal) => `person:${person.personId}`;
