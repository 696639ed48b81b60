/**
 * Unknown query parameters are a 400 naming each one (and the parameter it
 * was probably meant to be), as Stripe answers: `?lmit=1` silently returning
 * every row hides a typo. The known parameters of a route are read off its
 * own query validators (the same marks the OpenAPI document is built from),
 * so a parameter a route documents is a parameter it accepts.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import * as z from "zod";
import type { AppEnv } from "../../core/env";
import { ApiError, type FieldError } from "../../core/problem";
import { marksOf } from "../route-metadata";

/**
 * Accepted on every route: the token (RFC 6750 §2.3) and a publishable key,
 * both of which a client may put in the query of any URL.
 */
export const ALWAYS_ACCEPTED = ["access_token", "key"] as const;

/**
 * Accepted on every route and ignored: the cache buster browsers' HTTP libraries add
 * (`_=<timestamp>`: jQuery's `cache: false`), so a page using one is not refused.
 */
export const IGNORED = "_";

/**
 * A credential in the query, or undefined when there is none: an empty one (`key=`, as a page or a
 * generated client sends a key it does not have) is no credential, so it is not one of several
 * beside an `Authorization` header (src/auth/bearer.ts), and links do not carry it on.
 */
export function queryCredential(c: Context, name: (typeof ALWAYS_ACCEPTED)[number]): string | undefined {
  return c.req.query(name) || undefined;
}

/** The credentials this request carries in its query, which the links of its answer carry on. */
export function queryCredentials(c: Context): [name: string, value: string][] {
  return ALWAYS_ACCEPTED.flatMap((name) => {
    const value = queryCredential(c, name);
    return value === undefined ? [] : [[name, value] as [string, string]];
  });
}

/** The query parameters the matched route's validators name, or null when no documented route matched. */
function knownParameters(c: Context): Set<string> | null {
  const known = new Set<string>([...ALWAYS_ACCEPTED, IGNORED]);
  let documented = false;
  for (const route of matchedRoutes(c)) {
    const { validation, operation } = marksOf(route.handler);
    if (operation) documented = true;
    if (validation?.target === "query" && validation.schema instanceof z.ZodObject) {
      for (const name of Object.keys(validation.schema.shape)) known.add(name);
    }
  }
  return documented ? known : null;
}

/** Levenshtein distance, bounded: names are short, and only a close one is worth suggesting. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

function suggestion(name: string, known: Set<string>): string {
  const close = [...known].filter((k) => distance(name.toLowerCase(), k) <= 2).sort()[0];
  return close ? ` (did you mean \`${close}\`?)` : "";
}

/**
 * Middleware: 400 `validation_failed` for any query parameter the matched
 * route under `prefix` does not take. Mounted on every path (a path-scoped
 * `use` would count as the matched route of an unknown path in the log).
 */
export const rejectUnknownQueryParameters = (prefix: string) =>
  createMiddleware<AppEnv>(async function rejectUnknownQueryParameters(c, next) {
    if (!c.req.path.startsWith(prefix)) return next();
    const names = Object.keys(c.req.queries());
    if (names.length === 0) return next();
    const known = knownParameters(c);
    if (known === null) return next();
    const errors: FieldError[] = names
      .filter((name) => !known.has(name))
      .map((parameter) => ({
        parameter,
        detail: `is not a parameter of this operation${suggestion(parameter, known)}`,
      }));
    if (errors.length > 0) {
      const listed = errors.map((e) => ("parameter" in e ? e.parameter : "")).join(", ");
      throw new ApiError("validation_failed", `Unknown query parameter(s): ${listed}.`, { errors });
    }
    return next();
  });
