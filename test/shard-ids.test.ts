/**
 * Ids that no two shards share (docs/scaling.md, "Identifiers"): id ranges claimed in the directory, never
 * twice, even when claims race; a move that refuses, never skips, a row the target holds of another
 * account under one of the account's ids; category ids that stay distinct when accounts on different
 * shards create categories at the same moment, and copies that never overwrite another account's
 * category. Runs in both configurations: with one database, category ids are its AUTOINCREMENT's as ever.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CATEGORY_IDS, claimShardRange, rangeAbove } from "../src/db/id-ranges";
import { moveAccount, MoveError } from "../src/db/move";
import { DIRECTORY, ID_RANGE, shardNames } from "../src/db/shard-plan";
import { bindingNamed } from "../src/db/shards";
import { mediaFile } from "./media-fixtures";
import { batchOf, caller, createAccount, createList, createPinpoint, json, shardOf, type Caller } from "./helpers";

const SHARDS = shardNames(env.SHARDS);
const sharded = SHARDS.length > 1;
const db = (name: string) => bindingNamed(env, name);
const batches = () => Object.fromEntries(SHARDS.map((name) => [name, batchOf(db(name))]));

const move = (account: number, to: string) =>
  moveAccount({ account, to, directory: batchOf(env.DB), shards: batches(), batchRows: 7, graceMs: 0 });

async function ranges(): Promise<{ start: number; holder: string; next_id: number | null }[]> {
  const { results } = await env.DB.prepare("SELECT start, holder, next_id FROM id_ranges ORDER BY start").all<{
    start: number;
    holder: string;
    next_id: number | null;
  }>();
  return results;
}

/** Where the shard's places' ids continue: its `pinpoints` sequence. */
async function sequenceOf(name: string): Promise<number> {
  const row = await db(name)
    .prepare("SELECT seq FROM sqlite_sequence WHERE name = 'pinpoints'")
    .first<{ seq: number }>();
  return row?.seq ?? 0;
}

type CategoryJson = { id: number; name: string };

async function createCategory(who: Caller, name: string): Promise<Response> {
  return who.send("POST", "/v3.0/categories", { name, image_file: mediaFile("image/png", "icon.png") });
}

describe("the range above a shard's sequence", () => {
  it("counts a claimed range as used before anything is allocated from it", () => {
    expect(rangeAbove(0)).toBe(ID_RANGE);
    expect(rangeAbove(ID_RANGE - 1)).toBe(2 * ID_RANGE);
    expect(rangeAbove(ID_RANGE)).toBe(2 * ID_RANGE);
    expect(rangeAbove(3 * ID_RANGE - 1)).toBe(4 * ID_RANGE);
    expect(rangeAbove(3 * ID_RANGE + 12_345)).toBe(4 * ID_RANGE);
  });
});

