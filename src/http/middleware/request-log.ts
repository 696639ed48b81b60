/**
 * One structured log line per request, for Workers Logs (observability in
 * wrangler.toml indexes JSON fields): request id, method, route pattern,
 * status, duration and the calling account. Never the URL itself: its query
 * may carry an `access_token` (RFC 6750 §2.3), and no header is logged. A 5xx's
 * error is logged separately by onError (http/errors.ts) with the same request id.
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import type { AppEnv, Principal } from "../../core/env";

export type RequestLogLine = {
  level: "info" | "error";
  message: "request";
  request_id: string;
  method: string;
  route: string | null;
  status: number;
  duration_ms: number;
  account_id: number | null;
  client_id: string | null;
  /** The person whose token made the request. */
  person_id: number | null;
  /** The publishable key of a public read. */
  key_id: number | null;
};

// Regex constraints on parameters (":id{[0-9]+}") are noise in a log; one level of nested braces is enough.
const CONSTRAINT = /\{(?:[^{}]|\{[^{}]*\})*\}/g;
const CATCH_ALL = new Set(["*", "/*"]);

/**
 * The pattern of the route that answered (`/v3.0/pinpoints/:id`), also when
 * a middleware before it refused the request; otherwise the most specific
 * middleware pattern (`/v3.0/pinpoints/*`) for preflights and unknown ids;
 * null when only the app-wide middleware matched (an unknown path).
 */
export function routePattern(c: Context): string | null {
  const routes = matchedRoutes(c);
  const route = routes.findLast((r) => r.method !== "ALL") ?? routes.findLast((r) => !CATCH_ALL.has(r.path));
  if (!route) return null;
  let pattern = patterns.get(route.path);
  if (pattern === undefined) {
    pattern = route.path.replace(CONSTRAINT, "");
    patterns.set(route.path, pattern);
  }
  return pattern;
}

// Route paths are a fixed set, so their cleaned patterns are computed once per isolate.
const patterns = new Map<string, string>();

/** Logs the request once its response is known; mount it right after the request id. */
export const requestLog = createMiddleware<AppEnv>(async function requestLog(c, next) {
  const started = performance.now();
  await next();
  const status = c.res.status;
  // Unset when the request never reached the token check, or failed it.
  const principal = c.get("principal") as Principal | undefined;
  const line: RequestLogLine = {
    level: status >= 500 ? "error" : "info",
    message: "request",
    request_id: c.var.requestId,
    method: c.req.method,
    route: routePattern(c),
    status,
    // Workers advance timers only across I/O, so this is time spent waiting, not CPU time.
    duration_ms: Math.round(performance.now() - started),
    account_id: principal?.accountId ?? null,
    client_id: principal?.kind === "client" ? principal.clientId : null,
    person_id: principal?.kind === "person" ? principal.personId : null,
    key_id: principal?.kind === "key" ? principal.keyId : null,
  };
  // console.info for the lines at level info: Workers Logs files them as info, and `wrangler dev`
  // prints them as they are, where it runs every console.log line through its source-map rewriter.
  if (line.level === "info") console.info(JSON.stringify(line));
  else console.log(JSON.stringify(line));
});
