/**
 * Copies Swagger UI's script and styles from node_modules/swagger-ui-dist to
 * public/docs/swagger-ui-dist/, the folder wrangler serves as static assets
 * ([assets] in wrangler.toml). The /docs page loads them from there, so it
 * works with no internet access, and the 1.7 MB script stays out of the
 * Worker bundle. Runs after every `npm install` (postinstall); the folder is
 * generated, not committed.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** src/openapi/routes.ts points the page at `/docs/swagger-ui-dist/…`. */
const TARGET = join(ROOT, "public", "docs", "swagger-ui-dist");
const FILES = ["swagger-ui-bundle.js", "swagger-ui.css", "LICENSE", "NOTICE"];

let source: string;
try {
  source = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));
} catch {
  process.stderr.write("docs-assets: swagger-ui-dist is not installed; run `npm install` (with dev dependencies).\n");
  process.exit(1);
}
rmSync(TARGET, { recursive: true, force: true });
mkdirSync(TARGET, { recursive: true });
for (const file of FILES) copyFileSync(join(source, file), join(TARGET, file));
const { version } = JSON.parse(readFileSync(join(source, "package.json"), "utf8")) as { version: string };
process.stdout.write(`docs-assets: Swagger UI ${version} copied to public/docs/swagger-ui-dist/\n`);
