/**
 * The move audit, as an operator meets it (`npm run test:move`): a copy of the
 * project grows from one database to three shards by the steps of
 * docs/operations.md "Shards" (locally), an account of MOVE_TEST_PLACES
 * (100,000) places, with lists and events, is filled on SHARD_1 with
 * `wrangler d1 execute --file` before `npm start` starts the service, and
 * while writers write to that account and other accounts on the directory, the
 * source and the target are read and written, `npm run accounts -- move` is
 * typed as an operator types it: stopped once with Ctrl-C, then run to the end.
 * Then the audit: every acknowledged write is there, a change-feed follower
 * agrees with a full read, the other accounts were served without a 5xx, and
 * the pause is the one the command reported. The numbers are printed last.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import type { MoveReport } from "../src/db/move.ts";
import { ID_RANGE } from "../src/db/shard-plan.ts";
import { freePort, LOCAL_STARTUP_MS } from "./lib/dev-server.ts";
import { ROOT } from "./lib/wrangler.ts";

const PLACES = Number(process.env.MOVE_TEST_PLACES ?? 100_000);
const WRITERS = 4;
const LISTS = 10;
const LIST_SIZE = Math.min(1000, PLACES / LISTS);
const EVENTS = 1000;

const copy = mkdtempSync(join(tmpdir(), "poi-move-"));
after(() => rmSync(copy, { recursive: true, force: true }));
const state = join(copy, "state");
const persist = ["--persist-to", state];
const started = Date.now();
const note = (line: string) =>
  process.stderr.write(`${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s  ${line}\n`);

for (const entry of ["src", "scripts", "migrations", "public", "package.json", "tsconfig.json", "wrangler.toml"]) {
  cpSync(join(ROOT, entry), join(copy, entry), { recursive: true });
}
symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));

const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };

/** Runs a command in the copy to its end; returns its standard output and all it said (and asserts its exit status). */
function run(command: string, args: string[], { status = 0, timeout = 300_000 } = {}) {
  const result = spawnSync(command, args, { cwd: copy, encoding: "utf8", timeout, env, maxBuffer: 64 << 20 });
  assert.equal(result.status, status, `${command} ${args.join(" ")}:\n${result.stdout}\n${result.stderr}`);
  return { stdout: result.stdout, output: `${result.stdout}${result.stderr}` };
}
const node = (...args: string[]) => run(process.execPath, args).stdout;
const wrangler = (...args: string[]) => node("node_modules/wrangler/bin/wrangler.js", ...args);
const sql = (binding: string, command: string) => {
  const json = wrangler("d1", "execute", binding, "--local", ...persist, "--json", "--command", command);
  return (JSON.parse(json.slice(json.search(/^\[/m))) as { results: Record<string, unknown>[] }[])[0]!.results;
};

/** Adds a shard to the copy's wrangler.toml, as step 2 of the guide does, with a database_id of its own. */
function addShard(binding: string, databaseId: string): void {
  const toml = join(copy, "wrangler.toml");
  const text = readFileSync(toml, "utf8");
  const shards = /^SHARDS = "([^"]*)"$/m.exec(text)![1]!;
  writeFileSync(
    toml,
    text.replace(`SHARDS = "${shards}"`, `SHARDS = "${shards},${binding}"`) +
      `\n[[d1_databases]]\nbinding = "${binding}"\ndatabase_name = "poi-content-${binding.toLowerCase()}"\n` +
      `database_id = "${databaseId}"\nmigrations_dir = "migrations"\n`,
  );
}

type Client = { client_id: string; client_secret: string };
const createClient = (account: string, ...more: string[]): Client =>
  JSON.parse(node("scripts/clients.ts", "create", "--account", account, "--json", ...persist, ...more)) as Client;
/** Each account's id and shard, by name, as the directory has them. */
const accounts = () =>
  new Map(
    sql("DB", "SELECT id, name, shard FROM accounts").map((row) => [
      String(row.name),
      { id: Number(row.id), shard: String(row.shard) },
    ]),
  );

