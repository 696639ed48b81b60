/**
 * A known path asked with a method it does not take is a 405 with `Allow`
 * (RFC 9110 §15.5.6), answered before anything else reads the request:
 * credentials, bookmarks, query parameters and bodies belong to an operation,
 * and there is none to check them for. So `TRACE` on a tile is a 405 whatever
 * credentials it carries, and a client learns nothing from it that the public
 * OpenAPI document does not say. The paths and their methods are read off the
 * app's routes, as the document is. A path no route has goes on: the resource
 * it lies under checks its credentials, then the app answers 404
 * (src/http/errors.ts).
 */
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import { PatternRouter } from "hono/router/pattern-router";
import type { RouterRoute } from "hono/types";
import type { AppEnv } from "../../core/env";
import { ApiError } from "../../core/problem";
import { trimEnd } from "../../core/trim";

/**
 * The methods a path takes, as `Allow` lists them: its routes' methods, `HEAD` where `GET` is (Hono answers
 * HEAD with the GET route), and `OPTIONS` (CORS answers it everywhere). Empty for a path no route has.
 */
export function allowedMethods(routes: readonly RouterRoute[]): (path: string) => string[] {
  const router = new PatternRouter<string>();
  // "ALL" routes are middleware, which every path under them passes through.
  for (const route of routes) if (route.method !== "ALL") router.add("ALL", route.path, route.method);
  return (path) => {
    const methods = new Set(router.match("ALL", path.length > 1 ? trimEnd(path, "/") : path)[0].map(([m]) => m));
    if (methods.size === 0) return [];
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    return [...methods];
  };
}

/**
 * Middleware: 405 with `Allow` when no route takes the request's method on its path but some route takes
 * another. `routes` is read on the first request, once the app holds every route.
 */
export const checkMethod = (routes: () => readonly RouterRoute[]) => {
  let allowed: ((path: string) => string[]) | null = null;
  return createMiddleware<AppEnv>(async function checkMethod(c, next) {
    // The router matched this method's routes (HEAD as GET); middleware alone is no operation.
    if (matchedRoutes(c).some((route) => route.method !== "ALL")) return next();
    const methods = (allowed ??= allowedMethods(routes()))(c.req.path);
    if (methods.length === 0) return next();
    const allow = methods.join(", ");
    throw new ApiError("method_not_allowed", `${c.req.method} is not supported here; use ${allow}.`, {
      headers: { Allow: allow },
    });
  });
};
