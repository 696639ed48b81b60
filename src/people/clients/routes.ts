/**
 * /v3.0/clients: the account's clients (client credentials), managed from a
 * person's session as `npm run clients` manages them from the command line,
 * with the same writes (src/db/client-registry.ts). A secret is in the answer
 * that made it, once; only its hash is stored. Another account's client is a
 * 404, as an unknown id is: a client id is half a credential.
 */
import { resourceApp } from "../../auth/resource-app";
import { ApiError, notFound } from "../../core/problem";
import { insertClient, revokeClient, rotateClientSecret } from "../../db/client-registry";
import { batchOn } from "../../db/fills";
import { pageOf, pageQuery, paginate } from "../../http/pagination";
import { operation } from "../../http/route-metadata";
import { validate } from "../../http/validation";
import { clientToJson } from "./json";
import { clientCreate, clientJson, clientWithSecretJson } from "./schemas";
import { clientKey, pageClients } from "./store";

const TAGS = ["clients"];
const CLIENT_ID = ":client_id{[0-9a-f]+}";
type ClientPath = `/${typeof CLIENT_ID}`;
const CLIENT = { client_id: { description: "The client id", example: "0123456789abcdef0123456789abcdef" } };

const operations = {
  list: operation({
    summary: "List the account's clients",
    description: "Oldest first, revoked ones included; never a secret.",
    operationId: "listClients",
    tags: TAGS,
    responses: { 200: pageOf(clientJson) },
  }),
  create: operation({
    summary: "Create a client",
    description:
      "A client of the account you act in, for a program that gets tokens with the client credentials grant. " +
      "`client_secret` is in this answer only; only its hash is stored.",
    operationId: "createClient",
    tags: TAGS,
    examples: { "application/json": { name: "Nightly import", scope: "read write" } },
    responses: { 201: clientWithSecretJson },
  }),
  rotate: operation<`${ClientPath}/secret`>({
    summary: "Give a client a new secret",
    description:
      "The new `client_secret` is in this answer only. Tokens issued with the old secret stop working within " +
      "60 seconds. A revoked client has no secret to rotate (409 `client_revoked`).",
    operationId: "rotateClientSecret",
    tags: TAGS,
    pathParams: CLIENT,
    responses: { 200: clientWithSecretJson },
    errors: [409],
  }),
  revoke: operation<ClientPath>({
    summary: "Revoke a client",
    description:
      "The token endpoint refuses it at once; its tokens stop working within 60 seconds. Revoking a revoked " +
      "client changes nothing.",
    operationId: "revokeClient",
    tags: TAGS,
    pathParams: CLIENT,
    responses: { 204: { description: "Revoked" } },
  }),
};

export const clientRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", pageQuery), async (c) => {
      const { accountId } = c.var.principal;
      return c.json(
        await paginate(c, {
          collection: "clients",
          query: c.req.valid("query"),
          fetch: (bound, take) => pageClients(c.env.DB, accountId, bound, take),
          toJson: clientToJson,
          keyOf: clientKey,
        }),
      );
    }),
  )
  .post(
    "/",
    ...operations.create(validate("json", clientCreate), async (c) => {
      const { accountId } = c.var.principal;
      const { name, scope = "read write" } = c.req.valid("json");
      const made = await insertClient(batchOn(c.env.DB), { id: accountId }, { name, scope });
      // The token names an account the directory holds: it was read at this request.
      if (!made) throw new Error(`account ${accountId} has no row in the directory`);
      c.header("Cache-Control", "no-store");
      // No Location: a client is read in the list, and its secret only here.
      return c.json({ ...clientToJson(made.client), client_secret: made.secret }, 201);
    }),
  )
  .post(
    `/${CLIENT_ID}/secret`,
    ...operations.rotate(async (c) => {
      const { accountId } = c.var.principal;
      const rotation = await rotateClientSecret(batchOn(c.env.DB), c.req.param("client_id"), accountId);
      if (rotation.kind === "unknown") throw notFound("client");
      if (rotation.kind === "revoked") {
        throw new ApiError("client_revoked", "The client was revoked; create a new one.");
      }
      c.header("Cache-Control", "no-store");
      return c.json({ ...clientToJson(rotation.client), client_secret: rotation.secret });
    }),
  )
  .delete(
    `/${CLIENT_ID}`,
    ...operations.revoke(async (c) => {
      const { accountId } = c.var.principal;
      const revocation = await revokeClient(batchOn(c.env.DB), c.req.param("client_id"), accountId);
      if (revocation.kind === "unknown") throw notFound("client");
      return c.body(null, 204);
    }),
  );
