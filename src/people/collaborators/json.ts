/** The one mapping from a list collaborator to their public JSON. */
import type { CollaboratorJson } from "./schemas";
import type { CollaboratorRow } from "./store";

export function collaboratorToJson(row: CollaboratorRow): CollaboratorJson {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    list: row.list,
    role: row.role,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
