/**
 * Whether the caller may call the operation a request matched, and on which rows (docs/people-and-roles.md).
 * For a person, the role table (./roles.ts) decides: what their role does not allow is refused with 403
 * `role_forbidden`, and what it allows on some rows only (`own`, `list`) becomes the request's reach
 * (src/core/env.ts `Reach`), which the stores apply in SQL (src/db/reach.ts). An operation on the person's
 * own standing (./roles.ts `OWN_STANDING`) is every person's. A client is refused what only a person may do
 * (403 `person_required`) and otherwise reaches its whole account, as its scopes allow.
 * The token check (./bearer.ts) runs this before the scope check, so a viewer asking to write is told what
 * their role allows, not which scope their token lacks.
 */
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv, ListRole, PersonPrincipal, Principal, Reach, Role } from "../core/env";
import { ApiError } from "../core/problem";
import { WHOLE_ACCOUNT } from "../db/reach";
import { matchedOperation } from "../http/route-metadata";
import { actorOf } from "./actor";
import { isAccountOperation, OWN_STANDING, PEOPLE_ONLY, PERMISSIONS, permission, type AccountOperation } from "./roles";

/** The operation whose reach is what a person reads of the account's content. */
const READ_CONTENT: AccountOperation = "getList";

/** The role a person is answered by: their account role, else the collaborator's role they have. */
function roleLabel(role: Role | null, lists: ReadonlyMap<number, ListRole>): string {
  if (role !== null) return role;
  return [...lists.values()].includes("editor") ? "list editor" : "list viewer";
}

/**
 * The rows `operation` reaches for a person: the whole account where a cell of theirs allows it all; else
 * what they created (where their role's cell says `own`) and what is in or of the lists whose
 * collaborator's cell allows it; nothing where nothing allows it.
 */
function personReach(person: PersonPrincipal, operation: AccountOperation): Reach {
  const { role, lists } = person;
  const cells = PERMISSIONS[operation];
  const best = permission(operation, role, lists.values());
  const roleCell = role === null ? "none" : cells[role];
  const byList = [...lists].filter(([, listRole]) => cells[`list ${listRole}`] !== "none");
  const label =
    role !== null && roleCell === best ? role : best === "none" ? roleLabel(role, lists) : `list ${byList[0]![1]}`;
  const contentRead = permission(READ_CONTENT, role, lists.values());
  const sees =
    contentRead === "all"
      ? null
      : [...lists].filter(([, listRole]) => PERMISSIONS[READ_CONTENT][`list ${listRole}`] !== "none").map(([id]) => id);
  if (best === "all") return { role: label, acts: null, sees };
  return {
    role: label,
    acts: {
      // What the person's writes store in `created_by` (./actor.ts), so `own` is exactly what they created.
      createdBy: roleCell === "own" ? actorOf(person) : null,
      lists: byList.map(([id]) => id),
    },
    sees,
  };
}

/** The rows `operation` reaches for `principal` (for an operation a request uses besides its own). */
export function reachFor(principal: Principal, operation: AccountOperation): Reach {
  return principal.kind === "person" ? personReach(principal, operation) : WHOLE_ACCOUNT;
}

/** Whether the request matched a route (not only the middleware every path under a resource meets). */
const routeMatched = (c: Context<AppEnv>) => matchedRoutes(c).some((route) => route.method !== "ALL");

/**
 * Throws unless `principal` may call the operation the request matched; returns its reach. A request that
 * matched no route passes, to be answered 404 as before.
 */
export function authorizeOperation(c: Context<AppEnv>, principal: Principal): Reach {
  if (principal.kind === "key") return WHOLE_ACCOUNT;
  const spec = matchedOperation(c);
  const operationId = spec?.operationId;
  const what = spec ? `${spec.summary} (${operationId})` : "this operation";
  const ownStanding = operationId !== undefined && OWN_STANDING.has(operationId);
  if (principal.kind === "client") {
    const peopleOnly = operationId !== undefined && isAccountOperation(operationId) && PEOPLE_ONLY.has(operationId);
    if (peopleOnly || ownStanding) {
      throw new ApiError(
        "person_required",
        `Only a person may do this: ${what}. A client's token cannot, whatever its scopes.`,
      );
    }
    return WHOLE_ACCOUNT;
  }
  if (ownStanding) {
    // Whatever their role, which decides what they may do with the account, not whether they stay in it;
    // it reaches none of the account's content.
    return { role: roleLabel(principal.role, principal.lists), acts: { createdBy: null, lists: [] }, sees: [] };
  }
  if (operationId === undefined || !isAccountOperation(operationId)) {
    if (operationId === undefined && !routeMatched(c)) return WHOLE_ACCOUNT;
    // An operation the role table has no row for is open to no person until it has one.
    throw new ApiError("role_forbidden", `No role may do this yet: ${what}.`);
  }
  const reach = personReach(principal, operationId);
  if (permission(operationId, principal.role, principal.lists.values()) === "none") {
    throw new ApiError("role_forbidden", `Your role (${reach.role}) does not allow this: ${what}.`);
  }
  return reach;
}
