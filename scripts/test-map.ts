/**
 * The live map page in a real browser (`npm run test:map`, part of `npm test`):
 * starts `wrangler dev` with a fresh local database, makes a list of 300
 * places (a bulk GeoJSON import, then one membership batch) and a publishable
 * key for that list limited to one origin, and serves two small sites of its
 * own on other ports, each a page that frames /maps/{list_id}?key=… in an
 * `<iframe>`; the allowed site also serves the map style the Worker is
 * configured with (MAP_STYLE_URL). In Debian's Chromium (WebGL on
 * SwiftShader, see scripts/lib/chromium.ts) it checks that:
 * - framed by the allowed site, the map reads the list's vector tiles (its
 *   TileJSON, then the tiles in view: every one answered, in MVT), counts all
 *   300 places, draws them (every place counted once in the rendered clusters
 *   and markers, each marker a place of the list, and their colours found in
 *   the canvas, over the configured style), and a click on a place opens its
 *   popup with the sanitized description, its image and its coming event; with
 *   no console error in either frame and no request leaving this machine;
 * - framed by the other site, the browser refuses to show it (frame-ancestors).
 * Screenshots go to $MAP_SCREENSHOTS (default: the system temp folder).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { crc32, deflateSync } from "node:zlib";
import type { BrowserContext, ConsoleMessage, Frame, Page } from "playwright-core";
import { launchChromium, outsideRequests } from "./lib/chromium.ts";
import { tokenOf } from "./lib/transfer.ts";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";
import { createClient } from "./lib/registry.ts";
import { d1Execute, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const PLACES = 300;
const SCREENSHOTS = process.env.MAP_SCREENSHOTS ?? tmpdir();
/**
 * The map style the Worker is configured with (MAP_STYLE_URL), served by the
 * framing site: a background only, in a colour the canvas check looks for.
 */
const BACKGROUND = [0xdd, 0xe8, 0xd4];
const STYLE = {
  version: 8,
  name: "Test style",
  sources: {},
  layers: [{ id: "land", type: "background", paint: { "background-color": `rgb(${BACKGROUND.join(",")})` } }],
};
/** The size of the picture of the place whose popup is opened. */
const PICTURE = { width: 240, height: 120 };

const scratch = mkdtempSync(join(tmpdir(), "poi-map-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let server: DevServer | undefined;
let token = "";
let listId = 0;
let key = "";
const ids: number[] = [];
/** The place with a description, media and an event, alone in its corner of the map so it is never clustered. */
let showcase = 0;
/** The site allowed to frame the map, and one that is not; each serves a page framing `frame`. */
const sites: { allowed?: Site; other?: Site } = {};

type Site = { origin: string; frame: string; server: Server };

/** A PNG of an evening sky over a dark horizon, base64: the place's media, so the screenshot shows one. */
function picture({ width, height }: typeof PICTURE): string {
  const row = width * 3 + 1;
  const pixels = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    const t = y / height;
    for (let x = 0; x < width; x++) {
      const sky = t < 0.7;
      pixels.set(sky ? [250 - 40 * t, 190 - 150 * t, 90 + 60 * t] : [40, 30, 60], y * row + 1 + x * 3);
    }
  }
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const sizes = Buffer.alloc(8);
    sizes.writeUInt32BE(data.length, 0);
    sizes.writeUInt32BE(crc32(body), 4);
    return Buffer.concat([sizes.subarray(0, 4), body, sizes.subarray(4)]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2], 8); // 8 bits per channel, RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0)),
  ]).toString("base64");
}

async function api<T>(method: string, path: string, body?: unknown, type = "application/json"): Promise<T> {
  const response = await fetch(`${server!.base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "Content-Type": type }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${await response.clone().text()}`);
  return (await response.json()) as T;
}