/** The big account's content as SQL: places in a city, lists of them, events at them. */
function fillSql(account: number): string {
  const lines: string[] = [];
  for (let from = 0; from < PLACES; from += 500) {
    const rows: string[] = [];
    for (let i = from; i < Math.min(PLACES, from + 500); i++) {
      const latitude = (45.7 + (i % 997) / 5000).toFixed(5);
      const longitude = (4.8 + Math.floor(i / 997) / 2000).toFixed(5);
      rows.push(`(${account}, 'place ${i}', ${latitude}, ${longitude}, '["t${i % 7}"]')`);
    }
    lines.push(`INSERT INTO pinpoints (account_id, name, latitude, longitude, tags) VALUES ${rows.join(", ")};`);
  }
  for (let list = 0; list < LISTS; list++) {
    lines.push(`INSERT INTO lists (account_id, name) VALUES (${account}, 'list ${list}');`);
    lines.push(
      `INSERT INTO list_pinpoints (list_id, pinpoint_id) SELECT (SELECT max(id) FROM lists WHERE account_id = ${account}), id ` +
        `FROM pinpoints WHERE account_id = ${account} AND id % ${LISTS} = ${list} ORDER BY id LIMIT ${LIST_SIZE};`,
    );
  }
  const day = Date.UTC(2030, 0, 1);
  lines.push(
    `INSERT INTO events (account_id, pinpoint_id, name, dates) SELECT ${account}, id, 'event at ' || name, ` +
      `'[{"start":' || (${day} + id % 365 * 86400000) || ',"end":' || (${day} + id % 365 * 86400000 + 7200000) || '}]' ` +
      `FROM pinpoints WHERE account_id = ${account} ORDER BY id LIMIT ${EVENTS};`,
  );
  return `${lines.join("\n")}\n`;
}

/** A command in the copy, in a process group of its own, its stdout and stderr gathered as one text. */
function spawnInCopy(command: string, args: string[]): { child: ChildProcess; output: () => string } {
  const child = spawn(command, args, { cwd: copy, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  return { child, output: () => output };
}

/** `npm start` in the copy, on `port`, until `stop`. */
async function startService(
  port: number,
): Promise<{ base: string; group: number; stop: () => Promise<void>; output: () => string }> {
  const { child, output } = spawnInCopy(process.execPath, ["scripts/dev.ts", "--port", String(port), ...persist]);
  const base = `http://localhost:${port}`;
  const stop = () => stopGroup(child);
  for (const deadline = Date.now() + LOCAL_STARTUP_MS; Date.now() < deadline && child.exitCode === null;) {
    try {
      await fetch(`${base}/v3.0/openapi.json`);
      return { base, group: child.pid!, stop, output };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  await stop();
  throw new Error(`npm start did not serve:\n${output()}`);
}

function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), 15_000);
    child.once("exit", () => (clearTimeout(kill), resolve()));
    process.kill(-child.pid!, "SIGTERM");
  });
}

/**
 * `npm run accounts -- move ...` as typed at a terminal, in a process group of its own as a shell would
 * start it, so a Ctrl-C (SIGINT to the group) reaches npm and the command alike.
 */
function moveCommand(args: string[]): {
  done: Promise<{ code: number | null; signal: string | null; output: string }>;
  child: ChildProcess;
  output: () => string;
} {
  const { child, output } = spawnInCopy("npm", ["run", "--silent", "accounts", "--", "move", ...args]);
  // Once npm has exited and the command's output has all been read.
  const done = new Promise<{ code: number | null; signal: string | null; output: string }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, output: output() })),
  );
  return { done, child, output };
}

/**
 * CPU seconds the workerd processes of a process group have used so far (Linux /proc; USER_HZ is 100):
 * the Worker, its Durable Objects and the local D1 databases' SQLite alike.
 */
function workerdCpuSeconds(group: number): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ... utime stime: fields 5, 14 and 15, counted after the command's closing parenthesis.
    const close = stat.lastIndexOf(")");
    const fields = stat.slice(close + 2).split(" ");
    if (stat.slice(stat.indexOf("(") + 1, close) === "workerd" && Number(fields[2]) === group) {
      ticks += Number(fields[11]) + Number(fields[12]);
    }
  }
  return ticks / 100;
}

/** The statuses a caller got, counted by status. */
class Tally {
  readonly statuses = new Map<number, number>();
  readonly failures: string[] = [];
  count(what: string, status: number, body = ""): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if (status >= 500) this.failures.push(`${what}: ${status} ${body.slice(0, 200)}`);
  }
  get total(): number {
    return [...this.statuses.values()].reduce((a, b) => a + b, 0);
  }
}

