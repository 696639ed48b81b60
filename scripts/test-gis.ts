/**
 * A real GIS client against the running service (`npm run test:gis`, part of
 * `npm test`): GDAL's OGC API – Features driver (Debian's gdal-bin) reads
 * /ogc from `wrangler dev` with a bearer token.
 * - `ogrinfo` lists the collections;
 * - `ogr2ogr` copies a list of more than one page into a GeoPackage, with the
 *   right count, attributes and coordinates;
 * - `ogr2ogr -spat` returns exactly the features inside the box (the server
 *   filters: GDAL sends `bbox`, and the pages it reads hold only those).
 * - `ogr2ogr -where` on a queryable (`category`, `tags`) returns exactly the
 *   matching features, and the server filtered them: GDAL sends the equality
 *   as a query parameter (it finds them in /ogc/api) and reads one page where
 *   the whole collection takes three; a non-queryable `-where` still works.
 * - `ogr2ogr` reads a vector tile with the MVT driver, and `ogrinfo` opens the
 *   tiles by their TileJSON (/v3.0/tiles.json).
 * And the bulk tools against the same service: `npm run import` of a GeoJSON
 * file and of a CSV file, resumed after a killed run without duplicates, and
 * `npm run export` giving back identical features. And the registration
 * tool through wrangler: a key from `npm run clients -- keys create` reads
 * its list from the service until `keys revoke`. Last, the documents as a
 * reader follows them: the README's quick tour, then every GDAL line of the
 * documents and their import and export lines, run by bash in the checkout
 * as written: each finishes after a handful of requests, writes what it says
 * (checked against the API), and nothing lands in the checkout.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { tokenOf } from "./lib/transfer.ts";
import { getAgainOnce, startDevServer, type DevServer } from "./lib/dev-server.ts";
import { commands, shellBlock, shellBlocks, tourScript } from "./lib/doc-blocks.ts";
import { FeatureSplitter, NotAFeatureCollection } from "./lib/geojson-stream.ts";
import { createClient } from "./lib/registry.ts";
import { d1Execute, ROOT, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const OGRINFO = "/usr/bin/ogrinfo";
const OGR2OGR = "/usr/bin/ogr2ogr";
/** More than two pages of GDAL's page size below, so the driver must follow `next` links. */
const PLACES = 250;
const PAGE_SIZE = 100;

type Feature = {
  type: "Feature";
  id?: number;
  geometry: { coordinates: number[] };
  properties: Record<string, unknown>;
};

