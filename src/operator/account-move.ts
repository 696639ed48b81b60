/**
 * Where an account's move runs (docs/operations.md, "Shards"): a Durable
 * Object per account, `AccountMove`, named by the account's id. Exactly one
 * exists per name, so it is what refuses a second move of an account while one
 * runs, wherever the requests land, and what a cancel reaches. The move itself
 * is src/db/move.ts on the Worker's own D1 bindings, the process that owns the
 * databases locally (wrangler dev) and the deployed Worker remotely.
 *
 * Its progress is a stream of NDJSON lines (one JSON object per line), ended by
 * the move's report or its failure. A progress line goes out every
 * PROGRESS_MS: the client sees the move alive, and the move sees the client
 * gone (the write fails), which stops it as a cancel does. A stop takes effect
 * at the move's next check (before each copy batch and catch-up round): before
 * the switch the account stays whole on its source; after it the move finishes.
 */
import { DurableObject } from "cloudflare:workers";
import { moveAccount, MoveError, type Batch, type MoveReport, type Row } from "../db/move";
import { shardNames } from "../db/shard-plan";
import { bindingNamed } from "../db/shards";

/** How often a running move reports that it is alive (ms). */
export const PROGRESS_MS = 1000;

/** The account as the directory has it when the move is asked for. */
export type MovedAccount = { id: number; name: string; shard: string };

/** One line of a move's stream. `ms`: since the move started; `d1Calls`: queries and batches it sent. */
export type MoveEvent =
  | { event: "started"; account: MovedAccount; to: string; at: string }
  | { event: "log"; ms: number; message: string }
  | { event: "progress"; ms: number; d1Calls: number }
  | { event: "stopping"; ms: number; reason: string }
  | { event: "done"; ms: number; d1Calls: number; report: MoveReport }
  | { event: "failed"; ms: number; d1Calls: number; interrupted: boolean; error: string };

/** What `start` answers: the move's stream, or the move already running. */
export type MoveStart =
  { started: true; lines: ReadableStream<Uint8Array> } | { started: false; to: string; since: string };

type Running = { to: string; since: string; stop: (reason: string) => void };

/**
 * A move's `Batch` on a binding: one D1 batch (one transaction), counted. It first lets the object take
 * its other events: awaiting one D1 call after another, it took none in between (seen under wrangler
 * dev: a cancel or a second start waited for the whole copy), and a timer lets them in.
 */
function batchOn(db: D1Database, counted: () => void): Batch {
  return async (statements) => {
    counted();
    await new Promise((resolve) => setTimeout(resolve, 0));
    const results = await db.batch(statements.map(({ sql, params }) => db.prepare(sql).bind(...params)));
    return results.map((result) => result.results as Row[]);
  };
}

export class AccountMove extends DurableObject<Cloudflare.Env> {
  #running: Running | null = null;

  /** Starts moving `account` to the shard `to`, unless a move of it runs already. */
  start(account: MovedAccount, to: string): MoveStart {
    if (this.#running) return { started: false, to: this.#running.to, since: this.#running.since };
    const abort = new AbortController();
    const stream = new IdentityTransformStream();
    const writer = stream.writable.getWriter();
    const encoder = new TextEncoder();
    const started = Date.now();
    const ms = () => Date.now() - started;
    let d1Calls = 0;
    const counted = () => void d1Calls++;

    const stop = (reason: string) => {
      if (abort.signal.aborted) return;
      abort.abort(new Error(reason));
      send({ event: "stopping", ms: ms(), reason });
    };
    // Lines go out in order; the move never waits for a slow reader. A write that fails means nobody reads.
    let sending = Promise.resolve();
    const send = (event: MoveEvent) => {
      sending = sending
        .then(() => writer.write(encoder.encode(`${JSON.stringify(event)}\n`)))
        .catch(() => stop("the client disconnected"));
      return sending;
    };
    this.#running = { to, since: new Date(started).toISOString(), stop };

    send({ event: "started", account, to, at: new Date(started).toISOString() });
    const progress = setInterval(() => send({ event: "progress", ms: ms(), d1Calls }), PROGRESS_MS);
    const shards = Object.fromEntries(
      shardNames(this.env.SHARDS).map((name) => [name, batchOn(bindingNamed(this.env, name), counted)]),
    );
    const run = async (): Promise<MoveEvent> => {
      try {
        const report = await moveAccount({
          account: account.id,
          to,
          directory: batchOn(this.env.DB, counted),
          shards,
          signal: abort.signal,
          log: (message) => void send({ event: "log", ms: ms(), message }),
        });
        return { event: "done", ms: ms(), d1Calls, report };
      } catch (error) {
        const interrupted = abort.signal.aborted && error instanceof MoveError;
        if (!(error instanceof MoveError)) {
          console.error(
            JSON.stringify({
              level: "error",
              message: "account move failed",
              account: account.id,
              to,
              error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : error,
            }),
          );
        }
        const message = error instanceof Error ? error.message : String(error);
        return { event: "failed", ms: ms(), d1Calls, interrupted, error: message };
      }
    };
    const finished = run().then(async (last) => {
      clearInterval(progress);
      this.#running = null;
      console.log(JSON.stringify({ level: "info", message: "account move", account: account.id, to, ...last }));
      await send(last);
      await writer.close().catch(() => undefined);
    });
    this.ctx.waitUntil(finished);
    return { started: true, lines: stream.readable };
  }

  /** Stops the running move at its next check; false when none runs. */
  cancel(): boolean {
    if (!this.#running) return false;
    this.#running.stop("cancelled by the operator");
    return true;
  }
}
