/**
 * /v3.0/invitations: an account's invitations (docs/people-and-roles.md,
 * "Invitations"), made, listed and revoked with an admin's token; and
 * /v3.0/invitations/accept, where the person invited takes one, signed in
 * (the session cookie, ../sessions.ts) or not: it acts in no account until it
 * is accepted, so it is mounted before the account's sub-app and runs none of
 * its middleware but the body rules.
 */
import { Hono, type Context } from "hono";
import type * as z from "zod";
import { actorOf, actorsOf } from "../../auth/actor";
import { resourceApp } from "../../auth/resource-app";
import { clock } from "../../core/clock";
import type { AppEnv, PersonPrincipal, Role } from "../../core/env";
import { ApiError, fieldError } from "../../core/problem";
import { generateLinkToken } from "../../core/secrets";
import { useAccount } from "../../db/client";
import { jsonBody } from "../../http/body";
import { ID, pathId } from "../../http/path";
import { pageOf, pageQuery, paginate } from "../../http/pagination";
import { operation } from "../../http/route-metadata";
import { validate } from "../../http/validation";
import { callingPerson } from "../acting-person";
import { emailKey } from "../email";
import { isOwnList } from "../own-list";
import { passwordProblem } from "../password-policy";
import { hashPassword } from "../passwords";
import { requireSession, sessionIfSignedIn, sessionPerson } from "../sessions";
import { personByEmailKey } from "../store";
import { invitationToJson } from "./json";
import { mailInvitation } from "./mail";
import {
  acceptedInvitationJson,
  createdInvitationJson,
  DEFAULT_EXPIRES_IN,
  invitationAccept,
  invitationCreate,
  invitationJson,
  type AcceptedInvitationJson,
  type CreatedInvitationJson,
} from "./schemas";
import {
  acceptAsNewPerson,
  acceptAsPerson,
  alreadyIn,
  insertInvitation,
  invitationByToken,
  notPending,
  pageInvitations,
  revokeInvitation,
  signInToAccept,
  statusOf,
} from "./store";

const TAGS = ["invitations"];

const operations = {
  list: operation({
    summary: "List the account's invitations",
    description:
      "Every invitation of the account you act in, by id, with its `status`: `pending`, `accepted`, `revoked` " +
      "or `expired`; never its link.",
    operationId: "listInvitations",
    tags: TAGS,
    responses: { 200: pageOf(invitationJson) },
  }),
  create: operation({
    summary: "Invite someone by email",
    description:
      "To the account with a `role`, or to one `list` with `editor` or `viewer`. The answer holds the " +
      "single-use `link` (and its `token`), once: only the token's hash is stored. It works for 7 days unless " +
      "`expires_in` says otherwise, and is mailed where the operator set up email (`mailed`); otherwise pass " +
      "it on yourself. Only an owner invites an owner (403 `owner_required`); someone who has the access " +
      "already is 409 `already_member`.",
    operationId: "createInvitation",
    tags: TAGS,
    examples: { "application/json": { email: "ada@example.org", role: "editor" } },
    responses: { 201: createdInvitationJson },
    errors: [409],
  }),
  revoke: operation({
    summary: "Revoke an invitation",
    description:
      "Its link stops working. Revoking a revoked or expired invitation changes nothing; an accepted one is 409: " +
      "remove the member instead.",
    operationId: "revokeInvitation",
    tags: TAGS,
    responses: { 204: { description: "Revoked" } },
    errors: [409],
  }),
  accept: operation({
    summary: "Accept an invitation",
    description:
      "With the `token` of the link. Signed in (the session cookie, and on this write its CSRF token), as the " +
      "person whose email the invitation names (403 `invitation_email_mismatch` otherwise). Not signed in, " +
      "with `name` and `password`: this makes the person, who then signs in; if someone has the address " +
      "already, 409 `sign_in_to_accept`. A link works once, until it expires or is revoked: 410 " +
      "`invitation_used`, `invitation_expired` or `invitation_revoked` after. Someone who is a member already " +
      "keeps their role.",
    operationId: "acceptInvitation",
    tags: TAGS,
    examples: {
      "application/json": {
        token: "Jx3b0Qe7YtZk2mWp9sLr4vNc8aHd1fGu6oEi5yTq0Bw",
        name: "Ada",
        password: "a long phrase only you know",
      },
    },
    responses: { 200: acceptedInvitationJson },
    errors: [401, 403, 404, 409, 410],
  }),
};

