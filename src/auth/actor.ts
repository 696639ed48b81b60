/**
 * Who did it (docs/people-and-roles.md, "Who did it"). Every write names its
 * actor, the principal that made it: stored on the rows it writes
 * (`created_by` once at the insert, `updated_by` at every write, a delete's
 * stamped just before it) and in the change log, as `person:<id>` or
 * `client:<id>`; shown as `{"type", "id", "name"}`.
 *
 * Names live in the directory (people, clients) while the rows live on the
 * account's shard, so a response resolves the distinct actors of all its rows
 * in one directory query (`actorNames`), never one per row, and an isolate
 * remembers a name for NAME_FRESH_MS: a page read again, or an object read
 * after its write, costs no directory query at all. A renamed person shows
 * their new name within that time; a deleted person or client keeps its type
 * and id, with `name` null.
 *
 * Who wrote an account's content is the account's business: answers to a
 * publishable key (public maps) carry null, as do other accounts' categories,
 * which every account reads.
 */
import type { Context } from "hono";
import * as z from "zod";
import { clock } from "../core/clock";
import type { AppEnv, Principal } from "../core/env";
import type { Writer } from "../db/owned";

const name = z
  .string()
  .nullable()
  .meta({ description: "Their name now (a person's display name, a client's name); null once they were deleted" });

/** An actor as the API shows it. */
export const actorJson = z
  .discriminatedUnion("type", [
    z.object({
      type: z.literal("person"),
      id: z.int().meta({ description: "The person's id" }),
      name,
    }),
    z.object({
      type: z.literal("client"),
      id: z.string().meta({ description: "The client's id (its client_id)" }),
      name,
    }),
  ])
  .meta({
    id: "Actor",
    description: "Who made a write: a person signed in, or a client (an application with client credentials)",
  });

export type ActorJson = z.output<typeof actorJson>;

/** The fields every content object carries (pinpoints, lists, events, categories): additive, nullable. */
export const writtenByJson = {
  created_by: actorJson.nullable().meta({
    description:
      "Who created it. Null for objects created before the service recorded it, in answers to a publishable " +
      "key, and on another account's category",
  }),
  updated_by: actorJson.nullable().meta({
    description: "Who wrote it last (a list's membership changes included); null where `created_by` is",
  }),
};

export type WrittenByJson = { created_by: ActorJson | null; updated_by: ActorJson | null };

/** The actor of a write by `principal`, as stored. A publishable key only reads, so it writes nothing. */
export function actorOf(principal: Principal): string {
  switch (principal.kind) {
    case "person":
      return `person:${principal.personId}`;
    case "client":
      return `client:${principal.clientId}`;
    case "key":
      throw new Error("A publishable key writes nothing: no write may run with one.");
  }
}

/** The writer of a write by `principal`: its account and actor. */
export function writerOf(principal: Principal): Writer {
  return { accountId: principal.accountId, actor: actorOf(principal) };
}

const PERSON = /^person:([1-9]\d{0,15})$/;
const CLIENT = /^client:(.+)$/s;

/** A stored actor's type and id, or null for a value that is none (nothing else writes these columns). */
function parseActor(ref: string): { type: "person"; id: number } | { type: "client"; id: string } | null {
  const person = PERSON.exec(ref);
  if (person) return { type: "person", id: Number(person[1]) };
  const client = CLIENT.exec(ref);
  return client ? { type: "client", id: client[1]! } : null;
}

/** How long an isolate shows a name it read (a rename or a deletion shows after at most this). */
export const NAME_FRESH_MS = 60_000;
const MAX_NAMES = 10_000;
const names = new Map<string, { name: string | null; until: number }>();

/** The one directory query of a response: the names of the people and clients among its actors. */
const NAMES_SQL = `
  SELECT 'person:' || id AS ref, name FROM people WHERE id IN (SELECT value FROM json_each(?1))
  UNION ALL
  SELECT 'client:' || id AS ref, name FROM clients WHERE id IN (SELECT value FROM json_each(?2))`;

