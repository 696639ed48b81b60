/**
 * /v3.0/members: the people of the caller's account and their roles
 * (docs/people-and-roles.md, "Members"). Called with a person's token; the
 * role table says who may call what, and the store keeps the rules it cannot
 * say (the owner role, the last owner).
 */
import { resourceApp } from "../../auth/resource-app";
import { pageOf, pageQuery, paginate } from "../../http/pagination";
import { PERSON_ID, pathId } from "../../http/path";
import { operation } from "../../http/route-metadata";
import { validate } from "../../http/validation";
import { callingPerson } from "../acting-person";
import { memberToJson } from "./json";
import { memberJson, memberUpdate, ownershipTransfer, ownershipTransferred } from "./schemas";
import { changeRole, pageMembers, removeMember, transferOwnership } from "./store";

const TAGS = ["members"];
const PERSON = { person_id: { description: "The member's person id", example: "1" } };

const operations = {
  list: operation({
    summary: "List the account's members",
    description: "Every member of the account you act in, with their role, by person id.",
    operationId: "listMembers",
    tags: TAGS,
    responses: { 200: pageOf(memberJson) },
  }),
  update: operation({
    summary: "Change a member's role",
    description:
      "Only an owner gives or takes the owner role (403 `owner_required`); the account's last owner keeps it " +
      "(409 `last_owner`). The member's very next request acts with the new role.",
    operationId: "updateMember",
    tags: TAGS,
    pathParams: PERSON,
    examples: { "application/json": { role: "editor" } },
    responses: { 200: memberJson },
    errors: [409],
  }),
  remove: operation({
    summary: "Remove a member",
    description:
      "They lose the account, and their collaborations on its lists, at their very next request. Only an owner " +
      "removes an owner (403 `owner_required`); the last owner cannot be removed (409 `last_owner`).",
    operationId: "removeMember",
    tags: TAGS,
    pathParams: PERSON,
    responses: { 204: { description: "Removed" } },
    errors: [409],
  }),
  leave: operation({
    summary: "Leave the account",
    description:
      "You stop being a member (and a collaborator on its lists); your tokens for it are refused from the next " +
      "request. The last owner cannot leave (409 `last_owner`): make another member an owner first.",
    operationId: "leaveAccount",
    tags: TAGS,
    // Leaving changes only your own membership: a viewer, whose tokens only read, may leave too.
    scope: "read",
    responses: { 204: { description: "Left" } },
    errors: [409],
  }),
  transfer: operation({
    summary: "Transfer the account's ownership",
    description:
      "The member named becomes an owner and you, an owner, become an admin, in one step. To add an owner " +
      "and stay one, change their role instead.",
    operationId: "transferOwnership",
    tags: TAGS,
    examples: { "application/json": { person_id: 2 } },
    responses: { 200: ownershipTransferred },
  }),
};

export const memberRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", pageQuery), async (c) => {
      const { accountId } = c.var.principal;
      return c.json(
        await paginate(c, {
          collection: "members",
          query: c.req.valid("query"),
          fetch: (bound, take) => pageMembers(c.env.DB, accountId, bound, take),
          toJson: memberToJson,
        }),
      );
    }),
  )
  .post(
    "/transfer-ownership",
    ...operations.transfer(validate("json", ownershipTransfer), async (c) => {
      const person = callingPerson(c);
      const { person_id } = c.req.valid("json");
      const { owner, formerOwner } = await transferOwnership(c.env.DB, person.accountId, person.personId, person_id);
      return c.json({ owner: memberToJson(owner), former_owner: memberToJson(formerOwner) });
    }),
  )
  .delete(
    "/me",
    ...operations.leave(async (c) => {
      const person = callingPerson(c);
      await removeMember(c.env.DB, person.accountId, person.personId, person.personId);
      return c.body(null, 204);
    }),
  )
  .patch(
    `/${PERSON_ID}`,
    ...operations.update(validate("json", memberUpdate), async (c) => {
      const person = callingPerson(c);
      const target = pathId(c, "member", "person_id");
      const { role } = c.req.valid("json");
      return c.json(memberToJson(await changeRole(c.env.DB, person.accountId, person.personId, target, role)));
    }),
  )
  .delete(
    `/${PERSON_ID}`,
    ...operations.remove(async (c) => {
      const person = callingPerson(c);
      await removeMember(c.env.DB, person.accountId, person.personId, pathId(c, "member", "person_id"));
      return c.body(null, 204);
    }),
  );
