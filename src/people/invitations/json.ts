/** The one mapping from an invitation to its public JSON. */
import type { Actors } from "../../auth/actor";
import type { InvitationJson } from "./schemas";
import { statusOf, type Invitation } from "./store";

/** `row` as JSON, its inviter among `actors` (src/auth/actor.ts `actorsOf`, read for a whole page at once). */
export function invitationToJson(row: Invitation, actors: Actors): InvitationJson {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    list: row.list_id,
    status: statusOf(row),
    // Every invitation names who made it, as actorOf writes a writer (src/auth/actor.ts).
    invited_by: actors.actor(row.invited_by)!,
    expires_at: row.expires_at.toISOString(),
    accepted_at: row.accepted_at?.toISOString() ?? null,
    accepted_by: row.accepted_by,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