type Api = (method: string, path: string, body?: unknown) => Promise<Response>;

async function api(base: string, client: Client): Promise<Api> {
  const response = await fetch(`${base}/v3.0/oauth2/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "client_credentials", ...client }),
  });
  assert.equal(response.status, 200, await response.clone().text());
  const { access_token } = (await response.json()) as { access_token: string };
  return (method, path, body) =>
    fetch(new URL(path, base), {
      method,
      headers: {
        Authorization: `Bearer ${access_token}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every page of `path` (1,000 a page), following `next`. */
async function everything<T>(call: Api, path: string): Promise<T[]> {
  const all: T[] = [];
  let url: string | null = `${path}${path.includes("?") ? "&" : "?"}limit=1000`;
  while (url) {
    const response = await call("GET", url);
    assert.equal(response.status, 200, `${url}: ${await response.clone().text()}`);
    const page = (await response.json()) as { results: T[]; next: string | null };
    all.push(...page.results);
    url = page.next;
    // One client, under its rate limit (RATE_LIMIT_CLIENT, 20 a second).
    await pause(60);
  }
  return all;
}

test(`an operator moves an account of ${PLACES.toLocaleString("en-US")} places under load with the documented command`, async () => {
  // The guide, locally: one database first, then SHARD_1 (its own database_id; there is no `wrangler d1 create`).
  writeFileSync(join(copy, ".dev.vars"), "");
  wrangler("d1", "migrations", "apply", "DB", "--local", ...persist);
  addShard("SHARD_1", "local-shard-1");
  wrangler("d1", "migrations", "apply", "SHARD_1", "--local", ...persist);
  const shard1From = Number(
    /SHARD_1: allocates ids from (\d+)/.exec(node("scripts/accounts.ts", "init", ...persist))?.[1],
  );
  assert.ok(shard1From >= ID_RANGE && shard1From % ID_RANGE === 0, `SHARD_1's range starts at ${shard1From}`);

  // The big account on SHARD_1, filled before the service starts.
  const big = createClient("big", "--shard", "SHARD_1");
  const bigId = accounts().get("big")!.id;
  writeFileSync(join(copy, "fill.sql"), fillSql(bigId));
  wrangler("d1", "execute", "SHARD_1", "--local", ...persist, "--file", "fill.sql", "--yes");
  assert.equal(Number(sql("SHARD_1", `SELECT count(*) AS n FROM pinpoints WHERE account_id = ${bigId}`)[0]!.n), PLACES);
  note(`filled ${PLACES} places on SHARD_1`);

  // Then SHARD_2. Reusing an id is refused at start, by npm start and by the accounts command alike.
  addShard("SHARD_2", "local-shard-1");
  const refused = run(process.execPath, ["scripts/accounts.ts", "list", ...persist], { status: 1 }).output;
  assert.match(refused, /SHARD_1 and SHARD_2 name the same database \(database_id local-shard-1\)/);
  assert.match(refused, /its own database_id/);
  const startRefused = run(process.execPath, ["scripts/dev.ts", ...persist], { status: 1 }).output;
  assert.match(startRefused, /SHARD_1 and SHARD_2 name the same database/);
  const toml = join(copy, "wrangler.toml");
  writeFileSync(
    toml,
    readFileSync(toml, "utf8").replace(
      /(binding = "SHARD_2"[\s\S]*?database_id = )"local-shard-1"/,
      '$1"local-shard-2"',
    ),
  );
  wrangler("d1", "migrations", "apply", "SHARD_2", "--local", ...persist);
  assert.match(node("scripts/accounts.ts", "init", ...persist), /SHARD_2: allocates ids from \d+/);

  // New accounts without --shard spread: the fewest places, then the fewest accounts (DB and SHARD_2 tie at none).
  const onDirectory = createClient("on-directory");
  const onTarget = createClient("on-target");
  const onSource = createClient("on-source", "--shard", "SHARD_1");
  const placed = accounts();
  assert.deepEqual(
    ["on-directory", "on-target", "on-source"].map((name) => placed.get(name)!.shard),
    ["DB", "SHARD_2", "SHARD_1"],
  );
  // The writers share a client of their own (each step paced so that together they stay under its limit).
  const writersClient = createClient("big");

  const service = await startService(await freePort());
  note(`npm start serves at ${service.base}`);
  try {
    const bigApi = await api(service.base, big);
    // An account on SHARD_1 allocates from SHARD_1's range; another account's place is a 403 across shards,
    // as on one database.
    const [sourceApi, directoryApi] = await Promise.all([api(service.base, onSource), api(service.base, onDirectory)]);
    const place = { name: "own", latitude: 45.7, longitude: 4.8 };
    const [onShard1, onDb] = await Promise.all(
      [sourceApi, directoryApi].map(
        async (call) => ((await (await call("POST", "/v3.0/pinpoints", place)).json()) as { id: number }).id,
      ),
    );
    assert.ok(onShard1! >= shard1From && onShard1! < shard1From + ID_RANGE, `${onShard1} in SHARD_1's range`);
    assert.ok(onDb! < ID_RANGE, `${onDb} in the directory's range`);
    assert.equal((await sourceApi("GET", `/v3.0/pinpoints/${onDb}`)).status, 403);
    const lists = (await everything<{ id: number }>(bigApi, "/v3.0/lists")).map(({ id }) => id);
    assert.equal(lists.length, LISTS);
    const listSizes = async () =>
      Promise.all(lists.map(async (id) => (await everything(bigApi, `/v3.0/pinpoints?list=${id}`)).length));
    const sizesBefore = await listSizes();
    assert.deepEqual(sizesBefore, Array(LISTS).fill(LIST_SIZE));
    const eventsBefore = (await everything<{ id: number }>(bigApi, "/v3.0/events")).length;
    assert.equal(eventsBefore, EVENTS);

    // The follower, as docs/offline-and-concurrency.md has a client sync: a cursor, then a full read, then
    // the feed from that cursor, across the move.
    const followerApi = bigApi;
    let cursor = ((await (await followerApi("GET", "/v3.0/changes")).json()) as { cursor: string }).cursor;
    const local = new Map(
      (await everything<{ id: number; name: string }>(bigApi, "/v3.0/pinpoints")).map(({ id, name }) => [id, name]),
    );
    assert.equal(local.size, PLACES);
    const fate = new Map<number, string>();
    const follow = async () => {
      for (
        let url: string | null = `/v3.0/changes?include=objects&limit=1000&cursor=${encodeURIComponent(cursor)}`;
        url;
      ) {
        const response = await followerApi("GET", url);
        assert.equal(response.status, 200, await response.clone().text());
        const page = (await response.json()) as {
          results: { type: string; id: number; op: string; object?: { name: string } }[];
          next: string | null;
          cursor: string;
        };
        for (const change of page.results.filter(({ type }) => type === "pinpoint")) {
          fate.set(change.id, change.op);
          if (change.op === "delete") local.delete(change.id);
          else local.set(change.id, change.object?.name ?? "");
        }
        cursor = page.cursor;
        url = page.next;
        await pause(60);
      }
    };
    await follow();

    let stop = false;
    let retriedInPause = 0;
    const names = new Map<number, string>();
    const deleted = new Set<number>();
    const members = new Map<number, number>();
    const bigTally = new Tally();
    const writer = async (n: number) => {
      const call = await api(service.base, writersClient);
      const list = lists[n % LISTS]!;
      /** A write, sent again while the account's writes are paused (503 account_moving, Retry-After: 1). */
      const write = async (method: string, path: string, body?: unknown) => {
        for (;;) {
          const response = await call(method, path, body);
          if (response.status === 503) {
            const problem = (await response.json()) as { type: string };
            assert.equal(problem.type, "urn:poi-api:problem:account_moving");
            assert.equal(response.headers.get("Retry-After"), "1");
            retriedInPause++;
            await pause(200);
            continue;
          }
          bigTally.count(
            `${method} ${path}`,
            response.status,
            response.status >= 500 ? await response.clone().text() : "",
          );
          return response;
        }
      };
      for (let step = 1; !stop; step++) {
        // Together under their client's rate limit (RATE_LIMIT_CLIENT, 20 a second): at most 3 requests a step.
        await pause(700);
        const created = await write("POST", "/v3.0/pinpoints", {
          name: `w${n}-${step}`,
          latitude: 45.76,
          longitude: 4.84,
        });
        assert.equal(created.status, 201, await created.clone().text());
        const { id } = (await created.json()) as { id: number };
        names.set(id, `w${n}-${step}`);
        const renamed = await write("PUT", `/v3.0/pinpoints/${id}`, { name: `w${n}-${step}-renamed` });
        assert.equal(renamed.status, 200, await renamed.clone().text());
        await renamed.body?.cancel();
        names.set(id, `w${n}-${step}-renamed`);
        if (step % 3 === 0) {
          const gone = await write("DELETE", `/v3.0/pinpoints/${id}`);
          assert.equal(gone.status, 204, await gone.clone().text());
          deleted.add(id);
        } else if (step % 3 === 1) {
          const added = await write("POST", `/v3.0/lists/${list}/pinpoints`, [{ id }]);
          assert.equal(added.status, 200, await added.clone().text());
          assert.deepEqual(((await added.json()) as { errors: unknown[] }).errors, []);
          members.set(id, list);
        }
      }
    };
    const followerLoop = async () => {
      while (!stop) {
        await follow();
        await pause(500);
      }
    };
    /** Another account: reads a page and writes a place, in turn, throughout; any 5xx is a failure. */
    const neighbour = async (client: Client, tally: Tally) => {
      const call = await api(service.base, client);
      for (let step = 0; !stop; step++) {
        await pause(150);
        const response =
          step % 2 === 0
            ? await call("GET", "/v3.0/pinpoints?limit=50")
            : await call("POST", "/v3.0/pinpoints", { name: `n${step}`, latitude: 45.7, longitude: 4.8 });
        tally.count(step % 2 === 0 ? "read" : "write", response.status, await response.text());
        if (response.status !== (step % 2 === 0 ? 200 : 201)) tally.failures.push(`${step}: ${response.status}`);
      }
    };
    const neighbours = { directory: new Tally(), source: new Tally(), target: new Tally() };
    const load = [
      ...Array.from({ length: WRITERS }, (_, n) => writer(n)),
      followerLoop(),
      neighbour(onDirectory, neighbours.directory),
      neighbour(onSource, neighbours.source),
      neighbour(onTarget, neighbours.target),
    ];
    // A failed assertion in the load stops it and fails the test where the load is awaited.
    for (const task of load) task.catch(() => (stop = true));
    // What serving the load alone costs workerd, to tell the move's own CPU time apart.
    await pause(3000);
    const idleFrom = workerdCpuSeconds(service.group);
    await pause(20_000);
    const loadCpuPerSecond = (workerdCpuSeconds(service.group) - idleFrom) / 20;

    // Ctrl-C while it copies: the move stops before its switch and the account stays whole on SHARD_1.
    const base = ["big", "--to", "SHARD_2", "--base", service.base];
    const interrupted = moveCommand(base);
    while (!/Copying account/.test(interrupted.output()) && interrupted.child.exitCode === null) await pause(100);
    await pause(500);
    process.kill(-interrupted.child.pid!, "SIGINT");
    const stopped = await interrupted.done;
    note("the interrupted move ended");
    // npm waits for the command, then ends as its own Ctrl-C says (a shell shows 130); the command ended 1.
    assert.equal(stopped.signal ?? stopped.code, "SIGINT", stopped.output);
    const last = JSON.parse(stopped.output.trim().split("\n").at(-1)!) as { event: string; interrupted: boolean };
    assert.deepEqual([last.event, last.interrupted], ["failed", true]);
    assert.match(stopped.output, /Interrupted: asking the service to stop the move before its switch/);
    assert.match(stopped.output, /Interrupted before the switch: the account stays on its source\./);
    assert.doesNotMatch(stopped.output, /Switched to/);
    const operator = {
      Authorization: `Bearer ${readFileSync(join(copy, ".dev.vars"), "utf8").match(/^OPERATOR_SECRET=(\S+)$/m)![1]}`,
    };
    const placed = await fetch(`${service.base}/operator/accounts/big`, { headers: operator });
    assert.deepEqual(await placed.json(), { id: bigId, name: "big", shard: "SHARD_1" });
    await pause(3000);

    // The move, to its end.
    const moveStarted = Date.now();
    const cpuBefore = workerdCpuSeconds(service.group);
    const moved = await moveCommand(base).done;
    const moveSeconds = (Date.now() - moveStarted) / 1000;
    const moveCpu = workerdCpuSeconds(service.group) - cpuBefore;
    note(`the move ended after ${moveSeconds.toFixed(0)} s`);
    assert.equal(moved.code, 0, moved.output);
    assert.equal(moved.signal, null);
    const lines = moved.output.trim().split("\n");
    const report = JSON.parse(lines.at(-1)!) as MoveReport;
    assert.deepEqual(report, { ...report, from: "SHARD_1", to: "SHARD_2", purged: true });
    const printedPause = /the account's writes were paused for (\d+) ms\./.exec(moved.output);
    assert.equal(Number(printedPause?.[1]), report.pauseMs, moved.output);
    const calls = Number(/Done, ([\d,]+) D1 calls/.exec(moved.output)![1]!.replaceAll(",", ""));
    await pause(3000);
    stop = true;
    await Promise.all(load);
    await follow();

    // The audit. Every acknowledged write: its place with its last name, or gone if it was deleted.
    const all = await everything<{ id: number; name: string }>(bigApi, "/v3.0/pinpoints");
    const read = new Map(all.map(({ id, name }) => [id, name]));
    assert.equal(all.length, PLACES + names.size - deleted.size);
    for (const [id, name] of names) {
      if (deleted.has(id)) assert.equal(read.has(id), false, `${id} was deleted`);
      else assert.equal(read.get(id), name, `${id}`);
    }
    // The follower's copy, synced before the move and kept by the feed across it, is what a full read shows.
    assert.equal(local.size, read.size);
    for (const [id, name] of read) assert.equal(local.get(id), name, `${id} in the follower's copy`);
    for (const id of names.keys())
      assert.equal(fate.get(id), deleted.has(id) ? "delete" : "upsert", `${id} in the feed`);
    // Lists and events moved whole; the writers' memberships are there.
    const sizesAfter = await listSizes();
    for (const [index, list] of lists.entries()) {
      const added = [...members].filter(([id, to]) => to === list && !deleted.has(id)).length;
      assert.equal(sizesAfter[index], LIST_SIZE + added, `list ${list}`);
    }
    assert.equal((await everything(bigApi, "/v3.0/events")).length, EVENTS);
    // New ids on the target are above every id the account had.
    const fresh = await bigApi("POST", "/v3.0/pinpoints", { name: "after the move", latitude: 45.7, longitude: 4.8 });
    assert.equal(fresh.status, 201);
    assert.ok(((await fresh.json()) as { id: number }).id > Math.max(...read.keys()));

    // The other accounts, on the directory, the source and the target: served throughout, no 5xx.
    for (const [where, tally] of Object.entries(neighbours)) {
      assert.deepEqual(tally.failures, [], `${where}`);
      assert.ok(tally.total > 20, `${where}: ${tally.total} requests`);
    }
    assert.deepEqual(bigTally.failures, []);

    const summary = {
      places: PLACES,
      moveSeconds: Math.round(moveSeconds),
      pauseMs: report.pauseMs,
      copied: report.copied,
      caughtUp: report.caughtUp,
      d1Calls: calls,
      workerdCpuSeconds: Math.round(moveCpu),
      workerdCpuSecondsOfTheLoad: Math.round(loadCpuPerSecond * moveSeconds),
      acknowledgedWrites: bigTally.total,
      retriedInPause,
      followerEntries: fate.size,
      feedDeletions: [...fate.values()].filter((op) => op === "delete").length,
      neighbours: Object.fromEntries(Object.entries(neighbours).map(([where, tally]) => [where, tally.total])),
      testSeconds: Math.round((Date.now() - started) / 1000),
    };
    console.log(JSON.stringify(summary));
  } catch (error) {
    throw new Error(`${String(error)}\nnpm start said:\n${service.output().slice(-5000)}`, { cause: error });
  } finally {
    await service.stop();
  }

  // Afterwards, with the service stopped, the accounts command shows where everything is.
  const listed = node("scripts/accounts.ts", "list", ...persist);
  assert.match(listed, new RegExp(`^${bigId}\\tbig\\tSHARD_2$`, "m"));
  assert.equal(Number(sql("SHARD_1", `SELECT count(*) AS n FROM pinpoints WHERE account_id = ${bigId}`)[0]!.n), 0);
});
