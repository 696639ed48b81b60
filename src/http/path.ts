/** Path parameters: `{id}` in every resource path. */
import type { Context } from "hono";
import { notFound } from "../core/problem";

/** Route suffix for `{id}`: only digits match, anything else is an unknown path (404). */
export const ID = ":id{[0-9]+}";

/** The `{id}` of the path; ids no resource can have (0, beyond 2^53) are simply not found. */
export function pathId(c: Context, what: string): number {
  const id = Number(c.req.param("id"));
  if (!Number.isSafeInteger(id) || id < 1) throw notFound(what);
  return id;
}
