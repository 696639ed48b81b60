/**
 * `X-Request-Id` on every response, errors included: a client's own id is
 * echoed when it is sane, otherwise one is made. Ours rather than
 * hono/request-id: in hono 4.13 that middleware has no validator option and
 * accepts only `[\w-=]`, while clients already send ids with `.` and `:`
 * (trace and span ids), which we have always echoed.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../core/env";

const REQUEST_ID = /^[\w\-=.:]{1,200}$/;

export const requestId = createMiddleware<AppEnv>(async function requestId(c, next) {
  const sent = c.req.header("X-Request-Id");
  const id = sent && REQUEST_ID.test(sent) ? sent : crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("X-Request-Id", id);
});
