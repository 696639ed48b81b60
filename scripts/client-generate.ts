/**
 * The typed client's types, client/src/schema.ts, generated from the
 * service's own OpenAPI document (`npm run client:generate`); with `--check`
 * (part of `npm run check`) it fails when the committed file differs from
 * what the current document generates. The document is built by the app from
 * its routes (src/openapi/), which only workerd runs, so this starts
 * `wrangler dev` on a scratch database for the one request; openapi-typescript
 * turns it into types and Prettier formats them as the repository is.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import openapiTS, { astToString, COMMENT_HEADER, type OpenAPI3 } from "openapi-typescript";
import { format, resolveConfig } from "prettier";
import { startDevServer } from "./lib/dev-server.ts";
import { ROOT } from "./lib/wrangler.ts";

const SCHEMA = join(ROOT, "client", "src", "schema.ts");
const check = process.argv.includes("--check");

async function fetchDocument(): Promise<OpenAPI3> {
  const scratch = mkdtempSync(join(tmpdir(), "poi-client-generate-"));
  const server = await startDevServer([
    "--local",
    "--persist-to",
    join(scratch, "state"),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
  ]);
  try {
    const response = await fetch(`${server.base}/v3.0/openapi.json`);
    if (!response.ok) throw new Error(`GET /v3.0/openapi.json answered ${response.status}:\n${server.output()}`);
    return (await response.json()) as OpenAPI3;
  } finally {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

const started = performance.now();
const document = await fetchDocument();
const source = COMMENT_HEADER + astToString(await openapiTS(document));
const generated = await format(source, { ...(await resolveConfig(SCHEMA)), filepath: SCHEMA });
const seconds = ((performance.now() - started) / 1000).toFixed(1);
if (check) {
  if (readFileSync(SCHEMA, "utf8") !== generated) {
    console.error(
      "client/src/schema.ts differs from what the OpenAPI document generates. Run: npm run client:generate",
    );
    process.exit(1);
  }
  console.log(`client/src/schema.ts matches the OpenAPI document (${seconds} s)`);
} else {
  writeFileSync(SCHEMA, generated);
  console.log(`wrote client/src/schema.ts from the OpenAPI document in ${seconds} s`);
}
