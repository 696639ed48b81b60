/**
 * The person a request on an account's people (members, invitations, list
 * collaborators, clients) acts as. Only people reach these handlers: the
 * token check (src/auth/operation-access.ts) refuses their operations to a
 * client (`person_required`) and to a person whose role the table does not
 * let call them (`role_forbidden`), and a publishable key only reads what is
 * published. The handlers keep the rules the table cannot state (only an
 * owner touches the owner role; an account keeps an owner), for which they
 * need the person and their role.
 */
import type { Context } from "hono";
import type { AppEnv, PersonPrincipal } from "../core/env";

/** The calling person, whom the token check let through. */
export function callingPerson(c: Context<AppEnv>): PersonPrincipal {
  const { principal } = c.var;
  if (principal.kind !== "person") throw new Error(`A ${principal.kind} reached an operation only people may call.`);
  return principal;
}
