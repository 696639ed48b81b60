/**
 * Request and response shapes of categories, derived from the `categories`
 * table. A category is a shared icon, so its image is required: `image_file`
 * must come with the create and can be replaced, never cleared.
 */
import { createInsertSchema, createSelectSchema, createUpdateSchema } from "drizzle-zod";
import * as z from "zod";
import { writtenByJson } from "../auth/actor";
import { categories } from "../db/schema";
import * as field from "../fields/schemas";
import { imageFile } from "../media/file";

const refinements = { name: () => field.name };
const writable = { name: true } as const;

/** POST body: `name` and `image_file` required. */
export const categoryCreate = createInsertSchema(categories, refinements)
  .pick(writable)
  .extend({ image_file: imageFile })
  .meta({ id: "CategoryCreate" });

/** PUT body: any subset; a new `image_file` replaces the image. */
export const categoryUpdate = createUpdateSchema(categories, refinements)
  .pick(writable)
  .extend({ image_file: imageFile.optional() })
  .meta({ id: "CategoryUpdate" });

/** A category as the API returns it. */
export const categoryJson = createSelectSchema(categories)
  .pick({ id: true, ...writable })
  .extend({
    image_url: z.string().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    ...writtenByJson,
  })
  .meta({ id: "Category" });
export type CategoryJson = z.output<typeof categoryJson>;
