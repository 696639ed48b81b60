/** Request and response shapes of lists, derived from the `lists` table. */
import { createInsertSchema, createSelectSchema, createUpdateSchema } from "drizzle-zod";
import * as z from "zod";
import { writtenByJson } from "../auth/actor";
import { lists } from "../db/schema";
import * as field from "../fields/schemas";
import { pageQuery } from "../http/pagination";

const refinements = {
  name: () => field.name,
  description: field.description.optional(),
};
const writable = { name: true, description: true } as const;

/** POST body: `name` required. */
export const listCreate = createInsertSchema(lists, refinements).pick(writable).meta({ id: "ListCreate" });
/** PUT body: any subset; `"description": null` clears it. */
export const listUpdate = createUpdateSchema(lists, refinements).pick(writable).meta({ id: "ListUpdate" });

/** A list as the API returns it. */
export const listJson = createSelectSchema(lists)
  .pick({ id: true, ...writable })
  .extend({ created_at: z.iso.datetime(), updated_at: z.iso.datetime(), ...writtenByJson })
  .meta({ id: "List" });
export type ListJson = z.output<typeof listJson>;

/**
 * The query of GET /v3.0/lists: a page, and `user`, which the original service's WordPress plugin sends
 * to fill its list picker (`?user=<its user id>&limit=400`, docs/api.md "Clients of the original
 * service"). The lists read are the caller's own (or its key's) whoever it names, so it is accepted and
 * ignored, empty or not, and page links do not carry it.
 */
export const listsQuery = pageQuery.extend({
  user: z
    .string()
    .optional()
    .meta({
      description:
        "Ignored, whatever its value: your lists are your own. Accepted for the original service's WordPress " +
        "plugin, which sends it",
      deprecated: true,
    }),
});

/** Membership bodies: an array of `{"id": <pinpoint id>}`; items are checked one by one. */
export const MAX_BATCH_ITEMS = 1000;
export const membershipBody = z.array(z.unknown(), "must be an array of objects with an id");

export const membershipItem = z.object({ id: field.id });

/** Why one item of a batch was not applied. */
const batchItemError = z.object({
  index: z.number().int().meta({ description: "The item's position in the request body, from 0" }),
  id: z.unknown().meta({ description: "The item's id as sent" }),
  error: z.enum(["invalid", "not_found", "forbidden", "not_member"]),
});
export type BatchItemError = z.output<typeof batchItemError>;

/** The answer to a membership batch: how many items were sent, and those not applied. */
export const batchResultJson = z.object({ total: z.number().int(), errors: z.array(batchItemError) });
export type BatchResult = z.output<typeof batchResultJson>;

/** A whole new order names at most this many ids: a longer list is reordered by moves. */
export const MAX_ORDER_IDS = 10_000;

/** A 400 about a list's order names at most this many ids of each kind that are wrong. */
export const MAX_NAMED = 100;

/** `{"ids": [...]}`: every member of the list, each once, in the new order. */
const orderByIds = z
  .object({
    ids: z
      .array(field.id)
      .max(MAX_ORDER_IDS, `must have at most ${MAX_ORDER_IDS.toLocaleString("en-US")} ids; move members one by one`)
      .meta({ description: "Every member's pinpoint id, each once, in the new order" }),
  })
  .meta({ id: "ListOrder" });

/** `{"move": id, "before": id}`: one member moved before another, or to the end (`"before": null`). */
const orderByMove = z
  .object({
    move: field.id.meta({ description: "The member to move (its pinpoint id)" }),
    before: field.id.nullable().meta({ description: "The member it goes before; `null`: after the last one" }),
  })
  .meta({ id: "ListMove" });

/** The body of PUT /v3.0/lists/{id}/pinpoints/order as documented: one of the two. */
export const orderChangeDoc = z.union([orderByIds, orderByMove]);

/**
 * The body as validated: one of the two, each field checked where it is (so every mistake has its own
 * pointer), ids each once, and a move of one member before another.
 */
export const orderChange = z
  .object({
    ids: orderByIds.shape.ids.optional(),
    move: orderByMove.shape.move.optional(),
    before: orderByMove.shape.before.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.ids === undefined && body.move === undefined) {
      ctx.addIssue({ code: "custom", path: [], message: 'must have "ids" (a whole order) or "move" (one member)' });
    }
    if (body.ids !== undefined && body.move !== undefined) {
      ctx.addIssue({ code: "custom", path: ["move"], message: 'cannot be sent with "ids": send one or the other' });
    }
    if (body.move !== undefined && body.before === undefined) {
      ctx.addIssue({ code: "custom", path: ["before"], message: "is required: a member's id, or null for the end" });
    }
    if (body.move !== undefined && body.before === body.move) {
      ctx.addIssue({ code: "custom", path: ["before"], message: "must be another member than the one moved" });
    }
    // Each repeat by its pointer, the first MAX_NAMED of them: a body of one id 10,000 times gets a short answer.
    const first = new Map<number, number>();
    let repeats = 0;
    body.ids?.forEach((id, index) => {
      const earlier = first.get(id);
      if (earlier === undefined) first.set(id, index);
      else if (++repeats <= MAX_NAMED) {
        ctx.addIssue({ code: "custom", path: ["ids", index], message: `repeats /ids/${earlier}` });
      }
    });
    if (repeats > MAX_NAMED) {
      ctx.addIssue({ code: "custom", path: ["ids"], message: `repeats ${repeats - MAX_NAMED} more ids` });
    }
  })
  .transform((body): OrderChange =>
    body.ids !== undefined ? { ids: body.ids } : { move: body.move!, before: body.before! },
  );

/** A change of a list's order: a whole order, or one move (`before` null: to the end). */
export type OrderChange = { ids: number[] } | { move: number; before: number | null };
