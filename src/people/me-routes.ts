/** /v3.0/me: the signed-in person, what they belong to, and their display name. */
import { Hono } from "hono";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";
import { meToJson } from "./json";
import { meJson, meUpdate } from "./schemas";
import { requireSession, sessionPerson } from "./sessions";
import { renamePerson } from "./store";

const operations = {
  get: operation({
    summary: "You",
    description:
      "The signed-in person: email, name, the accounts you act in with your role, the lists given to you, " +
      "how many passkeys you have, and whether TOTP is on.",
    operationId: "getMe",
    tags: ["people"],
    responses: { 200: meJson },
  }),
  update: operation({
    summary: "Change your name",
    operationId: "updateMe",
    tags: ["people"],
    examples: { "application/json": { name: "Ana Lima" } },
    responses: { 200: meJson },
  }),
};

export const meRoutes = new Hono<AppEnv>()
  .get(
    "/",
    ...operations.get(requireSession(), async (c) => {
      c.header("Cache-Control", "no-store");
      return c.json(await meToJson(c.env.DB, await sessionPerson(c)));
    }),
  )
  .patch(
    "/",
    ...operations.update(requireSession(), validate("json", meUpdate), async (c) => {
      await renamePerson(c.env.DB, c.var.session.personId, c.req.valid("json").name, clock.now());
      c.header("Cache-Control", "no-store");
      return c.json(await meToJson(c.env.DB, await sessionPerson(c)));
    }),
  );
