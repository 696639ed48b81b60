/**
 * /v3.0/lists/{id}/collaborators: who was given one list of the account
 * (docs/people-and-roles.md, "List collaborators"). Mounted under /v3.0/lists
 * after the lists' own sub-app, whose middleware (the token, the rate limit,
 * the body rules) these routes run behind, once.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../core/env";
import { pageOf, pageQuery, paginate } from "../../http/pagination";
import { ID, PERSON_ID, pathId } from "../../http/path";
import { operation } from "../../http/route-metadata";
import { validate } from "../../http/validation";
import { collaboratorToJson } from "./json";
import { collaboratorJson, collaboratorPut } from "./schemas";
import { callingPerson } from "../acting-person";
import { assertOwnList } from "../own-list";
import { pageCollaborators, putCollaborator, removeCollaborator } from "./store";

const TAGS = ["collaborators"];
const LIST = { id: "The list's id" };
const LIST_AND_PERSON = { ...LIST, person_id: { description: "The collaborator's person id", example: "1" } };
const ONE = `/${ID}/collaborators/${PERSON_ID}`;

const operations = {
  list: operation({
    summary: "List a list's collaborators",
    description: "The people given this list without being members of the account, or besides their role in it.",
    operationId: "listCollaborators",
    tags: TAGS,
    pathParams: LIST,
    responses: { 200: pageOf(collaboratorJson) },
  }),
  put: operation({
    summary: "Give a person a list, or change their role on it",
    description:
      "`editor` changes the list, the pinpoints in it and their events; `viewer` reads them. The person must " +
      "already be a member of the account or a collaborator on one of its lists; invite anyone else by email " +
      "with `list` (POST /v3.0/invitations). 201 for a new collaborator, 200 for a changed one; their next " +
      "request acts with it.",
    operationId: "putCollaborator",
    tags: TAGS,
    pathParams: LIST_AND_PERSON,
    examples: { "application/json": { role: "editor" } },
    responses: { 200: collaboratorJson, 201: collaboratorJson },
  }),
  leave: operation({
    summary: "Leave a list given to you",
    description:
      "You stop being a collaborator on this list; your next request acts without it (and, if it was all you " +
      "had of the account, is refused). 404 when the list is not given to you.",
    operationId: "leaveList",
    tags: TAGS,
    // Leaving changes only your own standing: a list viewer, whose tokens only read, may leave too.
    scope: "read",
    pathParams: LIST,
    responses: { 204: { description: "Left" } },
  }),
  remove: operation({
    summary: "Take a list from a collaborator",
    description: "Their next request acts without it.",
    operationId: "removeCollaborator",
    tags: TAGS,
    pathParams: LIST_AND_PERSON,
    responses: { 204: { description: "Removed" } },
  }),
};

export const collaboratorRoutes = new Hono<AppEnv>()
  .get(
    `/${ID}/collaborators`,
    ...operations.list(validate("query", pageQuery), async (c) => {
      const { accountId } = c.var.principal;
      const listId = pathId(c, "list");
      await assertOwnList(c.env.DB, accountId, listId);
      return c.json(
        await paginate(c, {
          collection: `lists/${listId}/collaborators`,
          query: c.req.valid("query"),
          fetch: (bound, take) => pageCollaborators(c.env.DB, accountId, listId, bound, take),
          toJson: collaboratorToJson,
        }),
      );
    }),
  )
  .put(
    ONE,
    ...operations.put(validate("json", collaboratorPut), async (c) => {
      const { accountId } = c.var.principal;
      const listId = pathId(c, "list");
      await assertOwnList(c.env.DB, accountId, listId);
      const { role } = c.req.valid("json");
      const { row, created } = await putCollaborator(
        c.env.DB,
        accountId,
        listId,
        pathId(c, "person", "person_id"),
        role,
      );
      return c.json(collaboratorToJson(row), created ? 201 : 200);
    }),
  )
  .delete(
    `/${ID}/collaborators/me`,
    ...operations.leave(async (c) => {
      const person = callingPerson(c);
      await removeCollaborator(c.env.DB, person.accountId, pathId(c, "list"), person.personId);
      return c.body(null, 204);
    }),
  )
  .delete(
    ONE,
    ...operations.remove(async (c) => {
      const { accountId } = c.var.principal;
      const listId = pathId(c, "list");
      await assertOwnList(c.env.DB, accountId, listId);
      await removeCollaborator(c.env.DB, accountId, listId, pathId(c, "collaborator", "person_id"));
      return c.body(null, 204);
    }),
  );
