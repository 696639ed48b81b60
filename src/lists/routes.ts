/** /v3.0/lists and their membership: HTTP in, typed store call out. */
import * as z from "zod";
import { actorsOf, toJsonWithActors, writerOf } from "../auth/actor";
import { resourceApp } from "../auth/resource-app";
import { ApiError } from "../core/problem";
import { endListGrants } from "../db/list-grants";
import { assertListPublished } from "../db/published";
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from "../fields/schemas";
import { pageOf, paginate } from "../http/pagination";
import { ifMatch, jsonWithETag, notModifiedResponse, setETag } from "../http/etag";
import { ID, pathId } from "../http/path";
import { created } from "../http/responses";
import { jsonBodyLimit, operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { listToJson } from "./json";
import { addToList, removeFromList } from "./membership";
import { changeOrder } from "./order";
import {
  batchResultJson,
  listCreate,
  listJson,
  listsQuery,
  listUpdate,
  MAX_BATCH_ITEMS,
  MAX_ORDER_IDS,
  membershipBody,
  membershipItem,
  orderChange,
  orderChangeDoc,
} from "./schemas";
import { listRows, pageListsAmong } from "./store";

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

/** A membership body as documented: the validator takes any array, so that each item gets its own verdict. */
const membershipDoc = { "application/json": z.array(membershipItem).max(MAX_BATCH_ITEMS) };

const membershipExample = { "application/json": [{ id: 1 }, { id: 2 }] };

/** A list's name and description at their longest, however encoded (route-metadata.ts). */
const LIST_BODY_BYTES = jsonBodyLimit(MAX_NAME_LENGTH + MAX_DESCRIPTION_LENGTH);

/** A whole order: 10,000 ids of 15 digits, one a line indented by up to 16 spaces, is about 340 KB. */
const ORDER_BODY_BYTES = 512 * 1024;

/** RFC 7240: whether the client asks for a minimal answer, the documented 204. */
const prefersMinimal = (prefer: string | undefined) => /\breturn=minimal\b/i.test(prefer ?? "");

/** What each route does, for the API reference (src/openapi). */
const operations = {
  list: operation({
    summary: "List your lists",
    description: "With a publishable key, the lists it publishes.",
    operationId: "listLists",
    publishable: true,
    responses: { 200: pageOf(listJson) },
  }),
  create: operation({
    summary: "Create a list",
    description: "`name` is required; `description` is HTML, stored sanitized.",
    operationId: "createList",
    maxBodyBytes: LIST_BODY_BYTES,
    examples: { "application/json": { name: "Best of Paris", description: "<p>Our favourite places</p>" } },
    responses: { 201: listJson },
  }),
  get: operation({
    summary: "Get a list",
    operationId: "getList",
    publishable: true,
    responses: { 200: listJson, 304: notModifiedResponse },
  }),
  update: operation({
    summary: "Change a list",
    description: "Changes only the fields sent; `null` clears the description.",
    operationId: "updateList",
    maxBodyBytes: LIST_BODY_BYTES,
    examples: { "application/json": { description: null } },
    responses: { 200: listJson },
    errors: [412],
  }),
  delete: operation({
    summary: "Delete a list",
    description:
      "The pinpoints in it are not deleted. The people given the list lose it, and invitations to it are revoked.",
    operationId: "deleteList",
    responses: { 204: { description: "Deleted" } },
    errors: [412],
  }),
  add: operation({
    summary: "Add pinpoints to a list",
    description:
      `An array of \`{"id": <pinpoint id>}\`, at most ${MAX_BATCH_ITEMS} items (413 beyond), applied in one ` +
      "transaction. Valid items are added even when others fail; `errors` names each item that was not " +
      "(`invalid`, `not_found`, `forbidden`). Adding a member twice is not an error.",
    operationId: "addListPinpoints",
    body: membershipDoc,
    examples: membershipExample,
    responses: { 200: batchResultJson },
  }),
  remove: operation({
    summary: "Remove pinpoints from a list",
    description:
      "The same body and answer as adding; a pinpoint that is not in the list is reported as `not_member`. " +
      "With `Prefer: return=minimal` the answer is 204 without a body.",
    operationId: "removeListPinpoints",
    body: membershipDoc,
    examples: membershipExample,
    responses: {
      200: batchResultJson,
      204: {
        description: "Removed (`Prefer: return=minimal`)",
        headers: { "Preference-Applied": { description: "`return=minimal`" } },
      },
    },
  }),
  reorder: operation({
    summary: "Order a list's pinpoints",
    description:
      `\`{"ids": [...]}\`: every member's pinpoint id, each once, in the new order (at most ${MAX_ORDER_IDS.toLocaleString("en-US")}); ` +
      'or `{"move": <id>, "before": <id>}`: one member moved before another, `"before": null` to the end. ' +
      "Ids that are not exactly the members (one missing, one that is not a member, one sent twice) are a 400 " +
      "naming each. The answer is the list, whose version (`ETag`) moved if the order changed: `If-Match` " +
      "takes the list's `ETag`. Read the order with `GET /v3.0/pinpoints?list={id}&order=position`. " +
      "With `Prefer: return=minimal` the answer is 204 without a body.",
    operationId: "reorderListPinpoints",
    maxBodyBytes: ORDER_BODY_BYTES,
    body: { "application/json": orderChangeDoc },
    examples: { "application/json": { move: 2, before: 1 } },
    responses: {
      200: listJson,
      204: {
        description: "Ordered (`Prefer: return=minimal`)",
        headers: { "Preference-Applied": { description: "`return=minimal`" } },
      },
    },
    errors: [412],
  }),
};

export const listRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", listsQuery), async (c) =>
      c.json(
        await paginate(c, {
          collection: "lists",
          query: c.req.valid("query"),
          fetch: (bound, take) => {
            const { principal, reach } = c.var;
            // A publishable key reads the lists it publishes; a list collaborator, the lists given to them.
            const among = principal.kind === "key" ? principal.lists : reach.sees;
            return among !== null
              ? pageListsAmong(c.env.DB, principal.accountId, among, bound, take)
              : listRows.page(c.env.DB, principal.accountId, bound, take);
          },
          pageJson: (rows) => toJsonWithActors(c, rows, listToJson),
        }),
      ),
    ),
  )
  .post(
    "/",
    ...operations.create(validate("json", listCreate), async (c) => {
      const row = await listRows.insert(c.env.DB, writerOf(c.var.principal), c.req.valid("json"));
      setETag(c, row.version);
      return created(c, `/v3.0/lists/${row.id}`, listToJson(row, await actorsOf(c, [row])));
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(async (c) => {
      const { principal, reach } = c.var;
      const id = pathId(c, "list");
      if (principal.kind === "key") await assertListPublished(c.env.DB, principal, id);
      const row = await listRows.get(c.env.DB, principal.accountId, id, reach);
      return jsonWithETag(c, row.version, listToJson(row, await actorsOf(c, [row])));
    }),
  )
  .put(
    `/${ID}`,
    ...operations.update(validate("json", listUpdate), async (c) => {
      const { principal, reach } = c.var;
      const id = pathId(c, "list");
      const row = await listRows.update(c.env.DB, writerOf(principal), id, c.req.valid("json"), reach, ifMatch(c));
      setETag(c, row.version);
      return c.json(listToJson(row, await actorsOf(c, [row])));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.delete(async (c) => {
      const { principal, reach } = c.var;
      const id = pathId(c, "list");
      await listRows.delete(c.env.DB, writerOf(principal), id, reach, ifMatch(c));
      // The people given the list, and those invited to it, lose it with it (src/db/list-grants.ts).
      await endListGrants(c.env.DB, principal.accountId, id);
      return c.body(null, 204);
    }),
  )
  .post(
    `/${ID}/pinpoints`,
    ...operations.add(membershipItems, async (c) => {
      const items = checkBatchSize(c.req.valid("json"));
      const { principal, reach } = c.var;
      return c.json(await addToList(c.env.DB, writerOf(principal), pathId(c, "list"), reach, items));
    }),
  )
  .delete(
    `/${ID}/pinpoints`,
    ...operations.remove(membershipItems, async (c) => {
      const items = checkBatchSize(c.req.valid("json"));
      const { principal, reach } = c.var;
      const result = await removeFromList(c.env.DB, writerOf(principal), pathId(c, "list"), reach, items);
      if (prefersMinimal(c.req.header("Prefer"))) {
        c.header("Preference-Applied", "return=minimal");
        return c.body(null, 204);
      }
      return c.json(result);
    }),
  )
  .put(
    `/${ID}/pinpoints/order`,
    ...operations.reorder(validate("json", orderChange), async (c) => {
      const { principal, reach } = c.var;
      const id = pathId(c, "list");
      const row = await changeOrder(c.env.DB, writerOf(principal), id, reach, c.req.valid("json"), ifMatch(c));
      setETag(c, row.version);
      if (prefersMinimal(c.req.header("Prefer"))) {
        c.header("Preference-Applied", "return=minimal");
        return c.body(null, 204);
      }
      return c.json(listToJson(row, await actorsOf(c, [row])));
    }),
  );
