/**
 * What a newcomer sees from the command-line tools (`npm run test:cli`, part
 * of `npm test`):
 * - `npm run import` / `export` against a service that is not there name the
 *   URL they tried and how to point them elsewhere, not just "fetch failed";
 * - `npm run backup -- --help` prints the usage, and a wrong option the usage
 *   too, with exit status 2;
 * - data files a reader keeps in the checkout (GeoJSON, CSV, an import's
 *   state) are left alone by Prettier's check;
 * - `npm start` on a fresh state shows the credentials within its first
 *   screen (the migrations are one line, not a table per migration).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { keepingLocalFiles } from "./lib/dev-server.ts";
import { ROOT } from "./lib/wrangler.ts";

const scratch = mkdtempSync(join(tmpdir(), "poi-cli-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

const node = (args: string[]) => spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", timeout: 60_000 });

/** A port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("import and export name the URL they could not reach and how to change it", async () => {
  const base = `http://127.0.0.1:${await closedPort()}`;
  const file = join(scratch, "places.geojson");
  writeFileSync(file, '{"type":"FeatureCollection","features":[]}');
  for (const args of [
    ["scripts/import.ts", file],
    ["scripts/export.ts", join(scratch, "out.geojson")],
  ]) {
    const run = node([...args, "--base", base, "--client-id", "id", "--client-secret", "secret"]);
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`Could not reach the service at ${base.replaceAll(".", "\\.")}`));
    assert.match(run.stderr, /--base URL or POI_BASE_URL/);
    // The hint pastes as it is: npm passes options on to the script only after `--`.
    assert.match(run.stderr, /\(npm start -- --port N serves http:\/\/localhost:N;/);
    assert.doesNotMatch(run.stderr, /^fetch failed$/m);
  }
});

test("data files a reader keeps in the checkout are not checked by Prettier (npm run check)", async () => {
  const { getFileInfo } = await import("prettier");
  const data = ["places.geojson", "backup.csv", "places.geojson.import-state.json", "docs/tile.geojson"];
  for (const name of data) {
    const info = await getFileInfo(join(ROOT, name), {
      ignorePath: [join(ROOT, ".gitignore"), join(ROOT, ".prettierignore")],
    });
    assert.equal(info.ignored, true, `${name} would be checked`);
  }
  // The project's own files still are.
  for (const name of ["package.json", "docs/api.md", "src/app.ts"]) {
    const info = await getFileInfo(join(ROOT, name), {
      ignorePath: [join(ROOT, ".gitignore"), join(ROOT, ".prettierignore")],
    });
    assert.equal(info.ignored, false, `${name} would not be checked`);
  }
});

test("backup --help prints the usage; a wrong option prints it too, with status 2", () => {
  const help = node(["scripts/backup.ts", "--help"]);
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /^Usage: npm run backup -- export FILE/);
  const wrong = node(["scripts/backup.ts", "--bogus"]);
  assert.equal(wrong.status, 2);
  assert.match(wrong.stderr, /Unknown option '--bogus'\.\n\nUsage:/);
});

test("npm start shows the credentials within the first screen on a fresh state", () =>
  keepingLocalFiles(async () => {
    const port = await closedPort();
    const child = spawn(
      process.execPath,
      ["scripts/dev.ts", "--port", String(port), "--persist-to", join(scratch, "state")],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let output = "";
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no credentials after 90 s:\n${output}`)), 90_000);
        const onData = (chunk: Buffer) => {
          output += chunk;
          if (/Client secret/.test(output)) (clearTimeout(timer), resolve());
        };
        child.stdout.on("data", onData);
        child.stderr.on("data", onData);
        child.on("exit", (code) => (clearTimeout(timer), reject(new Error(`npm start exited (${code}):\n${output}`))));
      });
    } finally {
      child.kill("SIGINT");
    }
    const before = output.slice(0, output.indexOf("Client secret")).split("\n");
    assert.ok(before.length < 30, `${before.length} lines before the credentials:\n${output}`);
    assert.match(output, /Applied \d+ migration\(s\) to the local database\./);
  }));

test("the package's engines admit the system Node the README says is enough (20), so npm ci does not warn about it", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const claimed = /any recent system Node with npm \((\d+) works\)/.exec(readme)?.[1];
  assert.ok(claimed, "README no longer names the system Node that works");
  const { engines } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
  const minimum = /^>=(\d+)/.exec(engines.node)?.[1];
  assert.ok(
    minimum !== undefined && Number(minimum) <= Number(claimed),
    `engines.node ${engines.node} refuses Node ${claimed}`,
  );
});
