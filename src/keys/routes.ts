/**
 * /v3.0/keys: publishable keys, which put an account's lists on public web
 * pages (docs/publishing-maps.md). Managed with an access token; a key
 * itself can never read or change keys.
 */
import { resourceApp } from "../auth/resource-app";
import { ID, pathId } from "../http/path";
import { pageOf, paginate, pageQuery } from "../http/pagination";
import { created } from "../http/responses";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { keyToJson } from "./json";
import { createdKeyJson, keyCreate, keyJson } from "./schemas";
import { createKey, getKey, pageKeys, revokeKey } from "./store";

const operations = {
  list: operation({
    summary: "List your publishable keys",
    operationId: "listPublishableKeys",
    responses: { 200: pageOf(keyJson) },
  }),
  create: operation({
    summary: "Create a publishable key",
    description:
      "A read-only key for web pages: it reads the lists named (every list of the account if `lists` is " +
      "absent), their pinpoints, the events at them and the categories, from the `origins` named (any if " +
      "absent), until `expires_at`. The key is in the answer once; only its hash is stored. " +
      "A list of another account is a 400 and creates nothing.",
    operationId: "createPublishableKey",
    examples: { "application/json": { name: "City map", origins: ["https://maps.example.com"] } },
    responses: { 201: createdKeyJson },
  }),
  get: operation({
    summary: "Get a publishable key",
    description: "Without the key itself, which is shown only when it is created.",
    operationId: "getPublishableKey",
    responses: { 200: keyJson },
  }),
  revoke: operation({
    summary: "Revoke a publishable key",
    description: "It stops working within seconds everywhere, cached answers included.",
    operationId: "revokePublishableKey",
    responses: { 204: { description: "Revoked" } },
  }),
};

export const keyRoutes = resourceApp()
  .get(
    "/",
    ...operations.list(validate("query", pageQuery), async (c) =>
      c.json(
        await paginate(c, {
          collection: "keys",
          query: c.req.valid("query"),
          fetch: (bound, take) => pageKeys(c.env.DB, c.var.principal.accountId, bound, take),
          toJson: ({ row, lists }) => keyToJson(row, lists),
          keyOf: ({ row }) => [row.id],
        }),
      ),
    ),
  )
  .post(
    "/",
    ...operations.create(validate("json", keyCreate), async (c) => {
      const { row, lists, key } = await createKey(c.env.DB, c.var.principal.accountId, c.req.valid("json"));
      c.header("Cache-Control", "no-store");
      return created(c, `/v3.0/keys/${row.id}`, { ...keyToJson(row, lists), key });
    }),
  )
  .get(
    `/${ID}`,
    ...operations.get(async (c) => {
      const { row, lists } = await getKey(c.env.DB, c.var.principal.accountId, pathId(c, "publishable key"));
      return c.json(keyToJson(row, lists));
    }),
  )
  .delete(
    `/${ID}`,
    ...operations.revoke(async (c) => {
      await revokeKey(c.env.DB, c.var.principal.accountId, pathId(c, "publishable key"));
      return c.body(null, 204);
    }),
  );
