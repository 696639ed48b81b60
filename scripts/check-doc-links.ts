/**
 * Fails when a link between the project's documents leads nowhere: every
 * relative link of README.md, docs/*.md and client/README.md must name a
 * file that exists and, after `#`, a heading of that file (its anchor as
 * GitHub makes it). The README's reference parts live in docs/, so a section
 * that moves or is renamed breaks the links to it; `npm run check` runs this.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

const DOCUMENTS = [
  "README.md",
  "client/README.md",
  ...readdirSync("docs")
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

const FENCE = /^( *)```[^\n]*\n[\s\S]*?\n\1```/gm;

/** The text outside fenced code blocks and inline code, where links are links. */
const prose = (text: string): string => text.replace(FENCE, "").replace(/`[^`\n]*`/g, "``");

/** GitHub's anchor of a heading: its text in lower case, punctuation dropped, spaces as `-`. */
const slugOf = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/ /g, "-");

/** The anchors of a file's headings; a repeated heading's get `-1`, `-2`, … as on GitHub. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of readFileSync(file, "utf8")
    .replace(FENCE, "")
    .matchAll(/^#{1,6} +(.+)$/gm)) {
    const slug = slugOf(heading!);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

const broken: string[] = [];
for (const file of DOCUMENTS) {
  const text = prose(readFileSync(file, "utf8"));
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
    if (/^[a-z][a-z+.-]*:/i.test(target!)) continue;
    const [path, anchor] = target!.split("#") as [string, string | undefined];
    const resolved = path === "" ? file : normalize(join(dirname(file), decodeURIComponent(path)));
    if (!existsSync(resolved)) {
      broken.push(`${file}: ${target} (no ${resolved})`);
      continue;
    }
    if (anchor === undefined || statSync(resolved).isDirectory() || !resolved.endsWith(".md")) continue;
    if (!anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${target} (no heading "#${anchor}" in ${resolved})`);
  }
}
if (broken.length > 0) {
  console.error(`Links between the documents lead nowhere:\n${broken.join("\n")}`);
  process.exit(1);
}
console.log(`every link of ${DOCUMENTS.length} documents leads to a file and heading that exist`);
