/**
 * The shell examples of the README and docs/, for the suites that run them as
 * written (scripts/test-readme.ts, scripts/test-gis.ts): a block after a
 * heading, every block of a document, its commands with their continuation
 * lines joined, and the README's quick tour, whose variables the other
 * documents' examples use.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./wrangler.ts";

/** The first ```sh block after the heading line `heading` of the document `file`. */
export function shellBlock(file: string, heading: string): string {
  // A newline before the text, so a heading on the document's first line is found as any other.
  const text = `\n${readFileSync(join(ROOT, file), "utf8")}`;
  const from = text.indexOf(`\n${heading}\n`);
  assert.notEqual(from, -1, `${file} has no heading "${heading}"`);
  const open = text.indexOf("```sh\n", from);
  return text.slice(open + "```sh\n".length, text.indexOf("\n```", open));
}

/** Every ```sh block of the document `file`, in order. */
export function shellBlocks(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(/^```sh\n([\s\S]*?)\n```$/gm)].map((m) => m[1]!);
}

/** A block's commands: its lines with each `\` continuation joined to the next, comment lines left out. */
export function commands(block: string): string[] {
  return block
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"));
}

/** The README's quick tour, without the lines whose values a reader fills in by hand (BASE, ID, SECRET). */
export function tourScript(): string {
  return shellBlock("README.md", "## Quick tour with curl")
    .split("\n")
    .filter((line) => !/^(BASE|ID|SECRET)=/.test(line))
    .join("\n");
}
