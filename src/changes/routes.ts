/**
 * GET /v3.0/changes: the change feed an offline client catches up with (the
 * models: CouchDB `_changes`, ArcGIS extractChanges). What changed in the
 * caller's account since a cursor, in commit order, at most one entry per
 * object (its latest state), deletions as tombstones, cascades included; see
 * docs/offline-and-concurrency.md for the full-sync recipe.
 *
 * A cursor is an encrypted position (http/cursor.ts): the last sequence
 * number seen, and a time no later than any change after it. A cursor older
 * than the retention window may have missed pruned tombstones, so it is 410:
 * the client resyncs. So is a cursor of the readable form issued before
 * cursors were encrypted, which the service no longer continues from.
 */
import type { Context } from "hono";
import * as z from "zod";
import { actorJson, actorsOf, type Actors } from "../auth/actor";
import { resourceApp } from "../auth/resource-app";
import { clock } from "../core/clock";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { accountHeadSeq, readChanges, type ChangeType, type ObjectRows } from "./store";
import { decodeCursor, encodeCursor, isReadableFormCursor } from "../http/cursor";
import { pageQuery } from "../http/pagination";
import { operation } from "../http/route-metadata";
import { validate } from "../http/validation";

const DAY_MS = 24 * 60 * 60 * 1000;

/** How each type's upserted objects are shown inline (`include=objects`): as GET returns them. */
export type ObjectJson = (c: Context<AppEnv>, actors: Actors) => { [K in ChangeType]: (row: ObjectRows[K]) => unknown };

const changesQuery = pageQuery.extend({
  include: z
    .enum(["objects"])
    .optional()
    .meta({ description: "`objects`: each upsert carries the object as GET returns it, in `object`" }),
});

const changeJson = z
  .object({
    type: z.enum(["pinpoint", "list", "category", "event"]),
    id: z.int(),
    op: z.enum(["upsert", "delete"]).meta({ description: "`delete`: a tombstone; the object no longer exists" }),
    version: z.int().meta({ description: "The object's version; its ETag is this number in quotes" }),
    changed_at: z.iso.datetime(),
    actor: actorJson.nullable().meta({
      description:
        "Who made the change: an upsert's is the object's `updated_by`; a delete's, who deleted it (for a " +
        "deletion that cascaded, who deleted what it went with). Null for changes made before it was recorded",
    }),
    object: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ description: "With `include=objects`, on upserts: the object as GET returns it" }),
  })
  .meta({ id: "Change" });

const changesPage = z
  .object({
    results: z.array(changeJson),
    next: z.url().nullable().meta({ description: "More changes are waiting: follow this now; null when caught up" }),
    cursor: z.string().meta({ description: "Keep this and send it next time, even when `results` is empty" }),
  })
  .meta({ id: "ChangesPage" });

const operations = {
  list: operation({
    summary: "What changed since a cursor",
    description:
      "The caller's pinpoints, lists (membership changes included), own categories and events that changed " +
      "since `cursor`, in commit order, one entry per object (its latest state); deletions, cascaded ones " +
      "included, as `op: delete`. Without `cursor` the feed starts now and returns the cursor to keep. " +
      "A cursor older than the retention window (30 days by default) is 410 `cursor_expired`: resync.",
    operationId: "listChanges",
    tags: ["changes"],
    responses: { 200: changesPage },
    errors: [410],
  }),
};

export function changeRoutes(objectJson: ObjectJson) {
  return resourceApp().get(
    "/",
    ...operations.list(validate("query", changesQuery), async (c) => {
      const { cursor, limit, include } = c.req.valid("query");
      const { accountId } = c.var.principal;
      const scope = `${accountId}:changes`;
      const now = clock.now();
      let after: number;
      if (cursor === undefined) {
        after = await accountHeadSeq(c.env.DB, accountId);
      } else {
        if (await isReadableFormCursor(c.env, cursor, scope)) {
          throw new ApiError(
            "cursor_expired",
            "The cursor is of a form this service no longer continues from; resync (take a new cursor, page " +
              "through the collections) and follow the feed from there.",
          );
        }
        const [seq, since] = (await decodeCursor(c.env, cursor, scope)).key as [number, number];
        if (since < now - c.var.config.changesRetentionDays * DAY_MS) {
          throw new ApiError(
            "cursor_expired",
            `The cursor is older than the ${c.var.config.changesRetentionDays} days the feed keeps deletions; ` +
              "resync (take a new cursor, page through the collections) and follow the feed from there.",
          );
        }
        after = seq;
      }
      const withObjects = include === "objects";
      const { entries, objects } =
        cursor === undefined
          ? { entries: [], objects: null }
          : await readChanges(c.env.DB, accountId, after, limit + 1, withObjects);
      const more = entries.length > limit;
      // The time bound of the new cursor: now when caught up, else the first change not yet returned.
      const since = more ? entries[limit]!.changed_at.getTime() : now;
      const page = entries.slice(0, limit);
      const last = page.at(-1)?.seq ?? after;
      const nextCursor = await encodeCursor(c.env, scope, { direction: "after", key: [last, since] });
      // Who made each change, and who wrote each object shown: one directory query for the page.
      const rows = objects ? Object.values(objects).flatMap((byId) => [...byId.values()]) : [];
      const actors = await actorsOf(
        c,
        rows,
        page.map((entry) => entry.actor),
      );
      const toJson = withObjects ? objectJson(c, actors) : null;
      const results = page.map((entry) => {
        const item: z.input<typeof changeJson> = {
          type: entry.type,
          id: entry.object_id,
          op: entry.op,
          version: entry.version,
          changed_at: entry.changed_at.toISOString(),
          actor: actors.actor(entry.actor),
        };
        const row = entry.op === "upsert" ? objects?.[entry.type].get(entry.object_id) : undefined;
        if (toJson && row) item.object = (toJson[entry.type] as (row: unknown) => Record<string, unknown>)(row);
        return item;
      });
      let next: string | null = null;
      if (more) {
        const url = new URL(c.req.url);
        url.searchParams.set("cursor", nextCursor);
        url.searchParams.set("limit", String(limit));
        next = url.toString();
      }
      return c.json({ results, next, cursor: nextCursor });
    }),
  );
}
