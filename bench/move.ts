/**
 * The move group (docs/scaling.md, "Moving an account online"): an account of
 * BENCH_MOVE_PLACES (100,000) places, seeded as the scale group seeds them,
 * moved from DB to SHARD_2 of three local shards through the operator route
 * `npm run accounts -- move` calls (POST /operator/accounts/{id}/move), on the
 * Worker bundled as deployed, while BENCH_MOVE_WRITERS writers create, rename
 * and delete places of it and as many readers read it through the API. Then
 * every acknowledged write is read back: the report counts the lost and the
 * wrong (both must be 0) and gives the write pause and the move's length.
 * scripts/test-move.ts runs the command itself against `npm start`.
 *
 *   npx node bench/move.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimShardRange } from "../src/db/id-ranges.ts";
import { buildBundle, OPERATOR_SECRET, startRuntime } from "./runtime.ts";
import { seedScale } from "./scale-data.ts";
import { batchOf, migrate, type D1 } from "./seed.ts";

const PLACES = Number(process.env.BENCH_MOVE_PLACES ?? 100_000);
const WRITERS = Number(process.env.BENCH_MOVE_WRITERS ?? 4);
const SHARDS = ["DB", "SHARD_1", "SHARD_2"];
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

type Proxy = D1 & { batch(statements: unknown[]): Promise<{ results: Record<string, unknown>[] }[]> };

const work = mkdtempSync(join(tmpdir(), "bench-move-"));
const rt = await startRuntime(join(work, "state"), { api: buildBundle(join(work, "out")), shards: SHARDS.slice(1) });

/** The move as the command asks for it: its NDJSON lines logged as they come, its report (and D1 calls) at the end. */
async function moveThroughTheRoute(accountId: number, to: string) {
  const response = await fetch(new URL(`/operator/accounts/${accountId}/move`, rt.api), {
    method: "POST",
    headers: { Authorization: `Bearer ${OPERATOR_SECRET}`, "Content-Type": "application/json" },
    body: JSON.stringify({ to }),
  });
  if (response.status !== 200) throw new Error(`the move was refused: ${response.status} ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffered = "";
  const reader = response.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    buffered += decoder.decode(read.value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = JSON.parse(buffered.slice(0, end)) as Record<string, unknown>;
      buffered = buffered.slice(end + 1);
      if (line.event === "log") log(String(line.message));
      if (line.event === "failed") throw new Error(`the move failed: ${String(line.error)}`);
      if (line.event === "done") {
        const report = line.report as { copied: number; caughtUp: number; pauseMs: number };
        return { ...report, d1Calls: Number(line.d1Calls) };
      }
    }
  }
  throw new Error("the move's lines ended without its report");
}

try {
  const dbs = Object.fromEntries(
    await Promise.all(SHARDS.map(async (name) => [name, (await rt.mf.getD1Database(name, "api")) as unknown as Proxy])),
  ) as Record<string, Proxy>;
  for (const name of SHARDS) await migrate(dbs[name]!);
  const batches = Object.fromEntries(SHARDS.map((name) => [name, batchOf(dbs[name]!)]));
  for (const name of SHARDS.slice(1)) await claimShardRange(batches.DB!, batches, name);
  log(`seeding ${PLACES} places on DB`);
  const seeded = await seedScale(dbs.DB!, PLACES, () => undefined);
  const account = (await dbs
    .DB!.prepare("SELECT id, name, created_at FROM accounts WHERE id = ?")
    .bind(seeded.account)
    .first<{ id: number; name: string; created_at: number }>())!;
  for (const name of SHARDS.slice(1)) {
    await dbs[name]!.prepare("INSERT INTO accounts (id, name, created_at, shard) VALUES (?, ?, ?, 'DB')")
      .bind(account.id, account.name, account.created_at)
      .run();
  }
  const tokenResponse = await fetch(new URL("/v3.0/oauth2/token", rt.api), {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${seeded.clientId}:${seeded.secret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  const { access_token: token } = (await tokenResponse.json()) as { access_token: string };
  const send = (method: string, path: string, body?: unknown) =>
    fetch(new URL(path, rt.api), {
      method,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  /** A write, sent again after Retry-After while the account's writes are paused. */
  let paused = 0;
  const write = async (method: string, path: string, body?: unknown): Promise<Response> => {
    for (;;) {
      const response = await send(method, path, body);
      if (response.status !== 503) return response;
      paused++;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  let stop = false;
  const names = new Map<number, string>();
  const deleted = new Set<number>();
  const failures: string[] = [];
  let reads = 0;
  const writer = async (n: number) => {
    for (let step = 1; !stop; step++) {
      const created = await write("POST", "/v3.0/pinpoints", { name: `w${n}-${step}`, latitude: 10, longitude: 20 });
      if (created.status !== 201) {
        failures.push(`create ${created.status}`);
        continue;
      }
      const { id } = (await created.json()) as { id: number };
      names.set(id, `w${n}-${step}`);
      const renamed = await write("PUT", `/v3.0/pinpoints/${id}`, { name: `w${n}-${step}-renamed` });
      if (renamed.status === 200) names.set(id, `w${n}-${step}-renamed`);
      else failures.push(`rename ${renamed.status}`);
      await renamed.body?.cancel();
      if (step % 3 === 0) {
        const gone = await write("DELETE", `/v3.0/pinpoints/${id}`);
        if (gone.status === 204) deleted.add(id);
        else failures.push(`delete ${gone.status}`);
      }
    }
  };
  const reader = async () => {
    while (!stop) {
      const response = await send("GET", "/v3.0/pinpoints?limit=50");
      if (response.status !== 200) failures.push(`read ${response.status}`);
      await response.body?.cancel();
      reads++;
    }
  };
  const load = [...Array.from({ length: WRITERS }, (_, n) => writer(n)), ...Array.from({ length: WRITERS }, reader)];

  log("moving the account to SHARD_2 under load");
  const started = performance.now();
  const report = await moveThroughTheRoute(account.id, "SHARD_2");
  const moveSeconds = (performance.now() - started) / 1000;
  stop = true;
  await Promise.all(load);

  let lost = 0;
  let wrong = 0;
  for (const [id, name] of names) {
    const response = await send("GET", `/v3.0/pinpoints/${id}`);
    if (deleted.has(id)) {
      if (response.status !== 404) wrong++;
      await response.body?.cancel();
    } else if (response.status !== 200) {
      lost++;
      await response.body?.cancel();
    } else if (((await response.json()) as { name: string }).name !== name) wrong++;
  }
  const count = async (name: string) =>
    (await dbs[name]!.prepare("SELECT count(*) AS n FROM pinpoints WHERE account_id = ?")
      .bind(account.id)
      .first<{ n: number }>())!.n;
  console.log(
    JSON.stringify({
      places: PLACES,
      writers: WRITERS,
      readers: WRITERS,
      acknowledgedWrites: names.size + deleted.size,
      reads,
      retriedInPause: paused,
      otherFailures: failures.length,
      lost,
      wrong,
      pauseMs: report.pauseMs,
      moveSeconds: Math.round(moveSeconds),
      copied: report.copied,
      caughtUp: report.caughtUp,
      d1Calls: report.d1Calls,
      onTarget: await count("SHARD_2"),
      expectedOnTarget: PLACES + names.size - deleted.size,
      leftOnSource: await count("DB"),
    }),
  );
} finally {
  await rt.dispose();
  rmSync(work, { recursive: true, force: true });
}
