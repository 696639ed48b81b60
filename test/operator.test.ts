/**
 * The operator routes (src/operator/) on the three shards of vitest.shards.config.ts: off without a
 * usable OPERATOR_SECRET, the secret checked, the input validated, and moves as `npm run accounts --
 * move` asks for them: streamed, one at a time per account however many ask at once, and stopped
 * (asked to, or by a client that went away) before the switch with the account whole on its source.
 * scripts/test-move.ts runs the command itself against wrangler dev under load.
 */
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../src/app";
import { bindingNamed } from "../src/db/shards";
import {
  BASE,
  call,
  caller,
  createAccount,
  createList,
  expectProblem,
  fetchWith,
  json,
  shardOf,
  type Caller,
} from "./helpers";

const SECRET = "operator-secret-0123456789abcdef-0123456789";
const operator = { OPERATOR_SECRET: SECRET };
/**
 * A request with the operator secret, answered as soon as the Worker answers: a move's lines stream
 * on after that (`fetchWith` would wait for the request's background work).
 */
const asOperator = (path: string, init: RequestInit = {}) =>
  app.fetch(
    new Request(new URL(path, BASE), { ...init, headers: { Authorization: `Bearer ${SECRET}`, ...init.headers } }),
    { ...env, ...operator } as Cloudflare.Env,
    createExecutionContext(),
  );
const moveRequest = (to: unknown): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify({ to }),
});
const movePath = (account: number | string) => `/operator/accounts/${encodeURIComponent(account)}/move`;

type Line = { event: string; [field: string]: unknown };