/**
 * The actors named by `refs` (stored values, null ones skipped) as the API
 * shows them: one directory query for the names this isolate does not hold
 * fresh, none when it holds them all. `directory` is the directory database
 * (in a request, the routed binding: the query names directory tables).
 */
export async function actorNames(
  directory: D1Database,
  refs: Iterable<string | null>,
): Promise<(ref: string | null) => ActorJson | null> {
  const now = clock.now();
  const parsed = new Map<string, NonNullable<ReturnType<typeof parseActor>>>();
  for (const ref of refs) {
    if (ref === null || parsed.has(ref)) continue;
    const actor = parseActor(ref);
    if (actor) parsed.set(ref, actor);
  }
  const known = new Map<string, string | null>();
  const people: number[] = [];
  const clients: string[] = [];
  for (const [ref, actor] of parsed) {
    const cached = names.get(ref);
    if (cached && cached.until > now) known.set(ref, cached.name);
    else if (actor.type === "person") people.push(actor.id);
    else clients.push(actor.id);
  }
  if (people.length + clients.length > 0) {
    const { results } = await directory
      .prepare(NAMES_SQL)
      .bind(JSON.stringify(people), JSON.stringify(clients))
      .all<{ ref: string; name: string }>();
    const found = new Map(results.map((row) => [row.ref, row.name]));
    if (names.size + people.length + clients.length > MAX_NAMES) names.clear();
    const until = now + NAME_FRESH_MS;
    for (const ref of parsed.keys()) {
      if (known.has(ref)) continue;
      const name = found.get(ref) ?? null;
      known.set(ref, name);
      names.set(ref, { name, until });
    }
  }
  return (ref) => {
    const actor = ref === null ? undefined : parsed.get(ref);
    return actor ? { ...actor, name: known.get(ref!) ?? null } : null;
  };
}

/** A row that records who wrote it. */
export type Written = { account_id: number | null; created_by: string | null; updated_by: string | null };

/** The actors of one response, as its reader may see them. */
export type Actors = {
  /** `created_by` and `updated_by` of `row`: null unless the row is the reader's account's. */
  of(row: Written): WrittenByJson;
  /** One actor of the reader's account (a change's). */
  actor(ref: string | null): ActorJson | null;
};

/** What a reader who may see no actor sees: a publishable key. */
const HIDDEN: Actors = { of: () => ({ created_by: null, updated_by: null }), actor: () => null };

/**
 * The actors of `rows` (and of `refs`) as the account `reader` sees them: its own rows' actors, null
 * for any other account's (a shared category). One directory query at most.
 */
export async function actorsFor(
  directory: D1Database,
  reader: number,
  rows: readonly Written[],
  refs: readonly (string | null)[] = [],
): Promise<Actors> {
  const own = rows.filter((row) => row.account_id === reader);
  const lookup = await actorNames(directory, [...own.flatMap((row) => [row.created_by, row.updated_by]), ...refs]);
  return {
    of: (row) =>
      row.account_id === reader
        ? { created_by: lookup(row.created_by), updated_by: lookup(row.updated_by) }
        : { created_by: null, updated_by: null },
    actor: lookup,
  };
}

/** The actors of a response to the current request: none for a publishable key. */
export function actorsOf(
  c: Context<AppEnv>,
  rows: readonly Written[],
  refs: readonly (string | null)[] = [],
): Promise<Actors> {
  const { principal } = c.var;
  if (principal.kind === "key") return Promise.resolve(HIDDEN);
  return actorsFor(c.env.DB, principal.accountId, rows, refs);
}

/** `rows` as JSON, with their actors read for all of them at once (one directory query at most). */
export async function toJsonWithActors<Row extends Written, Item>(
  c: Context<AppEnv>,
  rows: Row[],
  toJson: (row: Row, actors: Actors) => Item,
): Promise<Item[]> {
  const actors = await actorsOf(c, rows);
  return rows.map((row) => toJson(row, actors));
}
