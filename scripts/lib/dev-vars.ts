/**
 * .dev.vars, the local secrets `wrangler dev` reads (gitignored, never
 * deployed): `npm start` fills in what is missing (scripts/dev.ts), and the
 * operator commands read the operator secret from it (scripts/lib/operator.ts).
 */
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./wrangler.ts";

export const DEV_VARS = join(ROOT, ".dev.vars");

const assignment = (name: string) => new RegExp(`^\\s*${name}\\s*=\\s*["']?([^"'\\r\\n]*)`, "m");

/** The value .dev.vars gives `name`; undefined when the file or the line is missing. */
export function readDevVar(name: string): string | undefined {
  if (!existsSync(DEV_VARS)) return undefined;
  return readFileSync(DEV_VARS, "utf8").match(assignment(name))?.[1]?.trim();
}

/**
 * Makes sure .dev.vars gives `name` a secret of at least `minLength` characters: a random one (64 hex
 * characters) when the file or the line is missing, or the value is empty (a copy of .dev.vars.example
 * not filled in); throws when a value is there but too short. Returns what it did, for the caller to
 * say, or null when the secret was there.
 */
export function ensureDevSecret(name: string, minLength: number): string | null {
  const line = `${name}=${randomBytes(32).toString("hex")}\n`;
  if (!existsSync(DEV_VARS)) {
    writeFileSync(DEV_VARS, `# Local secrets for wrangler dev (not committed).\n${line}`, { mode: 0o600 });
    return `Created .dev.vars with a random ${name}.`;
  }
  const text = readFileSync(DEV_VARS, "utf8");
  const current = text.match(assignment(name))?.[1];
  if (current === undefined) {
    appendFileSync(DEV_VARS, `${text.endsWith("\n") || text === "" ? "" : "\n"}${line}`);
    return `Added a random ${name} to .dev.vars.`;
  }
  if (current.trim() === "") {
    writeFileSync(DEV_VARS, text.replace(new RegExp(`^[ \\t]*${name}[ \\t]*=.*$`, "m"), line.trimEnd()));
    return `Set a random ${name} in .dev.vars.`;
  }
  if (current.trim().length < minLength) {
    throw new Error(`${name} in .dev.vars must be at least ${minLength} characters; fix or delete it.`);
  }
  return null;
}