describe.skipIf(!sharded)("id ranges claimed in the directory", () => {
  it("gives the shards of the setup one range each, in order, recorded", async () => {
    const recorded = await ranges();
    expect(recorded.slice(0, SHARDS.length - 1)).toEqual(
      SHARDS.slice(1).map((holder, i) => ({ start: (i + 1) * ID_RANGE, holder, next_id: null })),
    );
    for (const [i, name] of SHARDS.entries()) {
      if (name !== DIRECTORY) expect(await sequenceOf(name)).toBeGreaterThanOrEqual(i * ID_RANGE - 1);
    }
  });

  it("never gives two racing claims the same range", async () => {
    const before = await ranges();
    const targets = Array.from({ length: 24 }, (_, i) => SHARDS[1 + (i % (SHARDS.length - 1))]!);
    const starts = await Promise.all(targets.map((name) => claimShardRange(batchOf(env.DB), batches(), name)));

    expect(new Set(starts).size).toBe(starts.length);
    const highestBefore = Math.max(...before.map((r) => r.start));
    for (const start of starts) {
      expect(start % ID_RANGE).toBe(0);
      expect(start).toBeGreaterThan(highestBefore);
    }
    const recorded = (await ranges()).filter((r) => !before.some((b) => b.start === r.start));
    expect(recorded.map((r) => [r.start, r.holder]).sort(([a], [b]) => Number(a) - Number(b))).toEqual(
      starts.map((start, i) => [start, targets[i]]).sort(([a], [b]) => Number(a) - Number(b)),
    );
    // Each shard allocates from the highest range it claimed.
    for (const name of new Set(targets)) {
      const own = starts.filter((_, i) => targets[i] === name);
      expect(await sequenceOf(name)).toBe(Math.max(...own) - 1);
    }
  });

  it("gives two moves onto two shards different ranges, even for accounts with nothing to copy", async () => {
    const [a, b] = await Promise.all([createAccount(DIRECTORY), createAccount(DIRECTORY)]);
    await move(a, "SHARD_1");
    await move(b, "SHARD_2");
    const latest = async (holder: string) =>
      Math.max(...(await ranges()).filter((r) => r.holder === holder).map((r) => r.start));
    expect(await latest("SHARD_1")).not.toBe(await latest("SHARD_2"));

    // And again at the same moment, each account onto the other's shard.
    await Promise.all([move(a, "SHARD_2"), move(b, "SHARD_1")]);
    expect([await shardOf(a), await shardOf(b)]).toEqual(["SHARD_2", "SHARD_1"]);
    const [one, two] = [await latest("SHARD_1"), await latest("SHARD_2")];
    expect(one).not.toBe(two);
    // New places of the two accounts come from their shards' ranges.
    const places = await Promise.all(
      [a, b].map(async (account) => (await createPinpoint(await caller("read write", account))).id),
    );
    expect(Math.floor(places[0]! / ID_RANGE)).toBe(two / ID_RANGE);
    expect(Math.floor(places[1]! / ID_RANGE)).toBe(one / ID_RANGE);
  });
});

