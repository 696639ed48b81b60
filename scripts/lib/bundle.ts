/**
 * The Worker as a deploy uploads it, built into a directory (`wrangler deploy
 * --dry-run --outdir`), and its modules as Miniflare takes them: what the
 * benchmarks run (bench/runtime.ts) and what `npm run preview` serves
 * (scripts/lib/preview.ts).
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { WRANGLER } from "./wrangler.ts";

export type Bundle = { path: string; dir: string; bytes: number; gzipBytes: number; wranglerReport: string | null };

/** Environment for wrangler: never phone home while building. */
const wranglerEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: "false",
  // The banner checks the npm registry for a newer wrangler.
  WRANGLER_HIDE_BANNER: "true",
  CI: "true",
  NO_COLOR: "1",
};

/**
 * `wrangler deploy --dry-run --outdir`: the bytes a deploy would upload, and their gzip size.
 * Minified as wrangler.toml says unless `minify` overrides it: the profiler asks for `false`, as
 * it maps frames to source files by the bundle's `// path` comments and names functions by their own names.
 * `cwd` bundles another checkout (bench/nearest-ab.ts).
 */
export function buildBundle(
  outDir: string,
  { configPath = "wrangler.toml", minify, cwd }: { configPath?: string; minify?: boolean; cwd?: string } = {},
): Bundle {
  const override = minify === undefined ? [] : [minify ? "--minify" : "--no-minify"];
  const args = ["deploy", "--dry-run", "--outdir", outDir, "--config", configPath, ...override];
  const built = spawnSync(process.execPath, [WRANGLER, ...args], {
    encoding: "utf8",
    env: wranglerEnv,
    stdio: ["ignore", "pipe", "pipe"],
    cwd,
  });
  if (built.error) throw built.error;
  if (built.status !== 0) throw new Error(`wrangler deploy --dry-run failed:\n${built.stdout}${built.stderr}`);
  const path = join(outDir, "index.js");
  const code = readFileSync(path);
  // Every module wrangler wrote counts, not only the entry (e.g. bundled images).
  const modules = readdirSync(outDir).filter((f) => !f.endsWith(".map") && f !== "README.md");
  let bytes = 0;
  let gzipBytes = 0;
  for (const file of modules) {
    const content = file === "index.js" ? code : readFileSync(join(outDir, file));
    bytes += content.byteLength;
    gzipBytes += gzipSync(content).byteLength;
  }
  return {
    path,
    dir: outDir,
    bytes,
    gzipBytes,
    wranglerReport: built.stdout.match(/Total Upload: .*/)?.[0] ?? null,
  };
}

/** The modules wrangler wrote, the entry first, typed by extension as wrangler's default rules do. */
export function bundleModules(bundle: Bundle): { type: string; path: string }[] {
  const type = (file: string) =>
    /\.m?js$/.test(file)
      ? "ESModule"
      : /\.(txt|html|sql)$/.test(file)
        ? "Text"
        : /\.wasm$/.test(file)
          ? "CompiledWasm"
          : "Data";
  const others = readdirSync(bundle.dir).filter((f) => f !== "index.js" && !f.endsWith(".map") && f !== "README.md");
  return [bundle.path, ...others.map((f) => join(bundle.dir, f))].map((path) => ({ type: type(path), path }));
}
