/** The scopes a token can carry, and which one each HTTP method needs (read for GET/HEAD, write otherwise). */
export const SCOPES = ["read", "write"] as const;

export type Scope = (typeof SCOPES)[number];

/** The scope an HTTP method needs. */
export function scopeFor(method: string): Scope {
  return method === "GET" || method === "HEAD" ? "read" : "write";
}
