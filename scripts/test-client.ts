/**
 * The typed client against the running service (`npm run test:client`, part
 * of `npm test`): builds client/ (its package and its tests, which import the
 * package by name), starts `wrangler dev` on a fresh database with a
 * registered client and short-lived tokens (so the suites see them renewed),
 * then
 * - runs the client's node:test suites on the system's Node, the first `node`
 *   on PATH outside node_modules (the npm scripts' own is Node 22; the client
 *   promises Node 20+), or CLIENT_TEST_NODE;
 * - compiles the examples of docs/typescript-client.md and client/README.md
 *   under `strict` against the package as published, and runs them on that
 *   Node against the service (their settings from POI_BASE_URL, POI_CLIENT_ID,
 *   POI_CLIENT_SECRET, as a reader's would be);
 * - loads the package as published (dist/, openapi-fetch through an import
 *   map) into a page of another origin in Chromium, which reads a list with
 *   a publishable key limited to that origin.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { after, before, test } from "node:test";
import { launchChromium, outsideRequests } from "./lib/chromium.ts";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";
import { createPerson } from "./lib/people.ts";
import { createClient, type CreatedClient } from "./lib/registry.ts";
import { d1Execute, ROOT, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const TOKEN_TTL_SECONDS = 6;
const require = createRequire(import.meta.url);
const scratch = mkdtempSync(join(tmpdir(), "poi-client-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let server: DevServer | undefined;
let client: CreatedClient;
/** An editor of the client's account, for the client's person sessions. */
const person = { email: "editor@client-test.example", password: "a phrase the client test signs in with" };

function systemNode(): string {
  if (process.env.CLIENT_TEST_NODE) return process.env.CLIENT_TEST_NODE;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "" || dir.split(/[\\/]/).includes("node_modules")) continue;
    try {
      accessSync(join(dir, "node"), constants.X_OK);
      return join(dir, "node");
    } catch {
      // Not here.
    }
  }
  return process.execPath;
}

before(async () => {
  const tsc = require.resolve("typescript/bin/tsc");
  for (const project of ["client", "client/test"]) {
    const build = spawnSync(process.execPath, [tsc, "-p", project], { cwd: ROOT, encoding: "utf8" });
    assert.equal(build.status, 0, `tsc -p ${project}:\n${build.stdout}${build.stderr}`);
  }
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  assert.equal(status, 0, "wrangler d1 migrations apply failed");
  client = await createClient(d1Execute(target), { account: "client test", name: "typed", scope: "read write" });
  await createPerson(d1Execute(target), { account: "client test", role: "editor", ...person });
  server = await startDevServer([
    ...targetFlags(target),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
    "--var",
    `TOKEN_TTL_SECONDS:${TOKEN_TTL_SECONDS}`,
  ]);
});

after(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const node = systemNode();
const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();

test(`the client's suites pass on ${node} ${version}`, () => {
  assert.ok(Number(/^v(\d+)/.exec(version)?.[1]) >= 20, "the client is tested on Node 20 or later");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    POI_BASE: server!.base,
    POI_CLIENT_ID: client.client_id,
    POI_CLIENT_SECRET: client.client_secret,
    POI_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS),
    POI_PERSON_EMAIL: person.email,
    POI_PERSON_PASSWORD: person.password,
  };
  // Set by this runner for its own test files: with it, the inner runner would skip its files.
  delete env.NODE_TEST_CONTEXT;
  const result = spawnSync(node, ["--test", "--test-reporter=spec", "client/dist-test/"], {
    cwd: ROOT,
    env,
    encoding: "utf8",
  });
  const report = result.stdout + result.stderr;
  process.stdout.write(report);
  assert.equal(result.status, 0, "a suite of client/test failed (its report is above)");
  assert.match(report, /^ℹ pass [1-9]\d*$/m);
  assert.match(report, /^ℹ fail 0$/m);
});

/** The documents whose first TypeScript example is compiled and run, and the file each becomes. */
const EXAMPLES = [
  { document: "docs/typescript-client.md", file: "typescript-client.ts" },
  { document: "client/README.md", file: "client-readme.ts" },
];

/** The first ```ts block of a document. */
function tsExample(document: string): string {
  const text = readFileSync(join(ROOT, document), "utf8");
  const open = text.indexOf("```ts\n");
  assert.notEqual(open, -1, `${document} has no TypeScript example`);
  return text.slice(open + "```ts\n".length, text.indexOf("\n```", open));
}

