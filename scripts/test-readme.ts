/**
 * The documents' requests, run as written (`npm run test:readme`, part of
 * `npm test`): the README's quick tour and the examples of
 * docs/map-queries.md, which continue it, go to bash against `wrangler dev`,
 * on an account that already holds the sample guide (`npm run seed`), as a
 * newcomer who accepted `npm start`'s offer has.
 * - the tour leaves every place of the guide as it was (it uses the ids it is
 *   given, never fixed ones);
 * - each map query whose result a document shows answers it: the same names
 *   in the same order, the same distance, the same `next`;
 * - `npm run seed` refuses the account the second time, with a non-zero exit.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";
import { tokenOf } from "./lib/transfer.ts";
import { createClient } from "./lib/registry.ts";
import { d1Execute, ROOT, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const ACCOUNT = "readme test";
const scratch = mkdtempSync(join(tmpdir(), "poi-readme-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let server: DevServer;
let client: { client_id: string; client_secret: string };
let token = "";

type Page = { results: { id: number; name: string; distance?: number }[]; next: string | null };

/** The first ```sh block after the heading line `heading` of the document `file`. */
function shellBlock(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), "utf8");
  const from = text.indexOf(`\n${heading}\n`);
  assert.notEqual(from, -1, `${file} has no heading "${heading}"`);
  const open = text.indexOf("```sh\n", from);
  return text.slice(open + "```sh\n".length, text.indexOf("\n```", open));
}

/** Each `curl` line with the comment lines after it: what the document shows it answers (maybe nothing). */
const SHOWN = /^curl .*\n((?:# .*\n)*)/gm;

/**
 * The block with each of the given `curl` lines between marker lines, so its output can be told apart from
 * the rest of what the block prints (which need not end its last line).
 */
const marked = (block: string, isQuery: (line: string, next: string) => boolean): string =>
  block
    .split("\n")
    .map((line, i, lines) => (isQuery(line, lines[i + 1] ?? "") ? `echo\necho @@@\n${line}\necho\necho @@@END` : line))
    .join("\n");

function seed(): ReturnType<typeof spawnSync> {
  return spawnSync(process.execPath, ["scripts/seed.ts", "--persist-to", target.persistTo!, "--account", ACCOUNT], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 300_000,
  });
}

async function allPinpoints(): Promise<unknown[]> {
  const rows: unknown[] = [];
  let url: string | null = `${server.base}/v3.0/pinpoints?limit=1000`;
  while (url) {
    const response: Response = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    const page = (await response.json()) as Page;
    rows.push(...page.results);
    url = page.next;
  }
  return rows;
}

before(async () => {
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  assert.equal(status, 0, "wrangler d1 migrations apply failed");
  client = await createClient(d1Execute(target), { account: ACCOUNT, name: "readme", scope: "read write" });
  const seeded = seed();
  assert.equal(seeded.status, 0, `npm run seed failed:\n${seeded.stderr}`);
  server = await startDevServer([
    ...targetFlags(target),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
  ]);
  token = await tokenOf({ base: server.base, clientId: client.client_id, clientSecret: client.client_secret });
});

after(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("npm run seed refuses an account with content, and exits non-zero", () => {
  const again = seed();
  assert.equal(again.status, 1, `${again.stdout}${again.stderr}`);
  assert.match(String(again.stderr), /already has content/);
});

test("the quick tour and the map queries answer what the documents show, beside the sample guide", async () => {
  const guide = await allPinpoints();
  const tourBlock = shellBlock("README.md", "## Quick tour with curl")
    .split("\n")
    // The placeholders a reader fills in by hand.
    .filter((line) => !/^(BASE|ID|SECRET)=/.test(line))
    .join("\n");
  const mapBlock = shellBlock("docs/map-queries.md", "## Examples");
  // In the tour, the map queries that show a result; in the examples, every request (one shown empty must
  // still find something).
  const isTourQuery = (line: string, next: string): boolean =>
    line.startsWith("curl ") && next.startsWith('# {"results"');
  const tour = marked(tourBlock, isTourQuery);
  const queries = marked(mapBlock, (line) => line.startsWith("curl "));
  const run = spawnSync("bash", ["-eu", "-o", "pipefail", "-c", `${tour}\n${queries}`], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, BASE: server.base, ID: client.client_id, SECRET: client.client_secret },
  });
  assert.equal(run.status, 0, `the documents' commands failed:\n${run.stderr}\n${run.stdout}`);

  // The tour created its own places and left the guide's alone.
  const after = await allPinpoints();
  const afterById = new Map(after.map((p) => [(p as { id: number }).id, p]));
  for (const place of guide) {
    assert.deepEqual(afterById.get((place as { id: number }).id), place, "the tour changed a place of the guide");
  }

  const outputs = [...run.stdout.matchAll(/^@@@\n([\s\S]*?)\n@@@END$/gm)].map((m) => m[1]!);
  const tourShown = [...`${tourBlock}\n`.matchAll(SHOWN)].filter((m) => m[1]!.startsWith('# {"results"'));
  const shown = [...tourShown, ...`${mapBlock}\n`.matchAll(SHOWN)].map((m) =>
    m[1]!
      .split("\n")
      .map((line) => line.replace(/^# ?/, "").trim())
      .join(""),
  );
  assert.ok(tourShown.length > 0, "the tour shows no map query's result");
  assert.equal(outputs.length, shown.length);
  let checked = 0;
  outputs.forEach((output, i) => {
    const expected = shown[i]!;
    const page = JSON.parse(output) as Page;
    assert.ok(Array.isArray(page.results), output);
    if (!expected.startsWith("{")) {
      // No result shown: the example must still find something, or a reader sees only [].
      assert.ok(page.results.length > 0, `example ${i + 1} returns nothing`);
      return;
    }
    checked++;
    const names = [...expected.matchAll(/"name":"([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(
      page.results.slice(0, names.length).map((r) => r.name),
      names,
      `example ${i + 1}: ${output}`,
    );
    if (expected.includes('"results":[]')) assert.equal(page.results.length, 0, output);
    if (expected.includes('"next":null')) assert.equal(page.next, null, output);
    const distance = /"distance":([\d.]+)/.exec(expected)?.[1];
    // Shown rounded: compare to as many decimals as the document gives.
    const decimals = distance?.split(".")[1]?.length ?? 0;
    if (distance !== undefined) assert.equal(page.results[0]!.distance!.toFixed(decimals), distance, output);
  });
  assert.ok(checked >= 5, `only ${checked} examples show a result`);
});

test("every GDAL command of docs/geojson-and-gis.md and docs/ogc.md asks for pages of 1,000 features", () => {
  for (const file of ["docs/geojson-and-gis.md", "docs/ogc.md"]) {
    const commands = readFileSync(join(ROOT, file), "utf8")
      .split("\n")
      .filter((line) => /^(ogrinfo|ogr2ogr) .*OAPIF:/.test(line));
    assert.ok(commands.length > 0, `${file} shows no GDAL command`);
    for (const command of commands) assert.match(command, / -oo PAGE_SIZE=1000 /, `${file}: ${command}`);
  }
});
