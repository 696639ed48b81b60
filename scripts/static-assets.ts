/**
 * Fills public/, the folder wrangler serves as static assets ([assets] in
 * wrangler.toml), with the browser files of the pages the service serves:
 * - /docs: Swagger UI's script and styles, from node_modules/swagger-ui-dist;
 * - /maps/{list_id}: MapLibre GL JS (its ES module, its worker module and
 *   styles) from node_modules/maplibre-gl, and the page's own script and
 *   styles from static/maps/ (committed);
 * - /auth/passkey.html, where a person signs in (password or passkey) and
 *   keeps their passkeys: the page from static/auth/ (committed) and
 *   SimpleWebAuthn's browser script from node_modules/@simplewebauthn/browser.
 * - the headers of those files (static/_headers: framing forbidden on the
 *   passkey page), which Workers static assets read from public/_headers.
 * The pages load them from this origin, so they work with no internet access
 * under a strict Content-Security-Policy, and the megabytes of script stay out
 * of the Worker bundle. Runs after every `npm install` (postinstall) and as
 * `npm run assets`; public/ is generated, not committed.
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PUBLIC = join(ROOT, "public");

/**
 * What goes where, in order (a folder before the folders inside it, since each
 * target is emptied first). `files` are paths inside the package or folder;
 * without them the whole folder is copied. The targets are the URL paths
 * src/openapi/routes.ts and src/maps/page.ts name.
 */
type Copy = { what: string; from: { package: string } | { folder: string }; files?: string[]; to: string };
const COPIES: Copy[] = [
  {
    what: "Swagger UI",
    from: { package: "swagger-ui-dist" },
    files: ["swagger-ui-bundle.js", "swagger-ui.css", "LICENSE", "NOTICE"],
    to: "docs/swagger-ui-dist",
  },
  { what: "the map page", from: { folder: "static/maps" }, to: "maps" },
  {
    what: "MapLibre GL JS",
    from: { package: "maplibre-gl" },
    // The ES module finds its worker module beside itself (import.meta.url), on this origin: worker-src 'self'.
    files: ["dist/maplibre-gl.mjs", "dist/maplibre-gl-worker.mjs", "dist/maplibre-gl.css", "LICENSE.txt"],
    to: "maps/maplibre-gl",
  },
  { what: "the passkey page", from: { folder: "static/auth" }, to: "auth" },
  {
    what: "SimpleWebAuthn's browser script",
    from: { package: "@simplewebauthn/browser" },
    // One classic script that defines `SimpleWebAuthnBrowser`, rather than the dozen modules of its esm/.
    files: ["dist/bundle/index.umd.min.js", "LICENSE.md"],
    to: "auth/simplewebauthn-browser",
  },
];

type Manifest = { name?: string; version: string };

/**
 * The package's folder and version; exits with advice when it is not installed. Found from its entry point,
 * since a package's `exports` may not list its package.json (@simplewebauthn/browser's does not).
 */
function installed(name: string): { dir: string; version: string } {
  let dir: string | null = null;
  try {
    dir = dirname(fileURLToPath(import.meta.resolve(name)));
  } catch {
    // Not installed: said below.
  }
  for (; dir !== null && dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    const read = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, "utf8")) as Manifest) : null;
    if (read?.name === name) return { dir, version: read.version };
  }
  process.stderr.write(`static-assets: ${name} is not installed; run \`npm install\` (with dev dependencies).\n`);
  process.exit(1);
}

for (const copy of COPIES) {
  const target = join(PUBLIC, copy.to);
  const source = "package" in copy.from ? installed(copy.from.package) : { dir: join(ROOT, copy.from.folder) };
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  if (copy.files === undefined) cpSync(source.dir, target, { recursive: true });
  else for (const file of copy.files) copyFileSync(join(source.dir, file), join(target, file.split("/").pop()!));
  const version = "version" in source ? ` ${source.version}` : "";
  process.stdout.write(`static-assets: ${copy.what}${version} copied to public/${copy.to}/\n`);
}

copyFileSync(join(ROOT, "static/_headers"), join(PUBLIC, "_headers"));
process.stdout.write("static-assets: static/_headers copied to public/_headers\n");
