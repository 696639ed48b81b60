// Baseline: the cost of the storage alone. The bare SQL of the service's reads
// and writes over the same D1 database, in a D1 session as the service runs
// them, the bare steps of an upload into R2 and of a publicly cached page
// (rate limiter and Cache API), with no auth, validation, cursor signing or
// mapping: what any Worker answering these requests with read replication
// must pay on this runtime.
const PAGE = 20;
const headers = { "Content-Type": "application/json" };
const json = (value) => new Response(JSON.stringify(value), { headers });

const MARKER = '"content":"';

/** The paths that write; the others only read. */
const WRITES = new Set(["/insert", "/bulk-insert", "/upload", "/upload-stream"]);

// A bulk import's write with nothing around it: one statement inserting every row of a JSON array
// parameter, the columns in the order src/pinpoints/bulk-insert.ts binds them; the table's triggers
// (search indexes, change log) run as they do for the service.
const BULK_COLUMNS = [
  "name",
  "address",
  "altitude",
  "category_id",
  "description",
  "description_text",
  "latitude",
  "longitude",
  "media_credits",
  "tags",
  "name_search",
  "address_search",
  "tags_search",
];
const BULK_INSERT =
  `INSERT INTO pinpoints (account_id, ${BULK_COLUMNS.join(", ")}) SELECT ?1, ` +
  BULK_COLUMNS.map((column, i) => (column === "tags" ? `json(value ->> '$[${i}]')` : `value ->> '$[${i}]'`)).join(
    ", ",
  ) +
  " FROM json_each(?2)";

/** Decodes the base64 of the body's first `"content":"..."` chunk by chunk into one buffer. */
async function decodeContentStreaming(request) {
  const out = new Uint8Array(Math.floor((Number(request.headers.get("Content-Length")) * 3) / 4));
  const text = new TextDecoder("latin1");
  const reader = request.body.getReader();
  let state = "before"; // then "content", then "after"
  let carry = "";
  let written = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (state === "after") continue;
    let chunk = carry + text.decode(value);
    carry = "";
    if (state === "before") {
      const start = chunk.indexOf(MARKER);
      if (start < 0) {
        carry = chunk.slice(-MARKER.length);
        continue;
      }
      chunk = chunk.slice(start + MARKER.length);
      state = "content";
    }
    const end = chunk.indexOf('"');
    const base64 = end < 0 ? chunk : chunk.slice(0, end);
    // Whole quads only, until the closing quote.
    const usable = end < 0 ? base64.length - (base64.length % 4) : base64.length;
    written += out.subarray(written).setFromBase64(base64.slice(0, usable)).written;
    carry = base64.slice(usable);
    if (end >= 0) state = "after";
  }
  return out.subarray(0, written);
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const q = url.searchParams;
    // Every query runs in a D1 session and the bookmark goes back, as the service does for every
    // request (read replication, src/http/middleware/d1-session.ts): reads first-unconstrained, writes
    // first-primary. `?session=none` uses the plain binding, to show what a session costs here.
    if (q.get("session") === "none") return answer(url, q, request, env, env.DB, ctx);
    const session = env.DB.withSession(WRITES.has(url.pathname) ? "first-primary" : "first-unconstrained");
    const response = await answer(url, q, request, env, session, ctx);
    response.headers.set("X-D1-Bookmark", session.getBookmark() ?? "");
    return response;
  },
};

/** A keyset page of a list's members, joined to their rows: `limit` of them (20 by default). */
async function listPage(db, q) {
  const { results } = await db
    .prepare(
      `SELECT p.* FROM list_pinpoints AS lp JOIN pinpoints AS p ON p.id = lp.pinpoint_id
       WHERE lp.list_id = ? AND lp.pinpoint_id > ? ORDER BY lp.pinpoint_id LIMIT ?`,
    )
    .bind(Number(q.get("list")), Number(q.get("after") ?? 0), Number(q.get("limit") ?? PAGE))
    .all();
  return { results };
}