describe.skipIf(!sharded)("a move onto a shard holding another account's rows under the account's ids", () => {
  type Collision = { what: string; plant: (ids: Seeded, other: number) => Promise<void>; named: RegExp };
  type Seeded = { places: number[]; list: number; category: number };

  async function seeded(who: Caller): Promise<Seeded> {
    const places: number[] = [];
    for (let i = 0; i < 12; i++) places.push((await createPinpoint(who, { name: `mine ${i}` })).id);
    const list = (await createList(who)).id;
    const added = await who.send(
      "POST",
      `/v3.0/lists/${list}/pinpoints`,
      places.slice(0, 5).map((id) => ({ id })),
    );
    expect(added.status).toBe(200);
    const category = await createCategory(who, "mine");
    expect(category.status).toBe(201);
    return { places, list, category: (await json<CategoryJson>(category)).id };
  }

  const collisions: Collision[] = [
    {
      what: "a place",
      plant: async ({ places }, other) => {
        await db("SHARD_1")
          .prepare("INSERT INTO pinpoints (id, account_id, name, latitude, longitude) VALUES (?, ?, 'theirs', 1, 2)")
          .bind(places[8], other)
          .run();
      },
      named: /pinpoints \d+/,
    },
    {
      what: "a change-log entry (a deleted place's)",
      plant: async ({ places }, other) => {
        await db("SHARD_1")
          .prepare(
            "INSERT INTO changes (account_id, type, object_id, op, version) VALUES (?, 'pinpoint', ?, 'delete', 3)",
          )
          .bind(other, places[3])
          .run();
      },
      named: /changes of pinpoints \d+/,
    },
    {
      what: "a category",
      plant: async ({ category }, other) => {
        await db("SHARD_1").prepare("UPDATE categories SET account_id = ? WHERE id = ?").bind(other, category).run();
      },
      named: /categories \d+/,
    },
  ];

  it.each(collisions)("refuses over $what: the account stays whole and writable on its source", async (collision) => {
    const who = await caller("read write", await createAccount(DIRECTORY));
    const other = await createAccount("SHARD_1");
    const ids = await seeded(who);
    await collision.plant(ids, other);
    const dump = async (name: string, account: number) => ({
      pinpoints: (
        await db(name).prepare("SELECT * FROM pinpoints WHERE account_id = ? ORDER BY id").bind(account).all()
      ).results,
      members: (
        await db(name)
          .prepare(
            "SELECT list_id, pinpoint_id FROM list_pinpoints WHERE list_id IN (SELECT id FROM lists WHERE account_id = ?) ORDER BY 1, 2",
          )
          .bind(account)
          .all()
      ).results,
      changes: (await db(name).prepare("SELECT * FROM changes WHERE account_id = ? ORDER BY seq").bind(account).all())
        .results,
      categories: (
        await db(name).prepare("SELECT * FROM categories WHERE account_id = ? ORDER BY id").bind(account).all()
      ).results,
    });
    const source = await dump(DIRECTORY, who.accountId);
    const theirs = await dump("SHARD_1", other);

    const error = await move(who.accountId, "SHARD_1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MoveError);
    expect((error as Error).message).toMatch(collision.named);
    expect((error as Error).message).toMatch(/Nothing was switched/);

    // Nothing switched, nothing of the source changed, the other account's rows untouched.
    expect(await shardOf(who.accountId)).toBe(DIRECTORY);
    expect(await dump(DIRECTORY, who.accountId)).toEqual(source);
    expect(await dump("SHARD_1", other)).toEqual(theirs);
    expect(
      await env.DB.prepare("SELECT * FROM account_fences WHERE account_id = ?").bind(who.accountId).first(),
    ).toBeNull();
    // Writable and readable on its source.
    const written = await who.send("POST", "/v3.0/pinpoints", { name: "after", latitude: 0, longitude: 0 });
    expect(written.status).toBe(201);
    for (const id of ids.places) expect((await who.get(`/v3.0/pinpoints/${id}`)).status).toBe(200);
  });

  it("moves the account, its own categories included, once nothing collides", async () => {
    const who = await caller("read write", await createAccount(DIRECTORY));
    const ids = await seeded(who);
    const report = await move(who.accountId, "SHARD_1");
    expect(report).toMatchObject({ from: DIRECTORY, to: "SHARD_1", copied: 12 + 1 + 1, purged: true });
    for (const id of ids.places) expect((await who.get(`/v3.0/pinpoints/${id}`)).status).toBe(200);
    const renamed = await who.send("PUT", `/v3.0/categories/${ids.category}`, { name: "still mine" });
    expect(renamed.status, await renamed.clone().text()).toBe(200);
  });
});

describe("category ids", () => {
  it.runIf(!sharded)("with one database, come from its AUTOINCREMENT as ever", async () => {
    const who = await caller();
    const ids: number[] = [];
    for (const name of ["a", "b", "c"]) {
      const response = await createCategory(who, name);
      expect(response.status).toBe(201);
      ids.push((await json<CategoryJson>(response)).id);
    }
    const sequence = await env.DB.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'categories'").first<{
      seq: number;
    }>();
    expect(ids).toEqual([sequence!.seq - 2, sequence!.seq - 1, sequence!.seq]);
    expect(await ranges()).toEqual([]);
  });

  it.runIf(sharded)(
    "stay distinct when accounts on every shard create at once; every shard holds every one, each account changes its own",
    async () => {
      const owners = await Promise.all(SHARDS.map((shard) => createAccount(shard)));
      // Two clients per account, each under its own rate limit, all creating at the same moment, in
      // waves: each wave starts when every copy of the one before has landed, so every shard's own
      // AUTOINCREMENT would stand at the same number, the one each create would take.
      const clients = await Promise.all(owners.flatMap((account) => [0, 1].map(() => caller("read write", account))));
      const created: ({ who: Caller } & CategoryJson)[] = [];
      for (let wave = 0; wave < 8; wave++) {
        created.push(
          ...(await Promise.all(
            clients.map(async (who, c) => {
              const response = await createCategory(who, `c${c}-${wave}`);
              expect(response.status, await response.clone().text()).toBe(201);
              return { who, ...(await json<CategoryJson>(response)) };
            }),
          )),
        );
      }
      expect(new Set(created.map((c) => c.id)).size).toBe(created.length);
      // Every id from the directory's counter, in a range recorded for it.
      const counted = (await ranges()).filter((r) => r.holder === CATEGORY_IDS);
      expect(counted.length).toBeGreaterThan(0);
      for (const { id } of created) {
        expect(counted.some((r) => id >= r.start && id < r.next_id!)).toBe(true);
      }

      const expected = (renamed: boolean) =>
        created
          .map(({ id, who, name }) => ({ id, account_id: who.accountId, name: renamed ? `${name}!` : name }))
          .sort((a, b) => a.id - b.id);
      const onEveryShard = async (renamed: boolean) => {
        for (const shard of SHARDS) {
          const { results } = await db(shard)
            .prepare(
              "SELECT id, account_id, name FROM categories WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            )
            .bind(JSON.stringify(created.map((c) => c.id)))
            .all();
          expect(results, shard).toEqual(expected(renamed));
        }
      };
      await onEveryShard(false);

      const renamed = await Promise.all(
        created.map(({ who, id, name }) => who.send("PUT", `/v3.0/categories/${id}`, { name: `${name}!` })),
      );
      for (const response of renamed) expect(response.status, await response.clone().text()).toBe(200);
      await onEveryShard(true);
      // Another account reads each as its owner left it.
      const reader = await caller();
      for (const { id, name } of created) {
        expect((await json<CategoryJson>(await reader.get(`/v3.0/categories/${id}`))).name).toBe(`${name}!`);
      }
    },
  );

  it.runIf(sharded)("never overwrite another account's category on another shard", async () => {
    const mine = await caller("read write", await createAccount(DIRECTORY));
    const theirs = await createAccount("SHARD_2");
    // A collision from before ids were counted: SHARD_2's row with the id of a category of mine is theirs.
    const first = await json<CategoryJson>(await createCategory(mine, "first"));
    await db("SHARD_2")
      .prepare("UPDATE categories SET account_id = ?, name = 'theirs' WHERE id = ?")
      .bind(theirs, first.id)
      .run();
    const changed = await mine.send("PUT", `/v3.0/categories/${first.id}`, { name: "first, renamed" });
    expect(changed.status).toBe(200);
    expect(await db("SHARD_1").prepare("SELECT name FROM categories WHERE id = ?").bind(first.id).first("name")).toBe(
      "first, renamed",
    );
    expect(
      await db("SHARD_2").prepare("SELECT account_id, name FROM categories WHERE id = ?").bind(first.id).first(),
    ).toEqual({ account_id: theirs, name: "theirs" });

    // A create that meets such a row fails and leaves nothing of itself; their row stays.
    const next = (await ranges()).filter((r) => r.holder === CATEGORY_IDS).at(-1)!.next_id!;
    await db("SHARD_2")
      .prepare("INSERT INTO categories (id, account_id, name) VALUES (?, ?, 'theirs too')")
      .bind(next, theirs)
      .run();
    const refused = await createCategory(mine, "second");
    expect(refused.status).toBe(500);
    for (const shard of SHARDS) {
      const row = await db(shard).prepare("SELECT account_id, name FROM categories WHERE id = ?").bind(next).first();
      expect(row, shard).toEqual(shard === "SHARD_2" ? { account_id: theirs, name: "theirs too" } : null);
    }
    // The next create gets the next id.
    const third = await createCategory(mine, "third");
    expect(third.status).toBe(201);
    expect((await json<CategoryJson>(third)).id).toBe(next + 1);
  });
});
