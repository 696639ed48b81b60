// Baseline: the cost of the storage alone. The bare SQL of the service's reads
// and writes over the same D1 database, and the bare steps of an upload into
// R2, with no auth, validation, cursor signing or mapping: what any Worker
// answering these requests must pay on this runtime.
const PAGE = 20;
const headers = { "Content-Type": "application/json" };
const json = (value) => new Response(JSON.stringify(value), { headers });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const q = url.searchParams;
    switch (url.pathname) {
      // One row by primary key.
      case "/get":
        return json(
          await env.DB.prepare("SELECT * FROM pinpoints WHERE id = ?")
            .bind(Number(q.get("id")))
            .first(),
        );
      // A keyset page of one account's rows, over the (account_id, id) index.
      case "/page": {
        const { results } = await env.DB.prepare(
          "SELECT * FROM pinpoints WHERE account_id = ? AND id > ? ORDER BY id LIMIT ?",
        )
          .bind(Number(q.get("account")), Number(q.get("after") ?? 0), PAGE)
          .all();
        return json({ results });
      }
      // A keyset page of a list's members, joined to their rows.
      case "/list-page": {
        const { results } = await env.DB.prepare(
          `SELECT p.* FROM list_pinpoints AS lp JOIN pinpoints AS p ON p.id = lp.pinpoint_id
           WHERE lp.list_id = ? AND lp.pinpoint_id > ? ORDER BY lp.pinpoint_id LIMIT ?`,
        )
          .bind(Number(q.get("list")), Number(q.get("after") ?? 0), PAGE)
          .all();
        return json({ results });
      }
      // One row written and read back.
      case "/insert":
        return json(
          await env.DB.prepare(
            `INSERT INTO pinpoints (account_id, name, latitude, longitude, category_id, description, tags)
             VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING *`,
          )
            .bind(Number(q.get("account")), "Bare insert", 48.8566, 2.3522, "<p>A bare insert.</p>", '["bench"]')
            .first(),
        );
      // Receives a body and drops it: what the runtime itself holds while reading an upload.
      case "/sink":
        return json({ bytes: (await request.arrayBuffer()).byteLength });
      // The least any upload of a base64 JSON body into R2 does: parse, decode, put.
      case "/upload": {
        const { media_file: file } = await request.json();
        const bytes = Uint8Array.fromBase64(file.content);
        await env.MEDIA.put(`bare/${crypto.randomUUID()}`, bytes, { httpMetadata: { contentType: file.type } });
        return json({ bytes: bytes.byteLength });
      }
      default:
        return new Response("not found", { status: 404 });
    }
  },
};
