/**
 * The bare Hono + D1 Worker the HTTP group (bench/http.ts) serves with `wrangler dev` beside the
 * service: the same SQL as the service's get by id and first page, with no middleware, auth,
 * validation, cursor or mapping. What any Hono Worker answering these requests pays under
 * `wrangler dev` on this machine. Two variables each add one thing the service does, to show what
 * it costs there: LOG_LINE, one JSON line per request as src/http/middleware/request-log.ts writes it; SESSION,
 * the query in a D1 session with its bookmark returned, as src/http/middleware/d1-session.ts runs every request.
 */
import { Hono } from "hono";

type Env = { DB: D1Database; LOG_LINE?: string; SESSION?: string };

const PAGE = 20;

const app = new Hono<{ Bindings: { DB: D1Database | D1DatabaseSession } }>();

app.get("/v3.0/pinpoints/:id", async (c) =>
  c.json(
    await c.env.DB.prepare("SELECT * FROM pinpoints WHERE id = ?")
      .bind(Number(c.req.param("id")))
      .first(),
  ),
);

// The service's first page: one account's rows in id order, over the (account_id, id) index.
app.get("/v3.0/pinpoints", async (c) => {
  const { results } = await c.env.DB.prepare("SELECT * FROM pinpoints WHERE account_id = ? ORDER BY id LIMIT ?")
    .bind(Number(c.req.query("account")), PAGE)
    .all();
  return c.json({ results });
});

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    if (!env.LOG_LINE && !env.SESSION) return app.fetch(request, env, ctx);
    const started = performance.now();
    const session = env.SESSION ? env.DB.withSession("first-unconstrained") : null;
    const response = await app.fetch(request, session ? { DB: session } : env, ctx);
    if (session) response.headers.set("X-D1-Bookmark", session.getBookmark() ?? "");
    if (env.LOG_LINE) {
      const line = {
        level: "info",
        message: "request",
        request_id: crypto.randomUUID(),
        method: request.method,
        route: new URL(request.url).pathname,
        status: response.status,
        duration_ms: Math.round(performance.now() - started),
        account_id: 1,
        client_id: "bare",
        key_id: null,
      };
      console.info(JSON.stringify(line));
    }
    return response;
  },
};