/** A site on its own port (so its own origin) whose one page frames the map set in `site.frame`. */
async function startSite(name: string): Promise<Site> {
  const site = { origin: "", frame: "" } as Site;
  site.server = createServer((request, response) => {
    if (request.url === "/style.json") {
      // The deployment's MAP_STYLE_URL: fetched by the map's frame from its own origin, so by CORS.
      response.writeHead(200, { "Content-Type": "application/json", "Access-Control-Allow-Origin": "*" });
      response.end(JSON.stringify(STYLE));
      return;
    }
    if (request.url !== "/") {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    response.end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${name}</title><link rel="icon" href="data:,"></head>
<body><h1>${name}</h1>
<iframe id="map" src="${site.frame}" width="880" height="520" title="Map of our places" referrerpolicy="origin"></iframe>
</body></html>`);
  });
  await new Promise<void>((resolve) => site.server.listen(0, "127.0.0.1", resolve));
  // "localhost" is another site than the Worker's 127.0.0.1: the map is a third-party frame, as on a real site.
  site.origin = `http://localhost:${(site.server.address() as { port: number }).port}`;
  return site;
}

/**
 * 300 places scattered over Lyon, dense in the centre and sparse towards the
 * edges (so there are both clusters and single markers), the same on every
 * run; the first, the showcase, alone to the north-east.
 */
function placeFeatures() {
  let seed = 7;
  const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  return Array.from({ length: PLACES }, (_, i) => {
    const angle = random() * 2 * Math.PI;
    const distance = 0.13 * random() ** 2;
    const coordinates =
      i === 0 ? [5.06, 45.9] : [4.835 + distance * Math.cos(angle) * 1.4, 45.76 + distance * Math.sin(angle)];
    return { type: "Feature", geometry: { type: "Point", coordinates }, properties: { name: `Place ${i}` } };
  });
}

before(async () => {
  const status = runWrangler(
    ["d1", "migrations", "apply", "DB", ...targetFlags(target)],
    ["ignore", "ignore", "inherit"],
  );
  assert.equal(status, 0, "wrangler d1 migrations apply failed");
  const client = await createClient(d1Execute(target), { account: "map test", name: "publisher", scope: "read write" });
  sites.allowed = await startSite("A city guide");
  sites.other = await startSite("Somebody else's site");
  server = await startDevServer([
    ...targetFlags(target),
    "--var",
    `TOKEN_SIGNING_KEY:${randomBytes(32).toString("hex")}`,
    "--var",
    `MAP_STYLE_URL:${sites.allowed.origin}/style.json`,
  ]);
  token = await tokenOf({ base: server.base, clientId: client.client_id, clientSecret: client.client_secret });

  const imported = await api<{ ids: number[] }>(
    "POST",
    "/v3.0/pinpoints",
    { type: "FeatureCollection", features: placeFeatures() },
    "application/geo+json",
  );
  ids.push(...imported.ids);
  showcase = ids[0]!;
  await api("PUT", `/v3.0/pinpoints/${showcase}`, {
    name: "Belvedere",
    address: "1 Montée du Belvédère",
    description: '<p>Open <b>every day</b>.<script>alert("no")</script><img src="x" onerror="alert(1)"></p>',
    media_file: { content: picture(PICTURE), name: "view.png", type: "image/png" },
    media_credits: "Photo: the test",
  });
  const inAMonth = Date.now() + 30 * 24 * 3600 * 1000;
  await api("POST", "/v3.0/events", {
    name: "Sunset concert",
    pinpoint: showcase,
    dates: [{ start: new Date(inAMonth).toISOString(), end: new Date(inAMonth + 7200_000).toISOString() }],
  });
  await api("POST", "/v3.0/events", {
    name: "Last year's fair",
    pinpoint: showcase,
    dates: [{ start: "2020-05-01T10:00:00Z", end: "2020-05-01T18:00:00Z" }],
  });
  listId = (await api<{ id: number }>("POST", "/v3.0/lists", { name: "Lyon by night" })).id;
  const added = await api<{ total: number; errors: unknown[] }>(
    "POST",
    `/v3.0/lists/${listId}/pinpoints`,
    ids.map((id) => ({ id })),
  );
  assert.deepEqual(added, { total: PLACES, errors: [] });

  const created = await api<{ key: string; origins: string[] }>("POST", "/v3.0/keys", {
    name: "city guide embed",
    lists: [listId],
    origins: [sites.allowed.origin],
  });
  key = created.key;
  assert.match(key, /^pk_[A-Za-z0-9_-]+$/);
  const map = `${server.base}/maps/${listId}?key=${encodeURIComponent(key)}`;
  sites.allowed.frame = map;
  sites.other.frame = map;
});

after(async () => {
  for (const site of [sites.allowed, sites.other]) site?.server.close();
  await server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** Chromium with a page that records every console error and uncaught exception, of every frame. */
async function browse(profile: string): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await launchChromium(join(scratch, profile), { width: 960, height: 640 });
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on("console", (message: ConsoleMessage) => {
    if (message.type() === "error") errors.push(`${message.location().url}: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  return { context, page, errors };
}

/** The map's frame, once the page has put every place on the map and drawn it. */
async function readyMap(page: Page): Promise<Frame> {
  const frame = (await (await page.locator("iframe#map").elementHandle())!.contentFrame())!;
  await frame.waitForFunction(() => document.body.dataset.state !== "loading", null, { timeout: 60_000 });
  const state = await frame.evaluate(() => [
    document.body.dataset.state,
    document.getElementById("status")?.textContent,
  ]);
  assert.deepEqual(state, ["ready", ""], "the map page says what went wrong");
  return frame;
}

/** The vector tiles the page's frame asked for, with the status and type of each answer. */
function tileRequests(context: BrowserContext): { url: string; status: number; type: string | null }[] {
  const seen: { url: string; status: number; type: string | null }[] = [];
  context.on("response", (response) => {
    if (/\/v3\.0\/tiles\/\d+\/\d+\/\d+\.mvt\?/.test(response.url())) {
      seen.push({ url: response.url(), status: response.status(), type: response.headers()["content-type"] ?? null });
    }
  });
  return seen;
}

/** How many places the drawn clusters and markers stand for, and the screen position of one single marker. */
function rendered(frame: Frame, placeId: number) {
  return frame.evaluate((placeId) => {
    const map = (window as unknown as { liveMap: import("maplibre-gl").Map }).liveMap;
    const clusters = new Map<number, number>();
    for (const feature of map.queryRenderedFeatures({ layers: ["clusters"] })) {
      clusters.set(Number(feature.properties.cluster_id), Number(feature.properties.point_count));
    }
    const singles = new Set(map.queryRenderedFeatures({ layers: ["places"] }).map((feature) => Number(feature.id)));
    const tiles = (map.getStyle().sources.places as { tiles?: string[] }).tiles;
    const showcase = map.queryRenderedFeatures({ layers: ["places"] }).find((f) => Number(f.id) === placeId);
    const point =
      showcase?.geometry.type === "Point" ? map.project(showcase.geometry.coordinates as [number, number]) : null;
    return {
      clusters: clusters.size,
      singles: singles.size,
      total: [...clusters.values()].reduce((sum, count) => sum + count, 0) + singles.size,
      singleIds: [...singles],
      tiles,
      showcase: point && { x: point.x, y: point.y },
    };
  }, placeId);
}

/**
 * Pixels of the map's canvas in the markers' colours, read right after a frame
 * is drawn (the WebGL buffer is cleared once it is shown).
 */
function markerPixels(frame: Frame) {
  return frame.evaluate(
    (background) =>
      new Promise<{ background: number; cluster: number; place: number; size: number }>((resolve) => {
        const map = (window as unknown as { liveMap: import("maplibre-gl").Map }).liveMap;
        map.once("render", () => {
          const canvas = map.getCanvas();
          const gl = canvas.getContext("webgl2")!;
          const pixels = new Uint8Array(gl.drawingBufferWidth * gl.drawingBufferHeight * 4);
          gl.readPixels(0, 0, gl.drawingBufferWidth, gl.drawingBufferHeight, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
          const near = (i: number, [r, g, b]: number[]) =>
            Math.abs(pixels[i]! - r!) + Math.abs(pixels[i + 1]! - g!) + Math.abs(pixels[i + 2]! - b!) < 24;
          const counts = { background: 0, cluster: 0, place: 0, size: pixels.length / 4 };
          for (let i = 0; i < pixels.length; i += 4) {
            if (near(i, background)) counts.background++;
            else if (near(i, [0x5b, 0x8d, 0xef]) || near(i, [0x38, 0x67, 0xd6]) || near(i, [0x1e, 0x3f, 0x99])) {
              counts.cluster++;
            } else if (near(i, [0xe8, 0x45, 0x3c])) counts.place++;
          }
          resolve(counts);
        });
        map.triggerRepaint();
      }),
    BACKGROUND,
  );
}

test("framed by the allowed site, the map shows every place of the list, drawn, with popups", async () => {
  const { context, page, errors } = await browse("allowed");
  const outside = outsideRequests(context);
  const tiles = tileRequests(context);
  try {
    await page.goto(`${sites.allowed!.origin}/`);
    const frame = await readyMap(page);
    assert.equal(new URL(frame.url()).origin, server!.base, "the map runs on the Worker's origin");
    const dataset = await frame.evaluate(() => ({ ...document.body.dataset }));
    assert.equal(dataset.loaded, String(PLACES), "the tiles count every place of the list");
    assert.equal(await frame.title(), "Lyon by night – map");

    await page.screenshot({ path: join(SCREENSHOTS, "map-loaded.png") });
    const drawn = await rendered(frame, showcase);
    // MapLibre draws the list's vector tiles: every tile it asked for was answered, in MVT, with the key.
    assert.deepEqual(drawn.tiles, [
      `${server!.base}/v3.0/tiles/{z}/{x}/{y}.mvt?list=${listId}&key=${encodeURIComponent(key)}`,
    ]);
    assert.ok(tiles.length > 0, "the map asked for tiles");
    for (const tile of tiles) assert.deepEqual([tile.status, tile.type], [200, "application/vnd.mapbox-vector-tile"]);
    // The tiles' clusters and places, as drawn, add up to the list exactly: none missing, none twice.
    assert.equal(drawn.total, PLACES, `every place is on screen, in a cluster or alone: ${JSON.stringify(drawn)}`);
    assert.ok(drawn.clusters > 0 && drawn.singles > 0, `both clusters and single places: ${JSON.stringify(drawn)}`);
    for (const id of drawn.singleIds) assert.ok(ids.includes(id), `marker ${id} is a place of the list`);
    const pixels = await markerPixels(frame);
    assert.ok(pixels.cluster > 500 && pixels.place > 50, `markers are drawn on the canvas: ${JSON.stringify(pixels)}`);
    assert.ok(pixels.background > pixels.size / 2, `under them, the configured style: ${JSON.stringify(pixels)}`);

    // The showcase place's popup: sanitized description, its image, its coming event only.
    assert.ok(drawn.showcase, "the showcase place is drawn alone");
    const box = (await page.locator("iframe#map").boundingBox())!;
    await page.mouse.click(box.x + drawn.showcase.x, box.y + drawn.showcase.y);
    const popup = frame.locator(".maplibregl-popup .place");
    await popup.locator(".events li").waitFor({ timeout: 15_000 });
    assert.equal(await popup.locator("h2").innerText(), "Belvedere");
    assert.equal(await popup.locator(".description b").innerText(), "every day");
    assert.equal(await popup.locator(".description script, .description [onerror]").count(), 0);
    assert.equal(await popup.locator(".events li").count(), 1, "past events are not shown");
    assert.match(await popup.locator(".events li").innerText(), /Sunset concert$/);
    await frame.waitForFunction((width) => {
      const image = document.querySelector<HTMLImageElement>(".place .media img");
      return image !== null && image.complete && image.naturalWidth === width;
    }, PICTURE.width);
    // The map's frame is composited on its own: let it show its latest frames before the picture.
    await frame.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    await page.waitForTimeout(250);
    await page.screenshot({ path: join(SCREENSHOTS, "map-embedded.png") });

    assert.deepEqual(errors, [], "no console error in the page or the map's frame");
    assert.deepEqual(
      outside.filter((url) => new URL(url).hostname !== "localhost"),
      [],
      "nothing is loaded from outside this machine",
    );
  } finally {
    await context.close();
  }
});

/** Waits up to 10 seconds for a console error matching `pattern`. */
async function consoleError(page: Page, errors: string[], pattern: RegExp): Promise<string | undefined> {
  for (let waited = 0; waited < 10_000 && !errors.some((e) => pattern.test(e)); waited += 100) {
    await page.waitForTimeout(100);
  }
  return errors.find((e) => pattern.test(e));
}

test("framed by a site the key does not name, the map is refused, by the Worker and by the browser", async () => {
  // The page request names its site as Referer: another site's gets a 403, whose policy no site may frame.
  const refused = await fetch(sites.other!.frame, { headers: { Referer: `${sites.other!.origin}/` } });
  assert.equal(refused.status, 403, await refused.clone().text());
  await refused.body?.cancel();
  const served = await fetch(sites.other!.frame, { headers: { Referer: `${sites.allowed!.origin}/` } });
  await served.body?.cancel();
  assert.equal(served.status, 200);
  assert.equal(
    served.headers.get("Content-Security-Policy")?.match(/frame-ancestors ([^;]*)/)?.[1],
    sites.allowed!.origin,
  );

  const { context, page, errors } = await browse("other");
  try {
    await page.goto(`${sites.other!.origin}/`);
    const message = await consoleError(page, errors, /frame-ancestors/);
    assert.match(message ?? errors.join("\n"), /frame-ancestors 'none'/);
    const frame = (await (await page.locator("iframe#map").elementHandle())!.contentFrame())!;
    assert.equal(await frame.locator("#map").count(), 0, "the map page did not run in the refused frame");

    // A Referer a browser would never send (as a script outside the browser can) gets the page served,
    // and the browser still refuses to show it in the other site's frame: the key's frame-ancestors.
    errors.length = 0;
    await page.route(`${server!.base}/maps/**`, async (route) => {
      const response = await route.fetch({
        headers: { ...route.request().headers(), referer: `${sites.allowed!.origin}/` },
      });
      await route.fulfill({ response });
    });
    await page.reload();
    const framed = await consoleError(page, errors, /frame-ancestors/);
    assert.ok(framed?.includes(`frame-ancestors ${sites.allowed!.origin}`), errors.join("\n"));
    const again = (await (await page.locator("iframe#map").elementHandle())!.contentFrame())!;
    assert.equal(await again.locator("#map").count(), 0, "the map page did not run in the refused frame");
  } finally {
    await context.close();
  }
});
