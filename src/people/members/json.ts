/** The one mapping from a member to their public JSON. */
import type { MemberJson } from "./schemas";
import type { MemberRow } from "./store";

export function memberToJson(row: MemberRow): MemberJson {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
