/** Request and response shapes of a list's collaborators, derived from the `list_collaborators` and `people` tables. */
import { createSelectSchema } from "drizzle-zod";
import * as z from "zod";
import { LIST_ROLES } from "../../auth/roles";
import { listCollaborators, people } from "../../db/schema";

const LIST_ROLE_DESCRIPTION =
  "editor (changes the list, its pinpoints and their events) or viewer (reads them): docs/people-and-roles.md";

/** PUT body. */
export const collaboratorPut = z
  .object({ role: z.enum(LIST_ROLES).meta({ description: LIST_ROLE_DESCRIPTION }) })
  .meta({ id: "CollaboratorPut" });

/** A collaborator as the API returns them: the person (`id` is their person id) and their role on the list. */
export const collaboratorJson = createSelectSchema(people)
  .pick({ id: true, name: true, email: true })
  .extend({
    id: z.int().meta({ description: "The person's id" }),
    list: z.int().meta({ description: "The list's id" }),
    role: createSelectSchema(listCollaborators).shape.role.meta({ description: LIST_ROLE_DESCRIPTION }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime().meta({ description: "When their role last changed" }),
  })
  .meta({ id: "Collaborator" });
export type CollaboratorJson = z.output<typeof collaboratorJson>;
