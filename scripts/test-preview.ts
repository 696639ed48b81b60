/**
 * `npm run preview` (`npm run test:preview`, part of `npm test`): started as
 * a developer starts it, on a scratch state directory, it serves the deploy
 * bundle with the development client `npm start` would create: a token, a
 * write and a read, a vector tile holding the place, a file of the map page;
 * Ctrl-C stops it and every process it started. `npm start` (wrangler dev)
 * then serves the same data from the same directory. The same runtime started
 * in this process runs the cron trigger's handler, which finishes a data fill
 * that text search waits for.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { VectorTile } from "@mapbox/vector-tile";
import { PbfReader } from "pbf";
import { buildBundle } from "./lib/bundle.ts";
import { cronMatches } from "./lib/cron.ts";
import { freePort, saveLocalFiles, startDevServer } from "./lib/dev-server.ts";
import { devVars } from "./lib/local-setup.ts";
import { startPreview } from "./lib/preview.ts";
import { ROOT } from "./lib/wrangler.ts";

const scratch = mkdtempSync(join(tmpdir(), "poi-preview-test-"));
const state = join(scratch, "state");
const place = { name: "Musée Carnavalet", latitude: 48.8575, longitude: 2.3625 };

type Client = { client_id: string; client_secret: string };
const devClient = () => JSON.parse(readFileSync(join(ROOT, ".dev-client.json"), "utf8")) as Client;

async function tokenFor(base: string, client: Client): Promise<string> {
  const response = await fetch(`${base}/v3.0/oauth2/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  assert.equal(response.status, 200, await response.clone().text());
  return ((await response.json()) as { access_token: string }).access_token;
}

/** The processes under `pid`, read from /proc. */
function descendants(pid: number): number[] {
  const parents = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        return [[Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])] as const];
      } catch {
        return [];
      }
    });
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) if (ppid === parent) (found.push(child), walk(child));
  };
  walk(pid);
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The tile of zoom `z` holding a point (Web Mercator, as docs/vector-tiles.md). */
function tileOf(z: number, latitude: number, longitude: number): [number, number] {
  const n = 2 ** z;
  const rad = (latitude * Math.PI) / 180;
  return [
    Math.floor(((longitude + 180) / 360) * n),
    Math.floor(((1 - Math.log(Math.tan(rad) + 1 / Math.cos(rad)) / Math.PI) / 2) * n),
  ];
}

const restoreLocalFiles = saveLocalFiles();
after(() => {
  restoreLocalFiles();
  rmSync(scratch, { recursive: true, force: true });
});

let preview: ChildProcess;
let output = "";
let base = "";
let id = 0;

