/**
 * Where a benchmark run writes its figures. bench/results/ holds the committed
 * figures docs/benchmarks.md discusses, so a run writes to bench/out/ (not
 * committed) unless BENCH_SAVE=1 asks to replace them.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** The directory for this run's result files, created if need be. */
export function resultsDir(): string {
  const dir = process.env.BENCH_SAVE === "1" ? "bench/results" : "bench/out";
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** `name` inside this run's results directory. */
export const resultPath = (name: string): string => join(resultsDir(), name);
