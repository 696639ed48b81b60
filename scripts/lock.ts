/**
 * Keeps package-lock.json complete for every platform, so `npm ci` works from
 * it on Linux, macOS and Windows alike.
 *
 * npm drops an optional dependency from the lock file when it cannot resolve
 * it, silently. The registry this project is developed against lists
 * workerd's macOS and Windows packages only up to 1.20261023.1, so for newer
 * workerd releases npm leaves `@cloudflare/workerd-darwin-64`, `-darwin-arm64`
 * and `-windows-64` out, and `npm ci` then refuses the lock file everywhere
 * ("Missing: @cloudflare/workerd-darwin-64@ from lock file").
 *
 *   node scripts/lock.ts          regenerate the lock file (npm install
 *                                 --package-lock-only), add every optional
 *                                 dependency npm left out, check npm keeps it
 *   node scripts/lock.ts --check  fail when one is missing (npm run check)
 *
 * An added entry carries what the registry says about that exact version
 * (integrity, os, cpu). When the registry does not have that version, it
 * carries the os, cpu, license and engines of the package's newest version
 * it has, and no integrity: npm then installs it on that platform without
 * checking a hash, as for any lock entry without one. The script names those.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const LOCK = "package-lock.json";

type Entry = {
  version?: string;
  integrity?: string;
  cpu?: string[];
  os?: string[];
  libc?: string[];
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  license?: string;
  engines?: Record<string, string>;
  hasInstallScript?: boolean;
  optionalDependencies?: Record<string, string>;
};
type Lock = { packages: Record<string, Entry> };

type Missing = { dependent: string; name: string; spec: string };

/**
 * Whether the package a package at `from` would load as `name` (Node's lookup) satisfies `spec`.
 * Platform packages are pinned to exact versions; any other spec counts as met by whatever is found.
 */
function resolves(packages: Lock["packages"], from: string, name: string, spec: string): boolean {
  let base = from;
  for (;;) {
    const found = packages[`${base ? `${base}/` : ""}node_modules/${name}`];
    if (found) return !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(spec) || found.version === spec;
    if (!base) return false;
    const parent = base.lastIndexOf("/node_modules/");
    base = parent < 0 ? "" : base.slice(0, parent);
  }
}

function missingOptionals(lock: Lock): Missing[] {
  const missing: Missing[] = [];
  for (const [dependent, entry] of Object.entries(lock.packages)) {
    for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
      if (!resolves(lock.packages, dependent, name, spec)) missing.push({ dependent, name, spec });
    }
  }
  // Shallow dependents first, so the hoisted slot goes to the top-level copy, as npm places it.
  return missing.sort((a, b) => a.dependent.split("/").length - b.dependent.split("/").length);
}

function problems(lock: Lock, pkg: { scripts?: Record<string, string> }): string[] {
  const found = missingOptionals(lock).map(
    ({ dependent, name, spec }) => `${dependent || "the root"} lacks its optional dependency ${name}@${spec}`,
  );
  // npm records whether the root has install scripts; a lock written otherwise is rewritten by every `npm install`.
  const hasInstallScript = ["preinstall", "install", "postinstall"].some((s) => pkg.scripts?.[s]);
  if (Boolean(lock.packages[""]?.hasInstallScript) !== hasInstallScript) {
    found.push(`the root entry's hasInstallScript should be ${hasInstallScript}`);
  }
  return found;
}

function npm(args: string[]): string {
  return execFileSync("npm", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

function view(name: string, spec: string): Record<string, unknown> | undefined {
  try {
    const out = npm(["view", `${name}@${spec}`, "--json"]).trim();
    if (!out) return undefined;
    const parsed = JSON.parse(out) as Record<string, unknown> | Record<string, unknown>[];
    return Array.isArray(parsed) ? parsed.at(-1) : parsed;
  } catch {
    return undefined;
  }
}

/** The hoisted location npm would give `name` for `dependent`: the highest free (or same-version) slot. */
function placement(packages: Lock["packages"], dependent: string, name: string, version: string): string {
  const parts = dependent.split("/node_modules/");
  const chain = [""];
  for (let i = 0; i < parts.length && dependent; i++) chain.push(parts.slice(0, i + 1).join("/node_modules/"));
  for (const base of chain) {
    const at = `${base ? `${base}/` : ""}node_modules/${name}`;
    const existing = packages[at];
    if (!existing || existing.version === version) return at;
  }
  return `${dependent}/node_modules/${name}`;
}

function complete(lock: Lock): string[] {
  const unverified: string[] = [];
  for (const { dependent, name, spec } of missingOptionals(lock)) {
    if (resolves(lock.packages, dependent, name, spec)) continue; // an earlier addition serves it
    const exact = view(name, spec);
    const meta = exact ?? view(name, "latest");
    if (!meta) throw new Error(`the registry does not know ${name} at all`);
    const version = exact ? String(meta.version) : spec;
    const parent = lock.packages[dependent] ?? {};
    const entry: Entry = { version };
    const integrity = (meta.dist as { integrity?: string } | undefined)?.integrity;
    if (exact && integrity) entry.integrity = integrity;
    else unverified.push(`${name}@${version} (os/cpu from ${String(meta.version)})`);
    for (const key of ["cpu", "os", "libc"] as const) if (Array.isArray(meta[key])) entry[key] = meta[key] as string[];
    if (parent.dev) entry.dev = true;
    if (typeof meta.license === "string") entry.license = meta.license;
    entry.optional = true;
    if (meta.engines && typeof meta.engines === "object") entry.engines = meta.engines as Record<string, string>;
    lock.packages[placement(lock.packages, dependent, name, version)] = entry;
  }
  return unverified;
}

const read = (): Lock => JSON.parse(readFileSync(LOCK, "utf8")) as Lock;
const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts?: Record<string, string> };

if (process.argv.includes("--check")) {
  const found = problems(read(), pkg);
  if (found.length > 0) {
    console.error(`${LOCK} is incomplete:\n  ${found.join("\n  ")}\nRun: npm run lock`);
    process.exit(1);
  }
  console.log(`${LOCK} lists every platform's optional packages`);
} else {
  npm(["install", "--package-lock-only", "--ignore-scripts"]);
  const lock = read();
  const unverified = complete(lock);
  writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
  // Let npm write the file in its own form; it must keep every entry added above.
  npm(["install", "--package-lock-only", "--ignore-scripts"]);
  const written = readFileSync(LOCK, "utf8");
  npm(["install", "--package-lock-only", "--ignore-scripts"]);
  const found = problems(read(), pkg);
  if (found.length > 0 || readFileSync(LOCK, "utf8") !== written) {
    console.error(`npm did not keep the completed lock file:\n  ${found.join("\n  ")}`);
    process.exit(1);
  }
  if (unverified.length > 0) {
    console.log(`not in the registry, added without integrity:\n  ${unverified.join("\n  ")}`);
  }
  console.log(`${LOCK} lists every platform's optional packages`);
}