test("npm run preview serves the bundle over the development data, and Ctrl-C stops all of it", async () => {
  {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    preview = spawn("npm", ["run", "preview", "--", "--port", String(port), "--persist-to", state], {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" },
    });
    const exited = new Promise<string>((resolve) =>
      preview.once("exit", (code, signal) => resolve(signal ?? `${code}`)),
    );
    preview.stdout!.on("data", (chunk: Buffer) => (output += chunk));
    preview.stderr!.on("data", (chunk: Buffer) => (output += chunk));
    try {
      const deadline = Date.now() + 180_000;
      while (!/Ctrl-C stops it\.\n/.test(output)) {
        assert.ok(preview.exitCode === null, `npm run preview exited:\n${output}`);
        assert.ok(Date.now() < deadline, `npm run preview did not start in 180 s:\n${output}`);
        await new Promise((wait) => setTimeout(wait, 300));
      }
      assert.match(output, /the deploy bundle on the local runtime \(npm run preview\)/);
      assert.match(output, new RegExp(`Base URL: +http://localhost:${port}`));
      const auth = { Authorization: `Bearer ${await tokenFor(base, devClient())}` };

      const created = await fetch(`${base}/v3.0/pinpoints`, {
        method: "POST",
        headers: { ...auth, "Content-Type": "application/json" },
        body: JSON.stringify(place),
      });
      assert.equal(created.status, 201, await created.clone().text());
      id = ((await created.json()) as { id: number }).id;
      const read = await fetch(`${base}/v3.0/pinpoints/${id}`, { headers: auth });
      assert.equal(read.status, 200);
      const { name, latitude, longitude } = (await read.json()) as typeof place;
      assert.deepEqual({ name, latitude, longitude }, place);

      const z = 16;
      const [x, y] = tileOf(z, place.latitude, place.longitude);
      const tile = await fetch(`${base}/v3.0/tiles/${z}/${x}/${y}.mvt`, { headers: auth });
      assert.equal(tile.status, 200);
      assert.equal(tile.headers.get("Content-Type"), "application/vnd.mapbox-vector-tile");
      const layers = new VectorTile(new PbfReader(new Uint8Array(await tile.arrayBuffer()))).layers;
      const features = Object.values(layers).flatMap((layer) =>
        Array.from({ length: layer.length }, (_, i) => layer.feature(i).properties),
      );
      assert.ok(
        features.some((properties) => properties.name === place.name),
        JSON.stringify(features),
      );

      const asset = await fetch(`${base}/maps/map.js`);
      assert.equal(asset.status, 200);
      assert.match(asset.headers.get("Content-Type") ?? "", /javascript/);
      assert.equal(await asset.text(), readFileSync(join(ROOT, "public/maps/map.js"), "utf8"));

      const started = descendants(preview.pid!);
      assert.ok(started.length > 2, "npm, the preview's Node and its workerd");
      process.kill(-preview.pid!, "SIGINT");
      // As after Ctrl-C in a terminal, npm ends by the signal, and the preview stops its runtime, says so
      // and ends: no process of it is left.
      const ended = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve("hung"), 30_000))]);
      assert.ok(ended === "SIGINT" || ended === "0", `npm run preview ended with ${ended}:\n${output}`);
      for (const deadline = Date.now() + 30_000; started.some(alive) && Date.now() < deadline;) {
        await new Promise((wait) => setTimeout(wait, 200));
      }
      assert.deepEqual(started.filter(alive), [], "a process of npm run preview outlived it");
      assert.match(output, /^Stopped\.$/m);
      assert.doesNotMatch(output, /^npm run preview: /m);
      await assert.rejects(fetch(`${base}/v3.0/openapi.json`), "something still answers on the port");
    } finally {
      try {
        process.kill(-preview.pid!, "SIGKILL");
      } catch {
        // the whole group has ended
      }
    }

    // npm start's wrangler dev on the same state directory and .dev.vars: the same place, the same client.
    const dev = await startDevServer(["--local", "--persist-to", state]);
    try {
      const auth = { Authorization: `Bearer ${await tokenFor(dev.base, devClient())}` };
      const again = await fetch(`${dev.base}/v3.0/pinpoints/${id}`, { headers: auth });
      assert.equal(again.status, 200, dev.output());
      assert.equal(((await again.json()) as { name: string }).name, place.name);
    } finally {
      await dev.stop();
    }
  }
});

test("the cron triggers run on their minutes; the runtime's scheduled handler finishes a data fill", async () => {
  assert.ok(cronMatches("17 * * * *", new Date("2026-11-28T09:17:00Z")));
  assert.ok(!cronMatches("17 * * * *", new Date("2026-11-28T09:18:00Z")));
  assert.ok(cronMatches("*/15 8-10 * * 1-5", new Date("2026-11-27T10:45:00Z")));
  assert.ok(!cronMatches("*/15 8-10 * * 1-5", new Date("2026-11-28T10:45:00Z")), "a Saturday");
  assert.ok(cronMatches("0 0 1 * 0", new Date("2026-11-29T00:00:00Z")), "either day field, as cron(8)");
  assert.throws(() => cronMatches("0 0 L * *", new Date()), /"L" in its day of month is not supported/);

  {
    const bundle = buildBundle(join(scratch, "bundle"));
    const runtime = await startPreview({ persistTo: state, port: 0, bundle, vars: devVars(), crons: false });
    try {
      const db = await runtime.mf.getD1Database("DB", "api");
      // A fill as migration 0012 registers it on a database with places, pending.
      await db.prepare("INSERT INTO data_fills (name, blocks) VALUES ('search_forms_pinpoints', 'text_search')").run();
      const auth = { Authorization: `Bearer ${await tokenFor(runtime.base.origin, devClient())}` };
      const search = () => fetch(`${runtime.base.origin}/v3.0/pinpoints?q=carnavalet`, { headers: auth });
      const waiting = await search();
      assert.equal(waiting.status, 503);
      assert.equal(waiting.headers.get("Retry-After"), "60");
      assert.equal(((await waiting.json()) as { type: string }).type, "urn:poi-api:problem:text_index_filling");
      await runtime.scheduled("17 * * * *");
      const fill = await db.prepare("SELECT done_at FROM data_fills WHERE name = 'search_forms_pinpoints'").first();
      assert.notEqual(fill?.done_at, null);
      const found = await search();
      assert.equal(found.status, 200);
      const { results } = (await found.json()) as { results: { id: number }[] };
      assert.deepEqual(
        results.map((r) => r.id),
        [id],
      );
    } finally {
      await runtime.stop();
    }
  }
});