test("the documents' examples compile under strict without a cast, and run against the service", () => {
  // Inside client/, so they import the package by its name as a reader's code does; dist-test/ is not committed.
  const dir = join(ROOT, "client", "dist-test", "examples");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const config = {
    extends: "../../tsconfig.json",
    compilerOptions: { declaration: false, types: ["node"], rootDir: ".", outDir: "out" },
    include: ["*.ts"],
  };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config));
  for (const { document, file } of EXAMPLES) {
    const example = tsExample(document);
    // Neither `x as T` nor `x!`, outside comments and strings.
    const code = example.replace(/\/\/.*$/gm, "").replace(/"(?:[^"\\\n]|\\.)*"|`[^`]*`/g, '""');
    assert.doesNotMatch(code, /\bas\s+[\w{[(]|[\w)\]]!(?!=)/, `${document}: the example casts`);
    // A module of its own (the examples use top-level await), whatever it imports.
    writeFileSync(join(dir, file), `${example}\nexport {};\n`);
  }
  const tsc = require.resolve("typescript/bin/tsc");
  const build = spawnSync(process.execPath, [tsc, "-p", dir], { cwd: ROOT, encoding: "utf8" });
  assert.equal(build.status, 0, `the examples do not compile:\n${build.stdout}${build.stderr}`);

  // client/README.md imports ~/poi-data/places.geojson.
  const home = join(scratch, "home");
  mkdirSync(join(home, "poi-data"), { recursive: true });
  const features = [0, 1, 2].map((i) => ({
    type: "Feature",
    geometry: { type: "Point", coordinates: [2.34 + i / 100, 48.86] },
    properties: { name: `From the file ${i}` },
  }));
  writeFileSync(join(home, "poi-data", "places.geojson"), JSON.stringify({ type: "FeatureCollection", features }));
  const env = {
    ...process.env,
    HOME: home,
    POI_BASE_URL: server!.base,
    POI_CLIENT_ID: client.client_id,
    POI_CLIENT_SECRET: client.client_secret,
  };
  const outputs = EXAMPLES.map(({ document, file }) => {
    const run = spawnSync(node, [join(dir, "out", file.replace(/\.ts$/, ".js"))], {
      env,
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(run.status, 0, `${document}'s example failed:\n${run.stdout}${run.stderr}`);
    return run.stdout;
  });
  assert.match(outputs[0]!, /^\d+ Musée d'Orsay$/m, "the tour's place is found in the viewport");
  assert.match(outputs[0]!, /^200$/m, "the conditional write succeeds");
  assert.match(outputs[0]!, /^\[ \d+ \]$/m, "the import answers its one id");
  assert.match(outputs[0]!, /^25 imported$/m);
  assert.match(outputs[1]!, /^\d+ Musée d'Orsay$/m, "the list's place is listed");
  assert.match(outputs[1]!, /^3 imported$/m, "the file's three places are imported");
});

/** A page of its own origin serving the published files: an HTML page, client/dist/ and openapi-fetch. */
async function pageServer(): Promise<{ origin: string; server: Server }> {
  const files: Record<string, string> = {
    "/": `<!doctype html><script type="importmap">{"imports":{"openapi-fetch":"/openapi-fetch.js"}}</script>`,
    "/openapi-fetch.js": readFileSync(join(ROOT, "node_modules/openapi-fetch/dist/index.mjs"), "utf8"),
  };
  const page = createServer((request, response) => {
    const path = request.url ?? "/";
    const dist = /^\/client\/([\w-]+\.js)$/.exec(path);
    const body = dist ? readFileSync(join(ROOT, "client/dist", dist[1]!), "utf8") : files[path];
    response.writeHead(body === undefined ? 404 : 200, {
      "Content-Type": path.endsWith(".js") ? "text/javascript" : "text/html",
    });
    response.end(body ?? "");
  });
  await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
  const { port } = page.address() as { port: number };
  return { origin: `http://127.0.0.1:${port}`, server: page };
}

test("in Chromium, a page of another origin reads a list with a publishable key limited to it", async () => {
  const base = server!.base;
  const form = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: client.client_id,
    client_secret: client.client_secret,
  });
  const { access_token } = (await (
    await fetch(`${base}/v3.0/oauth2/token`, { method: "POST", body: form })
  ).json()) as {
    access_token: string;
  };
  const send = async (path: string, body: unknown, type = "application/json") => {
    const headers = { Authorization: `Bearer ${access_token}`, "Content-Type": type };
    const response = await fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
    assert.ok(response.ok, `${path}: ${response.status} ${await response.clone().text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const list = (await send("/v3.0/lists", { name: "Browser" })).id as number;
  const names = ["Pont Neuf", "Sainte-Chapelle", "Conciergerie"];
  const features = names.map((name, i) => ({
    type: "Feature",
    geometry: { type: "Point", coordinates: [2.34 + i / 1000, 48.856] },
    properties: { name },
  }));
  const { ids } = (await send("/v3.0/pinpoints", { type: "FeatureCollection", features }, "application/geo+json")) as {
    ids: number[];
  };
  await send(
    `/v3.0/lists/${list}/pinpoints`,
    ids.map((id) => ({ id })),
  );
  const page = await pageServer();
  const key = (await send("/v3.0/keys", { name: "Browser test", lists: [list], origins: [page.origin] })).key;

  const elsewhere = (await send("/v3.0/keys", { name: "Elsewhere", lists: [list], origins: ["https://maps.example"] }))
    .key;

  const context = await launchChromium(join(scratch, "chromium-profile"));
  const outside = outsideRequests(context);
  try {
    const tab = context.pages()[0] ?? (await context.newPage());
    await tab.goto(`${page.origin}/`);
    const read = await tab.evaluate(
      async ({ base, key, elsewhere, list }) => {
        const { createPoiClient } = await import("/client/index.js" as string);
        const poi = createPoiClient({ baseUrl: base, publishableKey: key });
        const names: string[] = [];
        for await (const place of poi.paginate("/v3.0/pinpoints", { params: { query: { list, limit: 2 } } })) {
          names.push(place.name);
        }
        const write = await poi.POST("/v3.0/lists", { body: { name: "Not with a key" } });
        const foreign = createPoiClient({ baseUrl: base, publishableKey: elsewhere });
        const refused = await foreign.GET("/v3.0/pinpoints", { params: { query: { list } } });
        return { names, write: write.response.status, otherOrigin: refused.response.status };
      },
      { base, key, elsewhere, list },
    );
    assert.deepEqual(read, { names, write: 403, otherOrigin: 403 });
    assert.deepEqual(outside, []);
  } finally {
    await context.close();
    page.server.close();
  }
});
