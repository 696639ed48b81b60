/**
 * Fails when src/db/schema.ts and migrations/ disagree: drizzle-kit must find
 * nothing to generate. Any file it did write is removed again.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";

const before = new Set(readdirSync("migrations"));
const output = execFileSync("drizzle-kit", ["generate", "--name", "drift"], { encoding: "utf8" });
const added = readdirSync("migrations").filter((f) => !before.has(f));
if (added.length > 0 || !output.includes("No schema changes")) {
  for (const file of added) rmSync(`migrations/${file}`);
  execFileSync("git", ["checkout", "--", "migrations/meta"]);
  console.error("src/db/schema.ts has changes with no migration. Run: npm run db:generate -- --name <change>");
  process.exit(1);
}
console.log("migrations match src/db/schema.ts");
