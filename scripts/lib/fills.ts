/**
 * Data fills from Node (src/db/fills.ts; docs/operations.md, "Data fills"):
 * every database of the configuration, the directory and each shard, filled
 * to the end, over wrangler (`--remote`, or a local state directory) or over
 * the local bindings `npm start` opens. Used by `npm run fill` and, for the
 * local databases, by `npm start` and `npm run preview` before they serve.
 */
import { FILL_BATCH_MS, runFills, type FillProgress, type FillRun } from "../../src/db/fills.ts";
import type { Batch } from "../../src/db/move.ts";
import { allDatabases } from "./shards.ts";

export type FillOptions = { batchMs?: number; log?: (line: string) => void };

/** Fills every database until no fill it knows is left; what each database got. */
export async function fillDatabases(
  batchFor: (binding: string) => Batch,
  { batchMs = FILL_BATCH_MS, log = () => undefined }: FillOptions = {},
): Promise<Map<string, FillRun>> {
  const runs = new Map<string, FillRun>();
  for (const binding of allDatabases()) {
    let reported = 0;
    const progress = (step: FillProgress & { ms: number }) => {
      if (Date.now() - reported < 5000 && !step.done) return;
      reported = Date.now();
      log(`${binding}: ${step.name} at id ${step.cursor} of ${step.last}${step.done ? ", done" : ""}`);
    };
    const run = await runFills(batchFor(binding), { batchMs, log: progress });
    runs.set(binding, run);
    if (run.failed) throw new Error(`${binding}: the fill ${run.failed.name} failed: ${run.failed.error}`);
    if (run.pending.length > 0) {
      throw new Error(
        `${binding}: ${run.pending.join(", ")} cannot run with this checkout; update it (git pull) and run again.`,
      );
    }
  }
  return runs;
}

/** One line: what the fills did, or null when there was nothing to do. */
export function fillSummary(runs: Map<string, FillRun>): string | null {
  const worked = [...runs].filter(([, run]) => run.batches > 0);
  if (worked.length === 0) return null;
  return `Filled ${worked.map(([db, run]) => `${db}: ${run.finished.join(", ")} (${run.rows} rows)`).join("; ")}.`;
}
