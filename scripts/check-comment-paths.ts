/**
 * Fails when a comment names a file that does not exist. A comment is read
 * standing alone, so the file it cites must be there to open: a path in a
 * comment of src/, test/, scripts/, bench/, static/ or migrations/ (or in the
 * README and docs/) resolves from the commenting file's folder, from the
 * repository's root or from src/.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

const ROOTS = [
  "src",
  "test",
  "scripts",
  "bench",
  "static",
  "migrations",
  "docs",
  "README.md",
  ".dependency-cruiser.cjs",
];
const CODE = /\.(ts|js|cjs|mjs)$/;
const SKIP = new Set(["node_modules", "out", "results", "vendor"]);
/** Folders a run writes into (gitignored), named by the comments that say where output goes. */
const GENERATED = ["bench/out/"];

/** A path with at least one folder and a file extension; what precedes it is checked separately. */
const PATH = /[\w.-]+(?:\/[\w.-]+)*\/[\w-]+(?:\.[\w-]+)*\.(?:ts|js|cjs|mjs|sql|md|json|toml|html|css|png)\b/g;

function files(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => (SKIP.has(name) ? [] : files(join(path, name))));
}

/** The comment text of a file with each comment's line, or the whole text of a document. */
function comments(file: string, text: string): { line: number; text: string }[] {
  if (file.endsWith(".md")) return text.split("\n").map((t, i) => ({ line: i + 1, text: t }));
  const out: { line: number; text: string }[] = [];
  const lines = text.split("\n");
  let inBlock = false;
  lines.forEach((line, i) => {
    let rest = line;
    if (file.endsWith(".sql")) {
      const at = rest.indexOf("--");
      if (at >= 0) out.push({ line: i + 1, text: rest.slice(at + 2) });
      return;
    }
    if (inBlock) {
      const end = rest.indexOf("*/");
      out.push({ line: i + 1, text: end >= 0 ? rest.slice(0, end) : rest });
      if (end < 0) return;
      inBlock = false;
      rest = rest.slice(end + 2);
    }
    const block = rest.indexOf("/*");
    const slashes = rest.search(/(^|[^:"'`\w])\/\//);
    if (slashes >= 0 && (block < 0 || slashes < block)) {
      out.push({ line: i + 1, text: rest.slice(slashes).replace(/^[^/]*\/\//, "") });
    } else if (block >= 0) {
      const end = rest.indexOf("*/", block + 2);
      out.push({ line: i + 1, text: rest.slice(block + 2, end >= 0 ? end : undefined) });
      if (end < 0) inBlock = true;
    }
  });
  return out;
}

const missing: string[] = [];
for (const file of ROOTS.flatMap(files).filter((f) => CODE.test(f) || /\.(sql|md)$/.test(f))) {
  const text = readFileSync(file, "utf8");
  for (const comment of comments(file, text)) {
    for (const match of comment.text.matchAll(PATH)) {
      const before = comment.text.slice(0, match.index);
      // A URL's path (after a host, `$BASE` or `<origin>/`) is not a file of this repository, nor is what a run writes.
      if (/(\w:\/\/|\/\/|\w\.\w+\/?|\$|[>/])[\w./-]*$/.test(before) || /^[\w-]+\.\w+\//.test(match[0])) continue;
      if (GENERATED.some((prefix) => match[0].startsWith(prefix))) continue;
      const candidates = [join(dirname(file), match[0]), match[0], join("src", match[0])];
      if (!candidates.some((c) => existsSync(c))) missing.push(`${relative(".", file)}:${comment.line}: ${match[0]}`);
    }
  }
}
if (missing.length > 0) {
  console.error(`Comments name files that do not exist:\n${missing.join("\n")}`);
  process.exit(1);
}
console.log("every file a comment names exists");