const scratch = mkdtempSync(join(tmpdir(), "poi-gis-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let server: DevServer;
let token = "";
/** The client of the GIS account, whose id and secret the quick tour is run with. */
let gisClient: { client_id: string; client_secret: string };
/** A second account for the bulk tools, so their counts start from zero. */
let cli: { client_id: string; client_secret: string };
let listId = 0;
const places: {
  id: number;
  name: string;
  longitude: number;
  latitude: number;
  tags: string[];
  category: number | null;
}[] = [];
/** Every fourth place is in the built-in category 1, the others in none. */
const categoryOf = (i: number) => (i % 4 === 0 ? 1 : null);

async function api(method: string, path: string, body?: unknown, type = "application/json"): Promise<unknown> {
  const response = await fetch(`${server.base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": type }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
  return response.json();
}

/**
 * Runs a GDAL tool with the token in a header (GDAL_HTTP_HEADERS) and returns
 * its standard output; with `debug`, GDAL's debug log (the URLs it fetched) too.
 */
function gdal(tool: string, args: string[], debug = false): string {
  const result = spawnSync(tool, ["--config", "GDAL_HTTP_HEADERS", `Authorization: Bearer ${token}`, ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, ...(debug ? { CPL_DEBUG: "ON" } : {}) },
  });
  assert.equal(
    result.status,
    0,
    `${tool} ${args.join(" ")} failed:\n${result.stderr}\n${server.output().slice(-2000)}`,
  );
  return debug ? `${result.stdout}\n${result.stderr}` : result.stdout;
}

const source = () => `OAPIF:${server.base}/ogc`;

/** Reads a GeoPackage (or any OGR source) back as GeoJSON features. */
function featuresOf(file: string, layer: string): Feature[] {
  const out = gdal(OGR2OGR, ["-f", "GeoJSON", "/vsistdout/", file, layer]);
  return (JSON.parse(out) as { features: Feature[] }).features;
}

before(async () => {
  for (const tool of [OGRINFO, OGR2OGR]) assert.ok(existsSync(tool), `${tool} is missing: apt-get install gdal-bin`);
  // A fresh database with one client, as a developer's first `npm start` has.
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  assert.equal(status, 0, "wrangler d1 migrations apply failed");
  const client = await createClient(d1Execute(target), { account: "gis test", name: "gdal", scope: "read write" });
  gisClient = client;
  cli = await createClient(d1Execute(target), { account: "cli test", name: "cli", scope: "read write" });
  server = await startDevServer([
    ...targetFlags(target),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
  ]);
  token = await tokenOf({ base: server.base, clientId: client.client_id, clientSecret: client.client_secret });
  // Latitudes and longitudes of different signs, so a swapped axis order cannot pass.
  const features = Array.from({ length: PLACES }, (_, i) => ({
    type: "Feature",
    geometry: { type: "Point", coordinates: [-170 + i * 1.25, 60 - i * 0.5] },
    properties: { name: `Place ${i}`, tags: [`t${i % 3}`], address: `${i} Rue de GDAL`, category: categoryOf(i) },
  }));
  const { ids } = (await api(
    "POST",
    "/v3.0/pinpoints",
    { type: "FeatureCollection", features },
    "application/geo+json",
  )) as {
    ids: number[];
  };
  ids.forEach((id, i) => {
    const [longitude, latitude] = features[i]!.geometry.coordinates as [number, number];
    places.push({ id, name: `Place ${i}`, longitude, latitude, tags: [`t${i % 3}`], category: categoryOf(i) });
  });
  listId = ((await api("POST", "/v3.0/lists", { name: "Guide" })) as { id: number }).id;
  await api(
    "POST",
    `/v3.0/lists/${listId}/pinpoints`,
    ids.map((id) => ({ id })),
  );
});

after(async () => {
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("ogrinfo lists the collections", () => {
  const out = gdal(OGRINFO, ["-ro", "-q", source()]);
  for (const layer of ["pinpoints", "events", `list-${listId}`]) assert.match(out, new RegExp(`: ${layer}\\b`), out);
});

test("ogr2ogr copies every feature of a list of several pages into a GeoPackage", () => {
  const gpkg = join(scratch, "guide.gpkg");
  gdal(OGR2OGR, ["-f", "GPKG", gpkg, source(), `list-${listId}`, "-oo", `PAGE_SIZE=${PAGE_SIZE}`]);
  const copied = featuresOf(gpkg, `list-${listId}`);
  assert.equal(copied.length, PLACES);
  const byName = new Map(copied.map((f) => [f.properties.name, f]));
  for (const place of places) {
    const feature = byName.get(place.name);
    assert.ok(feature, `${place.name} is missing`);
    assert.deepEqual(feature.geometry.coordinates, [place.longitude, place.latitude]);
    assert.equal(feature.properties.address, `${place.name.slice(6)} Rue de GDAL`);
    // GeoPackage has no list type: GDAL stores a string list as "(count:item,…)".
    assert.equal(feature.properties.tags, `(${place.tags.length}:${place.tags.join(",")})`);
  }
});

test("ogr2ogr -spat returns exactly the features inside the box", () => {
  const [minLon, minLat, maxLon, maxLat] = [-120, -20, 50, 40];
  const out = join(scratch, "box.geojson");
  const box = [minLon, minLat, maxLon, maxLat].map(String);
  const log = gdal(OGR2OGR, ["-f", "GeoJSON", out, source(), "pinpoints", "-spat", ...box], true);
  const inside = places.filter(
    (p) => p.longitude >= minLon && p.longitude <= maxLon && p.latitude >= minLat && p.latitude <= maxLat,
  );
  assert.ok(inside.length > 10 && inside.length < PLACES - 10, "the box holds some places, not all");
  const got = (JSON.parse(readFileSync(out, "utf8")) as { features: Feature[] }).features.map((f) => f.properties.name);
  assert.deepEqual(got.sort(), inside.map((p) => p.name).sort());
  assert.match(log, /Fetch\(\S+\/ogc\/collections\/pinpoints\/items\?\S*bbox=/, "GDAL asked the server for the box");
});

/**
 * The dev server's log up to a request made now: the tools run synchronously, so their requests'
 * lines (src/http/middleware/request-log.ts) arrive late; once this one's request id is in, every earlier line is.
 */
async function logSoFar(): Promise<string> {
  const response = await fetch(`${server.base}/ogc/conformance`, { headers: { Authorization: `Bearer ${token}` } });
  await response.body?.cancel();
  const id = response.headers.get("X-Request-Id")!;
  const deadline = Date.now() + 30_000;
  while (!server.output().includes(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const output = server.output();
  assert.ok(output.includes(id), `request ${id} is not in the dev server's log`);
  return output.slice(0, output.indexOf(id));
}

/** The items requests in a log. */
const itemsRequests = (log: string) =>
  log.split("\n").filter((line) => line.includes('"route":"/ogc/collections/:collectionId/items"')).length;

test("ogr2ogr -where on a queryable sends it to the server, which returns exactly the matching features", async () => {
  type Place = (typeof places)[number];
  const cases: [where: string, sent: string | null, matches: (p: Place) => boolean][] = [
    ["category = 1", "category=1", (p) => p.category === 1],
    // GDAL cannot test a string list itself (it finds nothing): only the server's answer is right.
    ["tags = 't1'", "tags=t1", (p) => p.tags.includes("t1")],
    // The queryable goes to the server, the rest GDAL tests on what comes back.
    ["category = 1 AND name = 'Place 8'", "category=1", (p) => p.category === 1 && p.name === "Place 8"],
    // Not a queryable: GDAL reads every page and filters them itself.
    ["name = 'Place 9'", null, (p) => p.name === "Place 9"],
  ];
  for (const [where, sent, matches] of cases) {
    const out = join(scratch, "where.geojson");
    rmSync(out, { force: true });
    const logged = itemsRequests(await logSoFar());
    const log = gdal(
      OGR2OGR,
      ["-f", "GeoJSON", out, source(), "pinpoints", "-where", where, "-oo", `PAGE_SIZE=${PAGE_SIZE}`],
      true,
    );
    const expected = places.filter(matches).map((p) => p.name);
    const got = (JSON.parse(readFileSync(out, "utf8")) as { features: Feature[] }).features.map(
      (f) => f.properties.name,
    );
    assert.deepEqual(got.sort(), expected.sort(), where);
    // GDAL reads the first page unfiltered (to learn the fields), then the filtered pages: one page for
    // the matches here, where the unfiltered collection takes PLACES / PAGE_SIZE pages.
    const fetched = [...log.matchAll(/Fetch\((\S+\/ogc\/collections\/pinpoints\/items\S*)\)/g)].map((m) => m[1]!);
    const reads = fetched.slice(1);
    const pages = sent === null ? Math.ceil(PLACES / PAGE_SIZE) : Math.max(1, Math.ceil(expected.length / PAGE_SIZE));
    assert.equal(reads.length, pages, `${where}: ${fetched.join("\n")}`);
    for (const url of reads) assert.equal(sent === null || url.includes(sent), true, `${where}: ${url}`);
    assert.equal(itemsRequests(await logSoFar()) - logged, fetched.length, "the server logged each of them");
  }
});

/** The web mercator tile at zoom z holding a place (docs/vector-tiles.md). */
function tileOf(p: { longitude: number; latitude: number }, z: number): [number, number] {
  const n = 2 ** z;
  const φ = (p.latitude * Math.PI) / 180;
  return [
    Math.min(n - 1, Math.floor(((p.longitude + 180) / 360) * n)),
    Math.floor(((1 - Math.log(Math.tan(φ) + 1 / Math.cos(φ)) / Math.PI) / 2) * n),
  ];
}

test("ogr2ogr reads a vector tile with the MVT driver: every place of the tile, counted once", () => {
  const z = 2;
  const [x, y] = tileOf(places[0]!, z);
  const inside = places.filter((p) => tileOf(p, z).join() === `${x},${y}`);
  assert.ok(inside.length > 10, "the tile holds places");
  const out = join(scratch, "tile.geojson");
  // GDAL takes z/x/y from the URL's path and georeferences the tile in EPSG:3857.
  gdal(OGR2OGR, ["-f", "GeoJSON", "-t_srs", "EPSG:4326", out, `MVT:${server.base}/v3.0/tiles/${z}/${x}/${y}.mvt`]);
  const features = (JSON.parse(readFileSync(out, "utf8")) as { features: Feature[] }).features;
  const count = features.reduce((n, f) => n + (f.properties.cluster ? Number(f.properties.point_count) : 1), 0);
  assert.equal(count, inside.length);
  for (const f of features.filter((f) => !f.properties.cluster)) {
    const place = places.find((p) => p.name === f.properties.name);
    assert.ok(place, `${String(f.properties.name)} is a place of the tile`);
    // Within a unit of the tile's 4096 (about 2.4 km at zoom 2).
    assert.ok(Math.abs(f.geometry.coordinates[0]! - place.longitude) < 0.03, JSON.stringify(f));
  }
});

test("ogrinfo opens the tiles by their TileJSON: the layer, its fields and the bounds of the places", () => {
  const tileJson = `${server.base}/v3.0/tiles.json`;
  const out = gdal(OGRINFO, [
    "-ro",
    "-so",
    "-al",
    "-oo",
    `METADATA_FILE=${tileJson}`,
    "-oo",
    "TILE_EXTENSION=mvt",
    `MVT:${server.base}/v3.0/tiles/0`,
  ]);
  assert.match(out, /Layer name: pinpoints/, out);
  for (const field of ["name: String", "tags: String", "point_count: Real", "cluster: Integer(Boolean)"]) {
    assert.ok(out.includes(field), `${field} in ${out}`);
  }
  assert.match(out, /Feature Count: \d+/, out);
  // The extent (EPSG:3857) spans the places' longitudes: -170 to 141.25 degrees.
  const extent = /Extent: \((-?[\d.]+), (-?[\d.]+)\) - \((-?[\d.]+), (-?[\d.]+)\)/.exec(out);
  assert.ok(extent, out);
  const [west, , east] = extent.slice(1).map(Number) as [number, number, number];
  const metres = (lon: number) => (lon / 180) * 20037508.34;
  assert.ok(west <= metres(-170) && east >= metres(141.25), out);
});

/** Runs `npm run import|export` (the script itself, with this Node) for the CLI account. */
function tool(name: "import" | "export", args: string[]) {
  const cliArgs = ["--base", server.base, "--client-id", cli.client_id, "--client-secret", cli.client_secret];
  return spawn(process.execPath, [join(ROOT, "scripts", `${name}.ts`), ...args, ...cliArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
}

async function finished(child: ReturnType<typeof tool>): Promise<string> {
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  assert.equal(code, 0, output);
  return output;
}

const cliFeatures = (n: number, from = 0) =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      type: "Feature",
      geometry: { type: "Point", coordinates: [-(i % 179) - 0.5, (i % 89) + 0.25] },
      properties: { name: `CLI ${i}`, tags: [`t${i % 5}`], address: i % 2 ? `${i}, "Quoted", street` : null },
    };
  });

test("npm run import resumes a killed run without duplicates; npm run export gives back the same features", async () => {
  const total = 6500;
  const source = join(scratch, "places.geojson");
  const features = cliFeatures(total);
  writeFileSync(source, JSON.stringify({ type: "FeatureCollection", features }));
  // Killed once its state file says some batches are in.
  const first = tool("import", [source]);
  const state = `${source}.import-state.json`;
  await new Promise<void>((resolve, reject) => {
    const poll = setInterval(() => {
      try {
        if ((JSON.parse(readFileSync(state, "utf8")) as { done: number }).done >= 2000) {
          clearInterval(poll);
          first.kill("SIGKILL");
          resolve();
        }
      } catch {
        // Not written yet.
      }
      if (first.exitCode !== null) {
        clearInterval(poll);
        reject(new Error("the import finished before it could be interrupted"));
      }
    }, 5);
  });
  const resumed = await finished(tool("import", [source]));
  assert.match(resumed, /Resuming: [\d,]+ of 6,500 already imported/);
  assert.match(resumed, /Done: /);
  assert.ok(!existsSync(state), "the state file is removed at the end");

  const exported = join(scratch, "export.geojson");
  await finished(tool("export", [exported]));
  const back = JSON.parse(readFileSync(exported, "utf8")) as { type: string; features: Feature[] };
  assert.equal(back.type, "FeatureCollection");
  assert.equal(back.features.length, total, "every place once: none lost, none twice");
  back.features.forEach((feature, i) => {
    assert.deepEqual(feature.geometry.coordinates, features[i]!.geometry.coordinates);
    assert.equal(feature.properties.name, features[i]!.properties.name);
    assert.deepEqual(feature.properties.tags, features[i]!.properties.tags);
    assert.equal(feature.properties.address, features[i]!.properties.address);
  });

  // CSV out, and CSV in (to the same account): the same places again, quotes and all.
  const csv = join(scratch, "export.csv");
  await finished(tool("export", [csv]));
  const lines = readFileSync(csv, "utf8").trimEnd().split("\n");
  assert.equal(lines[0], "id,name,latitude,longitude,altitude,address,category,description,media_credits,tags");
  assert.equal(lines.length, total + 1);
  const csvIn = join(scratch, "some.csv");
  writeFileSync(csvIn, [lines[0], ...lines.slice(1, 1201)].join("\n") + "\n");
  const output = await finished(tool("import", [csvIn]));
  assert.match(output, /Done: 1,200 places imported/);
  const again = join(scratch, "again.geojson");
  await finished(tool("export", [again]));
  const all = (JSON.parse(readFileSync(again, "utf8")) as { features: Feature[] }).features;
  assert.equal(all.length, total + 1200);
  all.slice(total).forEach((feature, i) => {
    assert.deepEqual(feature.geometry.coordinates, features[i]!.geometry.coordinates);
    assert.equal(feature.properties.address, features[i]!.properties.address);
    assert.deepEqual(feature.properties.tags, features[i]!.properties.tags);
  });
});

test("the import reads a FeatureCollection in any layout, a chunk at a time, and refuses other documents", () => {
  const features = [
    {
      type: "Feature",
      geometry: { type: "Point", coordinates: [1, 2] },
      properties: { name: 'a "quoted" ] } , name', tags: ["x,y", "[z]"] },
    },
    { type: "Feature", geometry: null, properties: { name: 'back\\slash\\"' } },
    { type: "Feature", geometry: { type: "Point", coordinates: [3, 4, 5] }, properties: { name: "é 😀" } },
  ];
  // Members before and after `features`, one whose name contains `features`, nested `}` in strings.
  const document = {
    name: "x",
    bbox: [0, 0, 1, 1],
    crs: { type: "name", properties: { name: "}" } },
    features,
    type: "FeatureCollection",
    'fea"tures': [1],
  };
  for (const text of [
    JSON.stringify(document),
    JSON.stringify(document, null, 2),
    JSON.stringify(document, null, "\t"),
  ]) {
    for (let size = 1; size <= text.length; size += size < 10 ? 1 : 13) {
      const splitter = new FeatureSplitter();
      const texts: string[] = [];
      for (let at = 0; at < text.length; at += size) texts.push(...splitter.push(text.slice(at, at + size)));
      splitter.end();
      assert.deepEqual(
        texts.map((t) => JSON.parse(t) as unknown),
        features,
        `chunks of ${size}`,
      );
    }
  }
  const empty = new FeatureSplitter();
  assert.deepEqual(empty.push('{"type": "FeatureCollection", "features": [ ]}'), []);
  empty.end();
  for (const other of [
    "[]",
    "5",
    '{"type": "Feature", "features": []}',
    '{"type": "FeatureCollection"}',
    '{"features": {}, "type": "FeatureCollection"}',
    '{"type": "FeatureCollection", "features": [{"a": 1}',
  ]) {
    assert.throws(() => {
      const splitter = new FeatureSplitter();
      splitter.push(other);
      splitter.end();
    }, NotAFeatureCollection);
  }
});

/** Runs `npm run clients` (the script itself, with this Node) on the test's database; its exit code and JSON. */
function clients(args: string[]): { code: number | null; answer: Record<string, unknown> } {
  const result = spawnSync(
    process.execPath,
    [join(ROOT, "scripts", "clients.ts"), ...args, ...targetFlags(target), "--json"],
    { encoding: "utf8", timeout: 120_000 },
  );
  assert.ok(result.stdout.trim() !== "", result.stderr);
  return { code: result.status, answer: JSON.parse(result.stdout) as Record<string, unknown> };
}

test("a key from npm run clients -- keys create reads exactly its list; keys revoke stops it", async () => {
  // A second list of the account, which the key must not read.
  const unpublished = ((await api("POST", "/v3.0/lists", { name: "Unpublished" })) as { id: number }).id;
  const created = clients(["keys", "create", "--account", "gis test", "--name", "gis map", "--list", String(listId)]);
  assert.equal(created.code, 0, JSON.stringify(created.answer));
  assert.deepEqual(Object.keys(created.answer).sort(), [
    "created_at",
    "expires_at",
    "id",
    "key",
    "key_prefix",
    "lists",
    "name",
    "origins",
  ]);
  assert.deepEqual(created.answer.lists, [listId]);
  const key = String(created.answer.key);
  const read = () => getAgainOnce(`${server.base}/v3.0/lists?key=${encodeURIComponent(key)}`);
  const response = await read();
  assert.equal(response.status, 200, await response.clone().text());
  const ids = ((await response.json()) as { results: { id: number }[] }).results.map((list) => list.id);
  assert.deepEqual(ids, [listId]);
  assert.ok(!ids.includes(unpublished));

  const revoked = clients(["keys", "revoke", String(created.answer.id)]);
  assert.equal(revoked.code, 0, JSON.stringify(revoked.answer));
  // The service trusts what it read of a key for a second.
  const deadline = Date.now() + 5000;
  for (;;) {
    const after = await read();
    await after.body?.cancel();
    if (after.status === 401) break;
    assert.ok(Date.now() < deadline, `the revoked key still answers ${after.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
});

test("docs/registering-clients.md's commands run as written, the placeholders holding what they printed", () => {
  const lines = commands(shellBlock("docs/registering-clients.md", "# Registering clients"));
  assert.ok(lines.length >= 10, lines.join("\n"));
  const filled: Record<string, string> = {};
  // What the last `create` and `keys create` printed: each placeholder holds what its comment names.
  const printed: Record<"create" | "keys create", string> = { create: "", "keys create": "" };
  for (const line of lines) {
    const placeholder = /^(CLIENT_ID|KEY_ID)=\.\.\. /.exec(line)?.[1];
    if (placeholder) {
      const by = placeholder === "CLIENT_ID" ? "create" : "keys create";
      const shown = (placeholder === "CLIENT_ID" ? /client_id:\s+(\S+)/ : /^\s*id:\s+(\d+)$/m).exec(printed[by])?.[1];
      assert.ok(shown, `${placeholder} is not in what ${by} printed:\n${printed[by]}`);
      filled[placeholder] = shown;
      continue;
    }
    assert.match(line, /^npm run clients -- /);
    // The script npm runs, with this Node, on the test's database instead of npm start's.
    const args = `${line.slice("npm run clients -- ".length)} --persist-to "${target.persistTo}"`;
    const result = spawnSync("bash", ["-euc", `"${process.execPath}" scripts/clients.ts ${args}`], {
      cwd: ROOT,
      env: { ...process.env, ...filled },
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(result.status, 0, `${line}\n${result.stdout}${result.stderr}`);
    const command = /^npm run clients -- (keys create|create) /.exec(line)?.[1] as keyof typeof printed | undefined;
    if (command) printed[command] = result.stdout;
  }
  assert.deepEqual(Object.keys(filled).sort(), ["CLIENT_ID", "KEY_ID"]);
});

/** The documents with GDAL lines, each run after the quick tour. */
const GDAL_DOCUMENTS = ["docs/vector-tiles.md", "docs/geojson-and-gis.md", "docs/ogc.md"];
/** The most requests a GDAL line of the documents may make: a few pages or tiles, never a whole zoom level. */
const MOST_REQUESTS = 10;

/** Runs a command to its end without blocking this process, which reads the dev server's log meanwhile. */
function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk));
    child.once("close", (code) => resolve({ code, out, err }));
  });
}

/** What git sees in the checkout besides its commits: a file written there by an example shows up. */
const untracked = () =>
  spawnSync("git", ["status", "--porcelain", "--untracked-files=all"], { cwd: ROOT, encoding: "utf8" }).stdout;

/** The pinpoints of the GIS account that `query` selects, read from the API page by page. */
async function pinpointsWhere(
  query: string,
): Promise<{ id: number; name: string; longitude: number; latitude: number }[]> {
  const found: { id: number; name: string; longitude: number; latitude: number }[] = [];
  let url: string | null = `/v3.0/pinpoints?limit=1000${query}`;
  while (url) {
    const page = (await api("GET", url.replace(server.base, ""))) as { results: typeof found; next: string | null };
    found.push(...page.results);
    url = page.next;
  }
  return found;
}

test("the documents' GDAL, import and export lines run as written after the quick tour, outside the checkout", async (t) => {
  const home = join(scratch, "home");
  mkdirSync(home, { recursive: true });
  const gdalLines = GDAL_DOCUMENTS.flatMap((file) =>
    shellBlocks(file)
      .flatMap(commands)
      .filter((line) => /^(ogrinfo|ogr2ogr|mkdir) /.test(line))
      .map((line) => ({ file, line })),
  );
  for (const file of GDAL_DOCUMENTS) {
    assert.ok(
      gdalLines.some((l) => l.file === file && l.line.startsWith("ogr")),
      `${file} shows no GDAL line`,
    );
  }
  const transfers = commands(shellBlock("docs/geojson-and-gis.md", "## From and to files"));
  assert.deepEqual(
    transfers.map((line) => line.split(" ").slice(0, 3).join(" ")),
    ["mkdir -p ~/poi-data", "npm run export", "npm run import"],
  );
  // Each line after a marker naming it, on standard error where GDAL writes its debug log (the URLs it fetched).
  const script = [
    tourScript(),
    ...gdalLines.map(({ line }, i) => `echo "@@@ ${i} $(date +%s%N)" >&2\n${line}`),
    `echo "@@@ end $(date +%s%N)" >&2`,
    'echo "TOUR_LIST=$LIST"',
  ].join("\n");
  const before = untracked();
  const total = (await pinpointsWhere("")).length;
  const env = {
    ...process.env,
    HOME: home,
    BASE: server.base,
    ID: gisClient.client_id,
    SECRET: gisClient.client_secret,
    CPL_DEBUG: "ON",
    // npm run import and export talk to this service, as a reader's talk to `npm start`'s.
    POI_BASE_URL: server.base,
    POI_CLIENT_ID: gisClient.client_id,
    POI_CLIENT_SECRET: gisClient.client_secret,
  };
  const result = await run("bash", ["-eu", "-o", "pipefail", "-c", script], env);
  assert.equal(result.code, 0, `the documents' lines failed:\n${result.err.slice(-4000)}\n${result.out.slice(-2000)}`);
  assert.equal(untracked(), before, "an example wrote into the checkout");

  // Each GDAL line: a handful of requests, in seconds.
  const segments = result.err.split(/^@@@ /m).slice(1);
  const timings: string[] = [];
  gdalLines.forEach(({ file, line }, i) => {
    const [head = "", ...log] = segments[i]!.split("\n");
    const next = segments[i + 1]!.split("\n")[0]!;
    const seconds = (Number(next.split(" ")[1]) - Number(head.split(" ")[1])) / 1e9;
    const fetched = log.filter((l) => /HTTP: Fetch\(/.test(l)).length;
    if (line.startsWith("ogr")) timings.push(`${seconds.toFixed(1)} s, ${fetched} requests: ${line.slice(0, 90)}`);
    if (line.startsWith("ogr"))
      assert.ok(fetched >= 1 && fetched <= MOST_REQUESTS, `${file}: ${fetched} requests: ${line}`);
  });
  for (const timing of timings) t.diagnostic(timing);

  // What they wrote, against the API.
  const list = Number(/^TOUR_LIST=(\d+)$/m.exec(result.out)?.[1]);
  const names = (file: string) =>
    (
      JSON.parse(gdal(OGR2OGR, ["-f", "GeoJSON", "/vsistdout/", join(home, "poi-data", file)])) as {
        features: Feature[];
      }
    ).features
      .map((f) => String(f.properties.name))
      .sort();
  assert.deepEqual(names("list.gpkg"), (await pinpointsWhere(`&list=${list}`)).map((p) => p.name).sort());
  assert.deepEqual(names("museums.gpkg"), (await pinpointsWhere("&tags=museum")).map((p) => p.name).sort());
  const tile = JSON.parse(readFileSync(join(home, "poi-data", "tile.geojson"), "utf8")) as { features: Feature[] };
  const inTile = (await pinpointsWhere("")).filter((p) => tileOf(p, 12).join() === "2074,1409");
  assert.ok(inTile.length >= 3, "the tour's places fill the documents' tile");
  assert.equal(
    tile.features.reduce((n, f) => n + (f.properties.cluster ? Number(f.properties.point_count) : 1), 0),
    inTile.length,
  );
  for (const f of tile.features.filter((f) => !f.properties.cluster)) {
    assert.ok(
      inTile.some((p) => p.name === f.properties.name && Math.abs(p.longitude - f.geometry.coordinates[0]!) < 0.001),
    );
  }
  // The export wrote every place (the tour's too), and importing it made a copy of each.
  const afterTour = (await pinpointsWhere("")).length;
  const transferred = await run("bash", ["-eu", "-o", "pipefail", "-c", transfers.join("\n")], env);
  assert.equal(transferred.code, 0, `the import and export lines failed:\n${transferred.err}\n${transferred.out}`);
  assert.equal(untracked(), before, "an import or export wrote into the checkout");
  const backup = JSON.parse(readFileSync(join(home, "poi-data", "backup.geojson"), "utf8")) as { features: Feature[] };
  assert.ok(afterTour > total, "the tour made places");
  assert.equal(backup.features.length, afterTour, "the export holds every place");
  assert.equal((await pinpointsWhere("")).length, backup.features.length * 2);
});
