/** Request and response shapes of invitations, derived from the `invitations` table. */
import { createSelectSchema } from "drizzle-zod";
import * as z from "zod";
import { actorJson } from "../../auth/actor";
import { LIST_ROLES, ROLES } from "../../auth/roles";
import { invitations } from "../../db/schema";
import * as field from "../../fields/schemas";
import { emailField, personName } from "../email";
import { newPassword } from "../schemas";

export const DEFAULT_EXPIRES_IN = 7 * 24 * 3600;
export const MIN_EXPIRES_IN = 3600;
export const MAX_EXPIRES_IN = 30 * 24 * 3600;

/** The invitation's state, read from its columns at the time it is read. */
export const INVITATION_STATUSES = ["pending", "accepted", "revoked", "expired"] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/** POST body: an email with an account role, or with a list and a list role. */
export const invitationCreate = z
  .object({
    email: emailField.meta({ description: "Who is invited; they accept as the person with this address" }),
    role: z.enum(ROLES).meta({
      description:
        "Without `list`: owner (only an owner invites one), admin, editor, contributor or viewer. With `list`: " +
        "editor or viewer",
    }),
    list: field.id.optional().meta({ description: "A list of the account: the invitation is to it alone" }),
    expires_in: z
      .int()
      .min(MIN_EXPIRES_IN, `must be at least ${MIN_EXPIRES_IN} seconds (an hour)`)
      .max(MAX_EXPIRES_IN, `must be at most ${MAX_EXPIRES_IN} seconds (30 days)`)
      .optional()
      .meta({ description: `Seconds the link works; absent: ${DEFAULT_EXPIRES_IN} (7 days)` }),
  })
  .superRefine((value, context) => {
    if (value.list !== undefined && !(LIST_ROLES as readonly string[]).includes(value.role)) {
      context.addIssue({ code: "custom", path: ["role"], message: "must be editor or viewer with a list" });
    }
  })
  .meta({ id: "InvitationCreate" });

/** An invitation as the API returns it; its link only once, when it is made. */
export const invitationJson = createSelectSchema(invitations)
  .pick({ id: true, email: true, role: true })
  .extend({
    list: z.int().nullable().meta({ description: "The list it invites to; null: the account" }),
    status: z.enum(INVITATION_STATUSES),
    invited_by: actorJson.meta({ description: "Who made the invitation" }),
    expires_at: z.iso.datetime(),
    accepted_at: z.iso.datetime().nullable(),
    accepted_by: z.int().nullable().meta({ description: "The person who accepted it" }),
    revoked_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "Invitation" });
export type InvitationJson = z.output<typeof invitationJson>;

export const createdInvitationJson = invitationJson
  .extend({
    token: z.string().meta({
      description: "The link's secret, 256 random bits: shown only now (only its hash is stored)",
      example: "Jx3b0Qe7YtZk2mWp9sLr4vNc8aHd1fGu6oEi5yTq0Bw",
    }),
    link: z.url().meta({
      description: "The single-use link to pass on: `<origin>/invitations/accept?token=<token>`",
    }),
    mailed: z.boolean().meta({ description: "Whether it was mailed (only where the operator set up email)" }),
  })
  .meta({ id: "CreatedInvitation" });
export type CreatedInvitationJson = z.output<typeof createdInvitationJson>;

/** POST /v3.0/invitations/accept body. */
export const invitationAccept = z
  .object({
    token: z.string().min(1, "must not be empty").max(200, "must be at most 200 characters"),
    name: personName.optional().meta({ description: "Your display name, when no one has this address yet" }),
    password: newPassword.optional().meta({
      description: `Your password, when no one has this address yet: ${newPassword.description}`,
    }),
  })
  .meta({ id: "InvitationAccept" });

export const acceptedInvitationJson = z
  .object({
    account: z.object({ id: z.int(), name: z.string() }),
    role: z.enum(ROLES).meta({ description: "Your role in the account, or on the list" }),
    list: z.int().nullable(),
    person: z.object({ id: z.int(), name: z.string(), email: z.string() }),
    person_created: z.boolean().meta({ description: "Whether accepting made you: sign in then" }),
  })
  .meta({ id: "AcceptedInvitation" });
export type AcceptedInvitationJson = z.output<typeof acceptedInvitationJson>;
