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
