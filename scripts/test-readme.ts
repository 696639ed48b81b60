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
 * - `npm run seed` refuses the account the second time, with a non-zero exit;
 * - the examples of the documents that continue the tour (conditional
 *   writes, retries, bookmarks, publishable keys, webhooks, media) run as
 *   written after it, answer what their comments say, take every id from an
 *   answer (the guide stays as it was) and write nothing into the checkout;
 * - docs/development.md names every suite `npm test` runs.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { getAgainOnce, startDevServer, type DevServer } from "./lib/dev-server.ts";
import { shellBlock, shellBlocks, tourScript } from "./lib/doc-blocks.ts";
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
    const response: Response = await getAgainOnce(url, { headers: { Authorization: `Bearer ${token}` } });
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
  const tourBlock = tourScript();
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

/** The examples that continue the tour, each a ```sh block of a document, run after it in this order. */
const CONTINUATIONS = [
  ...shellBlocks("docs/offline-and-concurrency.md").map((block, i) => ({
    name: `offline-and-concurrency #${i + 1}`,
    block,
  })),
  ...shellBlocks("docs/publishing-maps.md").map((block, i) => ({ name: `publishing-maps #${i + 1}`, block })),
  ...shellBlocks("docs/webhooks.md").map((block, i) => ({ name: `webhooks #${i + 1}`, block })),
  { name: "api media", block: shellBlock("docs/api.md", "### Media") },
  { name: "api order", block: shellBlock("docs/api.md", "### The order of a list") },
];

test("the examples that continue the tour run as written, answer what they say, and stay out of the checkout", async () => {
  const guide = await allPinpoints();
  // A reader's photo for docs/api.md: a JPEG's first bytes are all the service checks.
  const home = join(scratch, "home");
  mkdirSync(join(home, "Pictures"), { recursive: true });
  writeFileSync(
    join(home, "Pictures", "bridge.jpg"),
    Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1, 0xff, 0xd9]),
  );
  const script = [tourScript(), ...CONTINUATIONS.map(({ name, block }) => `echo\necho "@@@ ${name}"\n${block}`)].join(
    "\n",
  );
  const status = () =>
    spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: ROOT, encoding: "utf8" }).stdout;
  const before = status();
  const run = spawnSync("bash", ["-eu", "-o", "pipefail", "-c", script], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 180_000,
    env: { ...process.env, HOME: home, BASE: server.base, ID: client.client_id, SECRET: client.client_secret },
  });
  assert.equal(run.status, 0, `the documents' commands failed:\n${run.stderr}\n${run.stdout.slice(-3000)}`);
  assert.equal(status(), before, "an example wrote into the checkout");
  const output = Object.fromEntries(
    run.stdout
      .split(/^@@@ /m)
      .slice(1)
      .map((part) => [part.slice(0, part.indexOf("\n")), part.slice(part.indexOf("\n") + 1)]),
  ) as Record<string, string>;

  assert.deepEqual(output["offline-and-concurrency #1"]!.trim().split("\n"), ["304", "200", "412"]);
  const retries = output["offline-and-concurrency #2"]!;
  assert.equal(retries.match(/^HTTP\/1\.1 201/gm)?.length, 3, retries);
  assert.equal(new Set(retries.match(/^location: .*$/gim)).size, 1, `one pinpoint, three answers:\n${retries}`);
  assert.equal(retries.match(/^idempotent-replayed: true/gim)?.length, 2, retries);
  assert.match(output["offline-and-concurrency #3"]!, /"results":\[/);
  assert.match(output["offline-and-concurrency #4"]!, /"name":"Moved"/);
  const published = output["publishing-maps #1"]!;
  assert.match(published, /"key":"pk_[\w-]+"/);
  assert.match(published, /"name":"Musée d'Orsay"/, "the key reads the tour's list");
  assert.match(output["webhooks #1"]!, /"url":"https:\/\/hooks\.example\.invalid\/poi"/);
  assert.match(output["webhooks #1"]!, /"secret":"whsec_/);
  const media = output["api media"]!;
  assert.match(media, /"media_url":"http:\/\/127\.0\.0\.1:\d+\/media\/m\/[0-9a-f]{32}\.jpg"/);
  assert.match(media, /^HTTP\/1\.1 200 OK/m);
  assert.match(media, /^content-type: image\/jpeg/im);
  const [added, moved, ordered, page] = output["api order"]!.trim().split("\n");
  assert.deepEqual([added, moved, ordered], ['{"total":3,"errors":[]}', "200", "200"]);
  const walk = JSON.parse(page!) as { results: { name: string }[]; next: string | null; previous: string | null };
  assert.deepEqual(
    walk.results.map((r) => r.name),
    ["Café", "Start"],
  );
  assert.match(walk.next!, /[?&]order=position(&|$)/);

  // Every id came from an answer: the guide's places are as they were.
  const after = new Map((await allPinpoints()).map((p) => [(p as { id: number }).id, p]));
  for (const place of guide) assert.deepEqual(after.get((place as { id: number }).id), place);
});

test("docs/development.md names every suite npm test runs", () => {
  const testAll = readFileSync(join(ROOT, "scripts/test-all.ts"), "utf8");
  const alone = /const ONE_AT_A_TIME = \[([^\]]*)\]/.exec(testAll)?.[1];
  assert.ok(alone, "scripts/test-all.ts lists the suites that run alone in ONE_AT_A_TIME");
  const suites = `${alone} ${[...testAll.matchAll(/\{ suite: ("[\w:]+")/g)].map(([, name]) => name).join(" ")}`;
  const row = readFileSync(join(ROOT, "docs/development.md"), "utf8")
    .split("\n")
    .find((line) => line.startsWith("| `npm test` "));
  assert.ok(row, "docs/development.md has a row for npm test");
  for (const [, suite] of suites.matchAll(/"([\w:]+)"/g))
    assert.ok(row.includes(`npm run ${suite}\``), `${suite} is not named`);
  // The time it takes, as the README states it.
  const readme = /`npm test` takes (\d+ to \d+ minutes)/.exec(readFileSync(join(ROOT, "README.md"), "utf8"))?.[1];
  assert.ok(readme, "the README says how long npm test takes");
  assert.ok(row.includes(`takes ${readme}`), `docs/development.md's npm test row says it takes ${readme}`);
});
