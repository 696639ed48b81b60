/** Request and response shapes of clients managed from a session, derived from the `clients` table. */
import { createSelectSchema } from "drizzle-zod";
import * as z from "zod";
import { SCOPES } from "../../core/scopes";
import { clients } from "../../db/schema";
import * as field from "../../fields/schemas";

/** Space-separated scopes, as the token endpoint takes them, in canonical order ("read write"). */
const scope = z
  .string()
  .transform((text) => text.split(" ").filter(Boolean))
  .refine((scopes) => scopes.length > 0, "must name at least one scope: read, write or both")
  .refine(
    (scopes) => scopes.every((s) => (SCOPES as readonly string[]).includes(s)),
    `must name only ${SCOPES.join(" and ")}, separated by a space`,
  )
  .transform((scopes) => SCOPES.filter((s) => scopes.includes(s)).join(" "))
  .meta({ description: "The scopes its tokens may carry, space-separated", example: "read write" });

/** POST body. */
export const clientCreate = z
  .object({
    name: field.name.meta({ description: "What the client is, for the people who manage it" }),
    scope: scope.optional().meta({ description: "The scopes its tokens may carry; absent: `read write`" }),
  })
  .meta({ id: "ClientCreate" });

/** A client as the API returns it; never its secret, but once, when it is made or rotated. */
export const clientJson = createSelectSchema(clients)
  .pick({ name: true, scope: true, secret_version: true })
  .extend({
    id: z.string().meta({ description: "The client id (`client_id` at the token endpoint)" }),
    status: z.enum(["active", "revoked"]),
    revoked_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "Client" });
export type ClientJson = z.output<typeof clientJson>;

export const clientWithSecretJson = clientJson
  .extend({
    client_secret: z.string().meta({
      description: "The secret, 256 random bits: shown only now (only its hash is stored)",
      example: "q3Xh0pL2m9vBzR7tY4wK8sN1cD6fG5jH0aE3uI2oP9s",
    }),
  })
  .meta({ id: "ClientWithSecret" });
