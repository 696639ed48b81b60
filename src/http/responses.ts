/** Success responses shared by the resources. */
import type { Context } from "hono";

/** 201 with the full object and a `Location` header (absolute, on the request's origin). */
export function created<T>(c: Context, path: string, body: T) {
  c.header("Location", new URL(path, c.req.url).toString());
  return c.json(body, 201);
}