async function answer(url, q, request, env, db, ctx) {
  switch (url.pathname) {
    // One row by primary key.
    case "/get":
      return json(
        await db
          .prepare("SELECT * FROM pinpoints WHERE id = ?")
          .bind(Number(q.get("id")))
          .first(),
      );
    // Any read, for the scale group (bench/scale.ts): the bare SQL of a map question.
    case "/sql": {
      const { sql, params } = await request.json();
      const { results } = await db
        .prepare(sql)
        .bind(...params)
        .all();
      return json({ results });
    }
    // A keyset page of one account's rows, over the (account_id, id) index.
    case "/page": {
      const { results } = await db
        .prepare("SELECT * FROM pinpoints WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?")
        .bind(Number(q.get("account")), Number(q.get("after") ?? 0), PAGE)
        .all();
      return json({ results });
    }
    case "/list-page":
      return json(await listPage(db, q));
    // A list page as the public cache serves it (src/http/middleware/public-cache.ts), bare: the viewer
    // counted by the rate limiter (`limiter=no` skips it), the Cache API asked, and on a miss the
    // page read and stored while the answer goes out. The whole URL is the cache key, so a
    // parameter the query ignores makes every request a miss.
    case "/public-page": {
      if (q.get("limiter") !== "no") {
        const viewer = request.headers.get("CF-Connecting-IP") ?? "unknown";
        if (!(await env.PUBLIC_LIMITER.limit({ key: `bare ${viewer}` })).success) {
          return new Response("over the limit", { status: 429 });
        }
      }
      const key = new Request(`${url.origin}/.bare-cache${url.pathname}${url.search}`);
      const found = await caches.default.match(key);
      // A cached answer's headers are immutable; the fetch handler adds one.
      if (found) {
        const hit = new Response(found.body, found);
        hit.headers.set("Cache-Status", "bare; hit");
        return hit;
      }
      const body = JSON.stringify(await listPage(db, q));
      const stored = new Response(body, { headers: { ...headers, "Cache-Control": "max-age=3600" } });
      ctx.waitUntil(caches.default.put(key, stored));
      return new Response(body, { headers: { ...headers, "Cache-Status": "bare; fwd=miss; stored" } });
    }
    // One row written and read back.
    case "/insert":
      return json(
        await db
          .prepare(
            `INSERT INTO pinpoints (account_id, name, latitude, longitude, category_id, description, tags)
             VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING *`,
          )
          .bind(Number(q.get("account")), "Bare insert", 48.8566, 2.3522, "<p>A bare insert.</p>", '["bench"]')
          .first(),
      );
    // A batch of rows (a JSON array of row arrays), as a bulk import writes them.
    case "/bulk-insert": {
      const { meta } = await db
        .prepare(BULK_INSERT)
        .bind(Number(q.get("account")), await request.text())
        .run();
      return json({ inserted: meta.changes });
    }
    // Receives a body and drops it: what the runtime itself holds while reading an upload.
    case "/sink":
      return json({ bytes: (await request.arrayBuffer()).byteLength });
    // The least any create with an upload does: parse, decode, put into R2, insert the row.
    case "/upload": {
      const { name, latitude, longitude, media_file: file } = await request.json();
      const bytes = Uint8Array.fromBase64(file.content);
      const key = `bare/${crypto.randomUUID()}`;
      await env.MEDIA.put(key, bytes, { httpMetadata: { contentType: file.type } });
      return json(
        await db
          .prepare(
            "INSERT INTO pinpoints (account_id, name, latitude, longitude, media_key) VALUES (?, ?, ?, ?, ?) RETURNING *",
          )
          .bind(Number(q.get("account")), name, latitude, longitude, key)
          .first(),
      );
    }
    // The same, streaming: the base64 is decoded as it arrives, so neither the body nor the
    // text is ever whole in memory. It only understands the body layout the benchmark sends;
    // it shows what a streaming parser could reach on this runtime.
    case "/upload-stream": {
      const decoded = await decodeContentStreaming(request);
      const key = `bare/${crypto.randomUUID()}`;
      if (q.get("r2") !== "no") await env.MEDIA.put(key, decoded, { httpMetadata: { contentType: "image/png" } });
      return json(
        await db
          .prepare(
            "INSERT INTO pinpoints (account_id, name, latitude, longitude, media_key) VALUES (?, ?, ?, ?, ?) RETURNING *",
          )
          .bind(Number(q.get("account")), "Bare streamed upload", 0, 0, key)
          .first(),
      );
    }
    default:
      return new Response("not found", { status: 404 });
  }
}
