/** Path parameters: `{id}` in every resource path, `{person_id}` where a path names a person. */
import type { Context } from "hono";
import { notFound } from "../core/problem";

/** Route suffix for `{id}`: only digits match, anything else is an unknown path (404). */
export const ID = ":id{[0-9]+}";

/** Route suffix for `{person_id}`, a person's id where the path names a person, not the resource's own id. */
export const PERSON_ID = ":person_id{[0-9]+}";

/** The `{id}` (or `{param}`) of the path; ids no resource can have (0, beyond 2^53) are simply not found. */
export function pathId(c: Context, what: string, param = "id"): number {
  const id = Number(c.req.param(param));
  if (!Number.isSafeInteger(id) || id < 1) throw notFound(what);
  return id;
}
