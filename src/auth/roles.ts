/**
 * Who may do what: for every operation of the API, what each role of a
 * person may do with it (docs/people-and-roles.md shows this table, and
 * test/roles.test.ts calls every operation as every role and checks the
 * answers against the table in the docs, so neither can drift from the other;
 * ./operation-access.ts applies it to every request a person's token makes).
 *
 *   all   on anything of the account
 *   own   on what the person created (`created_by` names them)
 *   list  on the lists given to the person, the pinpoints in them and those pinpoints' events
 *   none  refused with 403 `role_forbidden`
 *
 * A person with an account role who is also given some lists may do what
 * either allows: what the role's cell allows, and what the list role's cell
 * allows in those lists (./operation-access.ts).
 *
 * Clients (client credentials) are not in the table: their scopes decide, as
 * before people existed, except for what only a person may do (members,
 * invitations, collaborators, clients, ownership, and leaving an account),
 * which a client is refused.
 */
import type { ListRole, Role } from "../core/env";

export const ROLES = ["owner", "admin", "editor", "contributor", "viewer"] as const satisfies readonly Role[];
export const LIST_ROLES = ["editor", "viewer"] as const satisfies readonly ListRole[];

export type Permission = "all" | "own" | "list" | "none";

/** The table's columns: the account roles, then a list collaborator's roles. */
export type Column = Role | "list editor" | "list viewer";
export const COLUMNS: readonly Column[] = [...ROLES, "list editor", "list viewer"];

type Row = Record<Column, Permission>;

/** A row from its seven cells, in the order of COLUMNS. */
const row = (...cells: [Permission, Permission, Permission, Permission, Permission, Permission, Permission]): Row =>
  Object.fromEntries(COLUMNS.map((column, i) => [column, cells[i]!])) as Row;

//                         owner  admin  editor contrib. viewer list-ed. list-view.
const READ_CONTENT = row("all", "all", "all", "all", "all", "list", "list");
const READ_ACCOUNT_WIDE = row("all", "all", "all", "all", "all", "none", "none");
const READ_SHARED = row("all", "all", "all", "all", "all", "all", "all");
const CREATE = row("all", "all", "all", "all", "none", "none", "none");
const CREATE_IN_LIST = row("all", "all", "all", "all", "none", "list", "none");
const CHANGE = row("all", "all", "all", "own", "none", "list", "none");
const DELETE = row("all", "all", "all", "own", "none", "none", "none");
const ADMINISTER = row("all", "all", "none", "none", "none", "none", "none");
const OWNER_ONLY = row("all", "none", "none", "none", "none", "none", "none");
const ANY_MEMBER = row("all", "all", "all", "all", "all", "none", "none");

/**
 * Every operation that acts in an account, by operationId. Operations that act
 * in none (the token endpoint, sign-in and the person's own settings, the
 * reference, media files) are not here: they need no role.
 */
export const PERMISSIONS = {
  listPinpoints: READ_CONTENT,
  getPinpoint: READ_CONTENT,
  createPinpoint: CREATE,
  updatePinpoint: CHANGE,
  deletePinpoint: DELETE,
  listLists: READ_CONTENT,
  getList: READ_CONTENT,
  createList: CREATE,
  updateList: CHANGE,
  deleteList: DELETE,
  addListPinpoints: CHANGE,
  removeListPinpoints: CHANGE,
  reorderListPinpoints: CHANGE,
  listEvents: READ_CONTENT,
  getEvent: READ_CONTENT,
  createEvent: CREATE_IN_LIST,
  updateEvent: CHANGE,
  deleteEvent: row("all", "all", "all", "own", "none", "list", "none"),
  listCategories: READ_SHARED,
  getCategory: READ_SHARED,
  createCategory: CREATE,
  // Categories are in no list: a list editor has none to change, a contributor those they created.
  updateCategory: row("all", "all", "all", "own", "none", "none", "none"),
  deleteCategory: DELETE,
  listChanges: READ_ACCOUNT_WIDE,
  getTileMvt: READ_ACCOUNT_WIDE,
  getTileGeojson: READ_ACCOUNT_WIDE,
  getTileJson: READ_ACCOUNT_WIDE,
  getOgcLandingPage: READ_ACCOUNT_WIDE,
  getOgcConformance: READ_ACCOUNT_WIDE,
  getOgcApiDefinition: READ_ACCOUNT_WIDE,
  getOgcCollections: READ_ACCOUNT_WIDE,
  getOgcCollection: READ_ACCOUNT_WIDE,
  getOgcCollectionSchema: READ_ACCOUNT_WIDE,
  getOgcQueryables: READ_ACCOUNT_WIDE,
  getOgcItems: READ_ACCOUNT_WIDE,
  getOgcItem: READ_ACCOUNT_WIDE,
  listPublishableKeys: ADMINISTER,
  getPublishableKey: ADMINISTER,
  createPublishableKey: ADMINISTER,
  revokePublishableKey: ADMINISTER,
  listWebhooks: ADMINISTER,
  getWebhook: ADMINISTER,
  createWebhook: ADMINISTER,
  updateWebhook: ADMINISTER,
  deleteWebhook: ADMINISTER,
  rotateWebhookSecret: ADMINISTER,
  listWebhookDeliveries: ADMINISTER,
  listMembers: ANY_MEMBER,
  updateMember: ADMINISTER,
  removeMember: ADMINISTER,
  transferOwnership: OWNER_ONLY,
  listInvitations: ADMINISTER,
  createInvitation: ADMINISTER,
  revokeInvitation: ADMINISTER,
  listCollaborators: ADMINISTER,
  putCollaborator: ADMINISTER,
  removeCollaborator: ADMINISTER,
  listClients: ADMINISTER,
  createClient: ADMINISTER,
  rotateClientSecret: ADMINISTER,
  revokeClient: ADMINISTER,
} as const satisfies Record<string, Row>;

export type AccountOperation = keyof typeof PERMISSIONS;

/** Operations only a person may call: a client's token is refused them whatever its scopes. */
export const PEOPLE_ONLY: ReadonlySet<AccountOperation> = new Set([
  "listMembers",
  "updateMember",
  "removeMember",
  "transferOwnership",
  "listInvitations",
  "createInvitation",
  "revokeInvitation",
  "listCollaborators",
  "putCollaborator",
  "removeCollaborator",
  "listClients",
  "createClient",
  "rotateClientSecret",
  "revokeClient",
]);

/**
 * Operations on a person's own standing in the account their token acts in, open to every person there
 * whatever their role, and to no client: leaving the account, or a list given to them. They are no row of
 * the table, which says
 * what a role may do with the account (docs/people-and-roles.md says so below it); the store keeps the
 * rule the role cannot (the last owner stays).
 */
export const OWN_STANDING: ReadonlySet<string> = new Set(["leaveAccount", "leaveList"]);

export const isAccountOperation = (operationId: string): operationId is AccountOperation =>
  Object.hasOwn(PERMISSIONS, operationId);

const RANK: Record<Permission, number> = { none: 0, list: 1, own: 2, all: 3 };

/**
 * What a person may do with `operation`: the most their account role and their list roles give (row checks
 * then narrow `own` and `list` to the rows those cover).
 */
export function permission(operation: AccountOperation, role: Role | null, listRoles: Iterable<ListRole>): Permission {
  const cells: Row = PERMISSIONS[operation];
  let best: Permission = role === null ? "none" : cells[role];
  for (const listRole of listRoles) {
    const cell = cells[`list ${listRole}`];
    if (RANK[cell] > RANK[best]) best = cell;
  }
  return best;
}
