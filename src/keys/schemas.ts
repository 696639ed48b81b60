/** Request and response shapes of publishable keys, derived from the `publishable_keys` table. */
import { createSelectSchema } from "drizzle-zod";
import * as z from "zod";
import { clock } from "../core/clock";
import { isOriginPattern, MAX_KEY_LISTS, MAX_KEY_ORIGINS, MAX_ORIGIN_LENGTH } from "../core/publishable-keys";
import { publishableKeys } from "../db/schema";
import * as field from "../fields/schemas";

const EXAMPLE_ORIGINS = "https://maps.example.com, http://localhost:5173 or https://*.example.org";

const origin = z
  .string()
  .max(MAX_ORIGIN_LENGTH, `must be at most ${MAX_ORIGIN_LENGTH} characters`)
  .refine(isOriginPattern, `must be an origin such as ${EXAMPLE_ORIGINS}: scheme, host and port only`);

/** POST body. */
export const keyCreate = z
  .object({
    name: field.name,
    lists: z
      .array(field.id)
      .min(1, "must name at least one list; leave it out to publish every list")
      .max(MAX_KEY_LISTS, `must name at most ${MAX_KEY_LISTS} lists; leave it out to publish every list`)
      .transform((ids) => [...new Set(ids)])
      .optional()
      .meta({ description: "The lists the key reads; absent: every list of the account, now and later" }),
    origins: z
      .array(origin)
      .min(1, "must name at least one origin; leave it out to allow any")
      .max(MAX_KEY_ORIGINS, `must name at most ${MAX_KEY_ORIGINS} origins`)
      .transform((values) => [...new Set(values)])
      .optional()
      .meta({
        description: `The web pages that may use the key (${EXAMPLE_ORIGINS}); absent: any`,
      }),
    expires_at: z.iso
      .datetime({ offset: true })
      .refine((value) => Date.parse(value) > clock.now(), "must be in the future")
      .optional()
      .meta({ description: "When the key stops working; absent: never" }),
  })
  .meta({ id: "PublishableKeyCreate" });

/** A key as the API returns it; `key` itself only once, when it is created. */
export const keyJson = createSelectSchema(publishableKeys)
  .pick({ id: true, name: true, key_prefix: true })
  .extend({
    key_prefix: z.string().meta({ description: "The key's first characters, to recognise it" }),
    lists: z.array(z.int()).nullable().meta({ description: "The lists it reads; null: every list of the account" }),
    origins: z.array(z.string()).nullable().meta({ description: "The origins it is limited to; null: any" }),
    expires_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "PublishableKey" });
export type KeyJson = z.output<typeof keyJson>;

export const createdKeyJson = keyJson
  .extend({
    key: z.string().meta({
      description: "The key, `pk_` and 192 random bits: shown only now (only its hash is stored)",
      example: "pk_3q2-7wQ9mX1bLk0aZr5sT8uVfYhJcN4e",
    }),
  })
  .meta({ id: "CreatedPublishableKey" });
