/** Request and response shapes of an account's members, derived from the `members` and `people` tables. */
import { createSelectSchema } from "drizzle-zod";
import * as z from "zod";
import { ROLES } from "../../auth/roles";
import { members, people } from "../../db/schema";
import * as field from "../../fields/schemas";

const ROLE_DESCRIPTION =
  "owner, admin, editor, contributor or viewer: what each may do is the table of docs/people-and-roles.md";

export const role = z.enum(ROLES).meta({ description: ROLE_DESCRIPTION });

/** A member as the API returns them: the person (`id` is their person id) and their role in this account. */
export const memberJson = createSelectSchema(people)
  .pick({ id: true, name: true, email: true })
  .extend({
    id: z.int().meta({ description: "The person's id, the same in every account they are in" }),
    role: createSelectSchema(members).shape.role.meta({ description: ROLE_DESCRIPTION }),
    created_at: z.iso.datetime().meta({ description: "When they joined the account" }),
    updated_at: z.iso.datetime().meta({ description: "When their role last changed" }),
  })
  .meta({ id: "Member" });
export type MemberJson = z.output<typeof memberJson>;

/** PATCH body. */
export const memberUpdate = z.object({ role }).meta({ id: "MemberUpdate" });

/** POST body of the ownership transfer. */
export const ownershipTransfer = z
  .object({ person_id: field.id.meta({ description: "A member of the account, who becomes its owner" }) })
  .meta({ id: "OwnershipTransfer" });

/** The answer to the transfer: `owner`, the member who is now an owner; `former_owner`, the caller, now an admin. */
export const ownershipTransferred = z
  .object({ owner: memberJson, former_owner: memberJson })
  .meta({ id: "OwnershipTransferred" });