export const invitationRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", pageQuery), async (c) => {
      const { accountId } = c.var.principal;
      return c.json(
        await paginate(c, {
          collection: "invitations",
          query: c.req.valid("query"),
          fetch: (bound, take) => pageInvitations(c.env.DB, accountId, bound, take),
          pageJson: async (rows) => {
            const actors = await actorsOf(
              c,
              [],
              rows.map((row) => row.invited_by),
            );
            return rows.map((row) => invitationToJson(row, actors));
          },
        }),
      );
    }),
  )
  .post(
    "/",
    ...operations.create(validate("json", invitationCreate), async (c) => {
      const made = await invite(c, callingPerson(c), c.req.valid("json"));
      c.header("Cache-Control", "no-store");
      return c.json(made, 201);
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.revoke(async (c) => {
      const { accountId } = c.var.principal;
      await revokeInvitation(c.env.DB, accountId, pathId(c, "invitation"));
      return c.body(null, 204);
    }),
  );

/**
 * Makes an invitation from `person` and passes its link on: in the answer always, by mail where the
 * service can send it. The rules the role table cannot state come first: only an owner invites an owner,
 * a list must be the account's, and no one is invited to what they have.
 */
async function invite(
  c: Context<AppEnv>,
  person: PersonPrincipal,
  { email, role, list, expires_in = DEFAULT_EXPIRES_IN }: z.output<typeof invitationCreate>,
): Promise<CreatedInvitationJson> {
  if (role === "owner" && person.role !== "owner") {
    throw new ApiError("owner_required", "Only an owner invites an owner.");
  }
  const listId = list ?? null;
  if (listId !== null && !(await isOwnList(c.env.DB, person.accountId, listId))) {
    throw fieldError("/list", "is not one of the account's lists");
  }
  const key = emailKey(email);
  if (await alreadyIn(c.env.DB, person.accountId, key, listId)) {
    throw new ApiError(
      "already_member",
      listId === null
        ? "Someone with this address is a member already: change their role instead."
        : "Someone with this address has this list already: change their role on it instead.",
    );
  }
  const token = generateLinkToken();
  const invitedBy = actorOf(person);
  const now = clock.now();
  const row = await insertInvitation(
    c.env.DB,
    person.accountId,
    { email, emailKey: key, role, listId, invitedBy, createdAt: now, expiresAt: now + expires_in * 1000 },
    token,
  );
  const { config } = c.var;
  const link = new URL("/invitations/accept", config.publicOrigin ?? c.req.url);
  link.searchParams.set("token", token);
  const accountName = await c.env.DB.prepare("SELECT name FROM accounts WHERE id = ?")
    .bind(person.accountId)
    .first<string>("name");
  const mailed = await mailInvitation(c.env, config.emailFrom, {
    to: email,
    link: link.href,
    accountName: accountName ?? "an account",
    role: listId === null ? role : `${role} of a list`,
    expiresAt: row.expires_at,
  });
  const json = invitationToJson(row, await actorsOf(c, [], [invitedBy]));
  return { ...json, token, link: link.href, mailed };
}

/**
 * Accepts the invitation whose link carries `body.token`: as the signed-in person it names, or by making
 * the person it was sent to. The checks that answer clearly come first; the store's one transaction then
 * decides, so a link raced by many requests is accepted once.
 */
async function accept(c: Context<AppEnv>, body: z.output<typeof invitationAccept>): Promise<AcceptedInvitationJson> {
  const signedIn = sessionIfSignedIn(c) === null ? null : await sessionPerson(c);
  const invitation = await invitationByToken(c.env.DB, body.token);
  const status = statusOf(invitation);
  if (status !== "pending") throw notPending(status);
  if (signedIn && signedIn.email_key !== invitation.email_key) {
    throw new ApiError(
      "invitation_email_mismatch",
      "This invitation is for another email address: sign in as the person it was sent to.",
    );
  }
  if (invitation.list_id !== null) {
    // The list lives on the account's shard: read it there.
    await useAccount(invitation.account_id);
    if (!(await isOwnList(c.env.DB, invitation.account_id, invitation.list_id))) {
      throw new ApiError("invitation_revoked", "The list this invitation was to has been deleted.");
    }
  }
  const answer = (role: Role, person: AcceptedInvitationJson["person"], created: boolean) => ({
    account: { id: invitation.account_id, name: invitation.account_name },
    role,
    list: invitation.list_id,
    person,
    person_created: created,
  });
  if (signedIn) {
    const { role } = await acceptAsPerson(c.env.DB, invitation, signedIn.id, signedIn.email_key);
    return answer(role, { id: signedIn.id, name: signedIn.name, email: signedIn.email }, false);
  }
  if (await personByEmailKey(c.env.DB, invitation.email_key)) throw signInToAccept();
  const { name, password } = body;
  if (name === undefined || password === undefined) {
    const missing = (["name", "password"] as const).filter((field) => body[field] === undefined);
    throw new ApiError("validation_failed", `${missing.join(", ")}: required to accept without signing in`, {
      errors: missing.map((field) => ({ pointer: `/${field}`, detail: "is required to accept without signing in" })),
    });
  }
  const problem = passwordProblem(password, invitation.email);
  if (problem) throw fieldError("/password", problem);
  const { role, personId } = await acceptAsNewPerson(c.env.DB, invitation, name, await hashPassword(password));
  return answer(role, { id: personId, name, email: invitation.email }, true);
}

export const acceptRoutes = new Hono<AppEnv>().use(jsonBody()).post(
  "/",
  ...operations.accept(requireSession({ optional: true }), validate("json", invitationAccept), async (c) => {
    const accepted = await accept(c, c.req.valid("json"));
    c.header("Cache-Control", "no-store");
    return c.json(accepted);
  }),
);
