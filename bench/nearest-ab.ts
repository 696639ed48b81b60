/**
 * Nearest first without a radius from places at every latitude, this checkout
 * against another one, in one runtime over one database, interleaved:
 *
 *   BENCH_AB_OTHER=/path/to/other/checkout npx node bench/nearest-ab.ts
 *
 * Both builds of the service (each bundled as `wrangler deploy` would upload
 * it) run side by side in one workerd and read the same local D1 database,
 * seeded as the scale group seeds it (bench/scale-data.ts: cities, and places
 * spread evenly between 50°S and 60°N, so a pole's nearest places are a band
 * thousands of kilometres off). For each place: the first page of 20 and the
 * page after it, each asked of this build and of the other in turn, round after
 * round; figures are mean milliseconds per request over
 * `BENCH_SCALE_SECONDS` (2) per sample, medians over `BENCH_ROUNDS` (3)
 * rounds. Both builds must answer with the same places in the same order, or
 * the run stops. The size is `BENCH_AB_SIZE` (100,000). Figures go to
 * `nearest-ab.json` in the results directory (bench/results-dir.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { machine } from "./report.ts";
import { resultPath } from "./results-dir.ts";
import { buildBundle, startRuntime } from "./runtime.ts";
import { seedScale } from "./scale-data.ts";
import { median, SCALE_SETTINGS, timeIt, token } from "./scale.ts";
import { migrate, type D1 } from "./seed.ts";

const OTHER = process.env.BENCH_AB_OTHER;
const SIZE = Number(process.env.BENCH_AB_SIZE ?? 100_000);

const PLACES: [string, number, number][] = [
  ["Paris (a city)", 48.8566, 2.3522],
  ["the Sahara (countryside)", 23, 12],
  ["mid-Pacific", -30, -130],
  ["75°N", 75, -150],
  ["85°N", 85, -40],
  ["89°N", 89, 0],
  ["90°N", 90, 0],
  ["80°S", -80, 60],
  ["89°S", -89, 0],
  ["90°S", -90, 0],
];

type Page = { results: { id: number }[]; next: string | null };
type Row = { place: string; first: [number, number]; second: [number, number] };

const log = (message: string) => console.log(`[nearest-ab] ${message}`);

async function main() {
  if (!OTHER) throw new Error("BENCH_AB_OTHER: the checkout to compare with (its node_modules installed)");
  const dir = mkdtempSync(join(tmpdir(), "poi-nearest-ab-"));
  try {
    const bundle = buildBundle(join(dir, "this"));
    const other = buildBundle(join(dir, "other"), { cwd: OTHER });
    const rt = await startRuntime(join(dir, "data"), { api: bundle, other });
    try {
      const db = (await rt.mf.getD1Database("DB", "api")) as unknown as D1;
      await migrate(db);
      const { clientId, secret } = await seedScale(db, SIZE, (rows) => log(`${rows} pinpoints`));
      const headers = { Authorization: `Bearer ${await token(rt, clientId, secret)}` };
      const builds = [rt.api, rt.other];
      const get = (base: URL, path: string) => fetch(new URL(path, base), { headers });
      const rows: Row[] = [];
      for (const [place, latitude, longitude] of PLACES) {
        const path = `/v3.0/pinpoints?latitude=${latitude}&longitude=${longitude}&limit=20`;
        // Each build's own next link: its cursor holds the distance as that build measures it.
        const firsts = await Promise.all(builds.map(async (base) => (await (await get(base, path)).json()) as Page));
        const ids = firsts.map((p) => p.results.map((r) => r.id).join(","));
        if (ids[0] !== ids[1]) throw new Error(`${place}: the builds disagree on the first page`);
        const nexts = firsts.map((p) => p.next!);
        const seconds = await Promise.all(
          builds.map(async (base, i) => (await (await get(base, nexts[i]!)).json()) as Page),
        );
        if (seconds[0]!.results.map((r) => r.id).join(",") !== seconds[1]!.results.map((r) => r.id).join(",")) {
          throw new Error(`${place}: the builds disagree on the second page`);
        }
        const samples = [[], [], [], []] as number[][];
        for (let round = 0; round < SCALE_SETTINGS.rounds; round++) {
          for (const [i, base] of builds.entries()) {
            samples[i]!.push(await timeIt(() => get(base, path)));
            samples[2 + i]!.push(await timeIt(() => get(base, nexts[i]!)));
          }
        }
        const [a, b, c, d] = samples.map(median) as [number, number, number, number];
        rows.push({ place, first: [a, b], second: [c, d] });
        log(
          `${place}: first page ${a.toFixed(2)} ms (other ${b.toFixed(2)}), second ${c.toFixed(2)} (other ${d.toFixed(2)})`,
        );
      }
      const report = {
        date: new Date().toISOString(),
        machine: machine(),
        other: OTHER,
        size: SIZE,
        settings: SCALE_SETTINGS,
        loadAverage: loadavg(),
        rows,
      };
      writeFileSync(resultPath("nearest-ab.json"), JSON.stringify(report, null, 2));
      console.log(
        [
          `| from | first page, this | other | second page, this | other |`,
          `| --- | --: | --: | --: | --: |`,
          ...rows.map((r) => `| ${r.place} | ${[...r.first, ...r.second].map((n) => n.toFixed(2)).join(" | ")} |`),
        ].join("\n"),
      );
    } finally {
      await rt.dispose();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
