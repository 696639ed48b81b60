/** /v3.0/lists and their membership: HTTP in, typed store call out. */
import { ownedRows } from "../db/owned";
import { lists } from "../db/schema";
import { paginate, pageQuery } from "../http/pagination";
import { ID, pathId } from "../http/path";
import { ApiError } from "../http/problem";
import { created } from "../http/responses";
import { validate } from "../http/validation";
import { resourceApp } from "../resource";
import { listToJson } from "./json";
import { addToList, removeFromList } from "./membership";
import { listCreate, listUpdate, MAX_BATCH_ITEMS, membershipBody } from "./schemas";

const listRows = ownedRows(lists, { what: "list" });

/** Batches past the limit are refused whole (413), before any item is looked at. */
const membershipItems = validate("json", membershipBody);

function checkBatchSize(items: readonly unknown[]): readonly unknown[] {
  if (items.length > MAX_BATCH_ITEMS) {
    throw new ApiError(
      "payload_too_large",
      `A batch may have at most ${MAX_BATCH_ITEMS} items; this one has ${items.length}.`,
    );
  }
  return items;
}

export const listRoutes = resourceApp()
  .get("/", validate("query", pageQuery), async (c) =>
    c.json(
      await paginate(c, {
        collection: "lists",
        query: c.req.valid("query"),
        fetch: (bound, take) => listRows.page(c.env.DB, c.var.principal.accountId, bound, take),
        toJson: listToJson,
      }),
    ),
  )
  .post("/", validate("json", listCreate), async (c) => {
    const row = await listRows.insert(c.env.DB, c.var.principal.accountId, c.req.valid("json"));
    return created(c, `/v3.0/lists/${row.id}`, listToJson(row));
  })
  .get(`/${ID}`, async (c) =>
    c.json(listToJson(await listRows.get(c.env.DB, c.var.principal.accountId, pathId(c, "list")))),
  )
  .put(`/${ID}`, validate("json", listUpdate), async (c) => {
    const row = await listRows.update(c.env.DB, c.var.principal.accountId, pathId(c, "list"), c.req.valid("json"));
    return c.json(listToJson(row));
  })
  .delete(`/${ID}`, async (c) => {
    await listRows.delete(c.env.DB, c.var.principal.accountId, pathId(c, "list"));
    return c.body(null, 204);
  })
  .post(`/${ID}/pinpoints`, membershipItems, async (c) => {
    const items = checkBatchSize(c.req.valid("json"));
    return c.json(await addToList(c.env.DB, c.var.principal.accountId, pathId(c, "list"), items));
  })
  .delete(`/${ID}/pinpoints`, membershipItems, async (c) => {
    const items = checkBatchSize(c.req.valid("json"));
    const result = await removeFromList(c.env.DB, c.var.principal.accountId, pathId(c, "list"), items);
    // RFC 7240: a client that asks for a minimal response gets the documented 204.
    if (/\breturn=minimal\b/i.test(c.req.header("Prefer") ?? "")) {
      c.header("Preference-Applied", "return=minimal");
      return c.body(null, 204);
    }
    return c.json(result);
  });