/** A move's NDJSON lines, read as they come: `until` returns those up to the first that matches. */
function lineReader(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let ended = false;
  const read: Line[] = [];
  return {
    async until(matches: (line: Line) => boolean = () => false): Promise<Line[]> {
      const from = read.length;
      for (;;) {
        let end: number;
        while ((end = buffered.indexOf("\n")) >= 0) {
          const line = JSON.parse(buffered.slice(0, end)) as Line;
          buffered = buffered.slice(end + 1);
          read.push(line);
          if (matches(line)) return read.slice(from);
        }
        if (ended) {
          expect(buffered).toBe("");
          return read.slice(from);
        }
        const { done, value } = await reader.read();
        if (done) ended = true;
        else buffered += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}

/** Every line of a move's answer, to the end. */
async function readLines(response: Response): Promise<Line[]> {
  expect(response.status, response.status === 200 ? "" : await response.clone().text()).toBe(200);
  expect(response.headers.get("Content-Type")).toBe("application/x-ndjson; charset=utf-8");
  return lineReader(response).until();
}

const copying = (line: Line) => line.event === "log" && String(line.message).startsWith("Copying");

/** An account on `shard` with `places` places written straight to the shard (its triggers index them) and a client. */
async function accountWith(shard: string, places: number): Promise<Caller> {
  const who = await caller("read write", await createAccount(shard));
  const db = bindingNamed(env, shard);
  for (let from = 0; from < places; from += 500) {
    const names = Array.from({ length: Math.min(500, places - from) }, (_, i) => `place ${from + i}`);
    await db
      .prepare(
        "INSERT INTO pinpoints (account_id, name, latitude, longitude) SELECT ?, value, 45.75, 4.85 FROM json_each(?)",
      )
      .bind(who.accountId, JSON.stringify(names))
      .run();
  }
  return who;
}

const placesOn = async (shard: string, account: number) =>
  (await bindingNamed(env, shard)
    .prepare("SELECT count(*) AS n FROM pinpoints WHERE account_id = ?")
    .bind(account)
    .first<{ n: number }>())!.n;

/** Waits until no move of the account runs (a stopped move finishes its current step first). */
async function settled(account: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const response = await asOperator(movePath(account), { method: "DELETE" });
    await response.body?.cancel();
    if (response.status === 404) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the move of ${account} did not stop`);
}

describe("without a usable OPERATOR_SECRET", () => {
  const requests: [string, RequestInit][] = [
    ["/operator/shards", {}],
    ["/operator/accounts/1", {}],
    [movePath(1), moveRequest("SHARD_1")],
    [movePath(1), { method: "DELETE" }],
    [movePath(1), { method: "PATCH" }],
    [
      "/operator/shards",
      { method: "OPTIONS", headers: { Origin: "https://x.example", "Access-Control-Request-Method": "GET" } },
    ],
    ["/operator", {}],
  ];

  it.each([
    ["unset", {}],
    ["shorter than 32 characters", { OPERATOR_SECRET: "x".repeat(31) }],
  ])("%s: every /operator path answers as an unknown path does", async (_name, secrets) => {
    const unknown = await expectProblem(await fetchWith(secrets, "/no/such/path"), 404, { code: "not_found" });
    expect(unknown.detail).toBe("No resource at /no/such/path.");
    for (const [path, init] of requests) {
      for (const authorization of [undefined, `Bearer ${"x".repeat(31)}`, `Bearer ${SECRET}`]) {
        const headers = { ...init.headers, ...(authorization ? { Authorization: authorization } : {}) };
        const response = await fetchWith(secrets, path, { ...init, headers });
        const problem = await expectProblem(response, 404, { code: "not_found" });
        expect(problem.detail, `${init.method ?? "GET"} ${path}`).toBe(`No resource at ${path}.`);
        expect(response.headers.get("WWW-Authenticate")).toBeNull();
        expect(response.headers.get("Allow")).toBeNull();
      }
    }
    // The deployed default: no secret in the Worker's own environment.
    await expectProblem(await call("/operator/shards", { headers: { Authorization: `Bearer ${SECRET}` } }), 404);
  });
});

describe("the operator secret", () => {
  it("is required, as a bearer credential, and must be the one the service has", async () => {
    const { token } = await caller();
    const refused: [string, Record<string, string>][] = [
      ["none", {}],
      ["a Basic credential", { Authorization: `Basic ${btoa(`operator:${SECRET}`)}` }],
      ["another secret", { Authorization: `Bearer ${SECRET.slice(0, -1)}x` }],
      ["a longer one", { Authorization: `Bearer ${SECRET}x` }],
      ["a client's access token", { Authorization: `Bearer ${token}` }],
    ];
    for (const [name, headers] of refused) {
      for (const [path, init] of [
        ["/operator/shards", {}],
        [movePath(1), moveRequest("SHARD_1")],
        [movePath(1), { method: "DELETE" }],
        [movePath(1), { method: "PATCH" }],
      ] as [string, RequestInit][]) {
        const response = await fetchWith(operator, path, { ...init, headers: { ...init.headers, ...headers } });
        await expectProblem(response, 401, { code: "unauthorized" });
        expect(response.headers.get("WWW-Authenticate"), name).toMatch(/^Bearer realm="operator"/);
      }
    }
    const shards = await asOperator("/operator/shards");
    expect(shards.status).toBe(200);
    expect(await shards.json()).toEqual({ directory: "DB", shards: ["DB", "SHARD_1", "SHARD_2"] });
    // Authenticated, a wrong method is a 405 and an unknown path a 404, as elsewhere.
    expect((await asOperator(movePath(1), { method: "PATCH" })).status).toBe(405);
    await expectProblem(await asOperator("/operator/nothing"), 404);
  });
});

describe("moving an account", () => {
  it("refuses what it cannot do, with problem details", async () => {
    const who = await caller("read write", await createAccount("SHARD_1"));
    await expectProblem(await asOperator(movePath(who.accountId), { method: "POST" }), 400);
    await expectProblem(await asOperator(movePath(who.accountId), moveRequest(2)), 400, {
      code: "validation_failed",
      pointers: ["/to"],
    });
    await expectProblem(await asOperator(movePath(who.accountId), moveRequest("")), 400, {
      pointers: ["/to"],
    });
    const unknownShard = await expectProblem(await asOperator(movePath(who.accountId), moveRequest("SHARD_9")), 400, {
      pointers: ["/to"],
    });
    expect(unknownShard.detail).toBe("to: must be one of the shards: DB, SHARD_1, SHARD_2");
    await expectProblem(
      await asOperator(movePath(who.accountId), {
        method: "POST",
        headers: { "Content-Type": "text/plain" },
        body: "x",
      }),
      415,
    );
    await expectProblem(
      await asOperator(movePath(who.accountId), {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: '{"to": ',
      }),
      400,
      { code: "malformed_json" },
    );
    const missing = await expectProblem(await asOperator(movePath(987654321), moveRequest("DB")), 404);
    expect(missing.detail).toBe('There is no account "987654321".');
    await expectProblem(await asOperator(movePath("no such account"), moveRequest("DB")), 404);
    await expectProblem(await asOperator("/operator/accounts/no%20such%20account"), 404);
    const idle = await expectProblem(await asOperator(movePath(who.accountId), { method: "DELETE" }), 404);
    expect(idle.detail).toBe(`No move of account ${who.accountId} is running.`);
    expect(await shardOf(who.accountId)).toBe("SHARD_1");
  });

  it("moves an account named by its name, streaming its progress and its report", async () => {
    const who = await accountWith("SHARD_1", 300);
    const list = await createList(who, { name: "Favourites" });
    const page = await json<{ results: { id: number }[] }>(await who.get("/v3.0/pinpoints?limit=20"));
    const added = await who.send(
      "POST",
      `/v3.0/lists/${list.id}/pinpoints`,
      page.results.map(({ id }) => ({ id })),
    );
    expect(added.status).toBe(200);
    const { name } = (await (await asOperator(`/operator/accounts/${who.accountId}`)).json()) as { name: string };

    const lines = await readLines(await asOperator(movePath(name), moveRequest("SHARD_2")));
    expect(lines[0]).toMatchObject({ event: "started", account: { id: who.accountId, name, shard: "SHARD_1" } });
    expect(lines[0]!.to).toBe("SHARD_2");
    expect(lines.filter((l) => l.event === "log").map((l) => l.message)).toContainEqual(
      expect.stringMatching(new RegExp(`^Copying account ${who.accountId} from SHARD_1 to SHARD_2 \\(`)),
    );
    const last = lines.at(-1)!;
    expect(last).toMatchObject({ event: "done", report: { from: "SHARD_1", to: "SHARD_2", purged: true } });
    expect((last.report as { copied: number }).copied).toBeGreaterThanOrEqual(301);
    expect(last.d1Calls).toBeGreaterThan(10);
    expect(lines.every((l, i) => i === 0 || (l.ms as number) >= ((lines[i - 1]!.ms as number) ?? 0))).toBe(true);

    expect(await shardOf(who.accountId)).toBe("SHARD_2");
    expect(await (await asOperator(`/operator/accounts/${encodeURIComponent(name)}`)).json()).toEqual({
      id: who.accountId,
      name,
      shard: "SHARD_2",
    });
    expect(await placesOn("SHARD_2", who.accountId)).toBe(300);
    expect(await placesOn("SHARD_1", who.accountId)).toBe(0);
    const members = await json<{ results: unknown[] }>(await who.get(`/v3.0/pinpoints?list=${list.id}&limit=100`));
    expect(members.results).toHaveLength(20);
    const fresh = await who.send("POST", "/v3.0/pinpoints", { name: "after", latitude: 1, longitude: 2 });
    expect(fresh.status).toBe(201);

    // Asked again, it is where it should be: nothing to copy.
    const again = await readLines(await asOperator(movePath(who.accountId), moveRequest("SHARD_2")));
    expect(again.at(-1)).toMatchObject({ event: "done", report: { from: "SHARD_2", to: "SHARD_2", copied: 0 } });
  });

  it("runs one move of an account at a time, however many are asked for at once", async () => {
    const who = await accountWith("DB", 2000);
    const other = await accountWith("DB", 10);
    const first = await asOperator(movePath(who.accountId), moveRequest("SHARD_1"));
    const lines = lineReader(first);
    expect((await lines.until(copying))[0]!.event).toBe("started");

    const rivals = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        asOperator(movePath(who.accountId), moveRequest(["SHARD_1", "SHARD_2", "DB"][i % 3])),
      ),
    );
    for (const rival of rivals) {
      const problem = await expectProblem(rival, 409, { code: "conflict" });
      expect(problem.detail).toMatch(
        new RegExp(`^A move of account ${who.accountId} to SHARD_1 has been running since `),
      );
    }
    // Another account's move is another object's: it runs meanwhile.
    const beside = await readLines(await asOperator(movePath(other.accountId), moveRequest("SHARD_2")));
    expect(beside.at(-1)).toMatchObject({ event: "done", report: { from: "DB", to: "SHARD_2" } });

    expect((await lines.until()).at(-1)).toMatchObject({
      event: "done",
      report: { from: "DB", to: "SHARD_1", purged: true },
    });
    expect(await shardOf(who.accountId)).toBe("SHARD_1");
    expect(await placesOn("SHARD_1", who.accountId)).toBe(2000);
    expect(await placesOn("DB", who.accountId)).toBe(0);
    expect(await placesOn("SHARD_2", who.accountId)).toBe(0);
  });

  it("stops before the switch when asked to, and leaves the account whole on its source", async () => {
    const who = await accountWith("SHARD_2", 2000);
    const lines = lineReader(await asOperator(movePath(who.accountId), moveRequest("DB")));
    // Asked while it copies: the stop takes effect at its next check.
    await lines.until(copying);
    const stop = await asOperator(movePath(who.accountId), { method: "DELETE" });
    expect(stop.status, await stop.clone().text()).toBe(202);
    expect(await stop.json()).toEqual({ account: who.accountId, stopping: true });

    const rest = await lines.until();
    expect(rest.map((l) => l.event)).toContain("stopping");
    expect(rest.filter((l) => l.event === "log").map((l) => l.message)).not.toContainEqual(
      expect.stringMatching(/^Switched/),
    );
    expect(rest.at(-1)).toMatchObject({
      event: "failed",
      interrupted: true,
      error: "Interrupted before the switch: the account stays on its source.",
    });
    await expectWholeAndWritable(who, "SHARD_2", 2000);

    // Run again, it moves everything, the write made meanwhile included.
    const again = await readLines(await asOperator(movePath(who.accountId), moveRequest("DB")));
    expect(again.at(-1)).toMatchObject({ event: "done", report: { from: "SHARD_2", to: "DB", purged: true } });
    expect(await placesOn("DB", who.accountId)).toBe(2001);
    expect(await placesOn("SHARD_2", who.accountId)).toBe(0);
  });

  it("stops before the switch when its client goes away", async () => {
    const who = await accountWith("SHARD_1", 2000);
    const lines = lineReader(await asOperator(movePath(who.accountId), moveRequest("SHARD_2")));
    await lines.until(copying);
    await lines.cancel();
    await settled(who.accountId);

    await expectWholeAndWritable(who, "SHARD_1", 2000);
  });
});

/** An interrupted move left the account on `shard` with its `places`, and its writes are taken there at once. */
async function expectWholeAndWritable(who: Caller, shard: string, places: number): Promise<void> {
  expect(await shardOf(who.accountId)).toBe(shard);
  expect(await placesOn(shard, who.accountId)).toBe(places);
  const write = await who.send("POST", "/v3.0/pinpoints", { name: "after the move", latitude: 1, longitude: 2 });
  expect(write.status, await write.clone().text()).toBe(201);
}
