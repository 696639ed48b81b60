/**
 * The role table (./roles.ts) applied to a person's request, after their
 * token: an operation their role does not allow is a 403 `role_forbidden`;
 * one only a person may call is a 403 `person_required` for a client. Until
 * the rows a person reaches are narrowed to their own (`own`) or to their
 * lists (`list`), those cells are refused as well: a person is never let
 * further than the table says, only, for now, less far.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { matchedOperation } from "../http/route-metadata";
import { isAccountOperation, PEOPLE_ONLY, permission } from "./roles";

export const checkRole = createMiddleware<AppEnv>(async function checkRole(c, next) {
  const principal = c.var.principal;
  if (principal.kind === "key") return next();
  const operation = matchedOperation(c)?.operationId;
  const known = operation !== undefined && isAccountOperation(operation);
  if (principal.kind === "client") {
    if (known && PEOPLE_ONLY.has(operation)) {
      throw new ApiError("person_required", `Only a person signed in to the account may call ${operation}.`);
    }
    return next();
  }
  const allowed = known ? permission(operation, principal.role, principal.lists.values()) : "none";
  if (allowed !== "all") {
    const as = principal.role ?? "list collaborator";
    throw new ApiError("role_forbidden", `Your role (${as}) does not allow ${operation ?? "this operation"}.`);
  }
  return next();
});
