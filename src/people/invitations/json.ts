/** The one mapping from an invitation to its public JSON. */
import type { InvitationJson } from "./schemas";
import { statusOf, type Invitation } from "./store";

/** `invited_by` as `created_by` shows an actor: `person:<id>` or `client:<id>`, with the name known now. */
function actorOf(invitedBy: string, name: string | null): InvitationJson["invited_by"] {
  const [type, id = ""] = invitedBy.split(":", 2) as [string, string?];
  return type === "person" ? { type, id: Number(id), name } : { type: "client", id, name };
}

export function invitationToJson(row: Invitation): InvitationJson {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    list: row.list_id,
    status: statusOf(row),
    invited_by: actorOf(row.invited_by, row.inviter_name),
    expires_at: row.expires_at.toISOString(),
    accepted_at: row.accepted_at?.toISOString() ?? null,
    accepted_by: row.accepted_by,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
