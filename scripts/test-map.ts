/**
 * The live map page in a real browser (`npm run test:map`, part of `npm test`):
 * starts `wrangler dev` with a fresh local database, makes a list of 300
 * places (a bulk GeoJSON import, then one membership batch) and a publishable
 * key for that list limited to one origin, and serves two small sites of its
 * own on other ports, each a page that frames /maps/{list_id}?key=… in an
 * `<iframe>`. The Worker runs with wrangler.toml's MAP_STYLE_URL, OpenFreeMap's
 * style; this machine has no internet, so the browser gets a stand-in for
 * tiles.openfreemap.org with the same addresses (the style, its TileJSON,
 * vector and raster tiles, glyphs, sprites), or no answer at all. In Debian's
 * Chromium (WebGL on SwiftShader, see scripts/lib/chromium.ts) it checks that:
 * - framed by the allowed site, the map reads the list's vector tiles (its
 *   TileJSON, then the tiles in view: every one answered, in MVT), counts all
 *   300 places, draws them (every place counted once in the rendered clusters
 *   and markers, each marker a place of the list, and their colours found in
 *   the canvas, over the default style, every kind of whose requests the
 *   page's policy let through), and a click on a place opens its popup with the
 *   sanitized description, its image and its coming event; with no console
 *   error in either frame and no request leaving this machine;
 * - when the style cannot be had (refused, or no answer), the places are drawn
 *   on the plain background all the same;
 * - framed by the other site, the frame says why the map is not there (the
 *   Worker's refusal page), as it does for a list the key does not publish; a
 *   page served on a forged Referer is refused by the browser (frame-ancestors).
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
import type { BrowserContext, ConsoleMessage, Frame, Page, Route } from "playwright-core";
import { launchChromium, outsideRequests } from "./lib/chromium.ts";
import { tokenOf } from "./lib/transfer.ts";
import { startDevServer, type DevServer } from "./lib/dev-server.ts";
import { createClient } from "./lib/registry.ts";
import { d1Execute, runWrangler, targetFlags, type Target } from "./lib/wrangler.ts";

const PLACES = 300;
const SCREENSHOTS = process.env.MAP_SCREENSHOTS ?? tmpdir();
/** The default MAP_STYLE_URL's origin (wrangler.toml), which the browser reaches only through the stand-in. */
const OPENFREEMAP = "https://tiles.openfreemap.org";
/** The stand-in style's colour (its background and raster tiles), which the canvas check looks for. */
const BACKGROUND = [0xdd, 0xe8, 0xd4];
/** The plain background the page draws without a style (static/maps/map.js). */
const PLAIN = [0xe8, 0xec, 0xef];
/**
 * A stand-in for OpenFreeMap's Liberty style, at the addresses the real one
 * names: a vector source by TileJSON, a raster source, glyphs and a sprite,
 * each used by a layer so the map asks for all of them. Its vector tiles are
 * the service's own (layer `pinpoints`, with names to label).
 */
const STYLE = {
  version: 8,
  name: "Liberty stand-in",
  sources: {
    openmaptiles: { type: "vector", url: `${OPENFREEMAP}/planet` },
    ne2_shaded: {
      type: "raster",
      tiles: [`${OPENFREEMAP}/natural_earth/ne2sr/{z}/{x}/{y}.png`],
      tileSize: 256,
      maxzoom: 6,
    },
  },
  sprite: `${OPENFREEMAP}/sprites/ofm_f384/ofm`,
  glyphs: `${OPENFREEMAP}/fonts/{fontstack}/{range}.pbf`,
  layers: [
    { id: "background", type: "background", paint: { "background-color": `rgb(${BACKGROUND.join(",")})` } },
    { id: "shaded", type: "raster", source: "ne2_shaded" },
    {
      id: "labels",
      type: "symbol",
      source: "openmaptiles",
      "source-layer": "pinpoints",
      layout: {
        "text-field": ["get", "name"],
        "text-font": ["Noto Sans Regular"],
        "text-size": 9,
        "icon-image": "dot",
        "text-offset": [0, 1.5],
      },
      paint: { "text-color": "#556b2f" },
    },
  ],
};
/** The size of the picture of the place whose popup is opened. */
const PICTURE = { width: 240, height: 120 };

const scratch = mkdtempSync(join(tmpdir(), "poi-map-test-"));
const target: Target = { remote: false, persistTo: join(scratch, "state") };
let server: DevServer | undefined;
let token = "";
let listId = 0;
let key = "";
/** A list of the account that the key does not publish. */
let unpublished = 0;
const ids: number[] = [];
/** The place with a description, media and an event, alone in its corner of the map so it is never clustered. */
let showcase = 0;
/** The site allowed to frame the map, and one that is not; each serves a page framing `frame`. */
const sites: { allowed?: Site; other?: Site } = {};

type Site = { origin: string; frame: string; server: Server };

/** A PNG of `width` × `height` RGB pixels, each the colour `paint` gives it. */
function png(width: number, height: number, paint: (x: number, y: number) => number[]): Buffer {
  const row = width * 3 + 1;
  const pixels = Buffer.alloc(row * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) pixels.set(paint(x, y), y * row + 1 + x * 3);
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
  ]);
}

/** A PNG of an evening sky over a dark horizon, base64: the place's media, so the screenshot shows one. */
function picture({ width, height }: typeof PICTURE): string {
  return png(width, height, (_, y) => {
    const t = y / height;
    return t < 0.7 ? [250 - 40 * t, 190 - 150 * t, 90 + 60 * t] : [40, 30, 60];
  }).toString("base64");
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
  unpublished = (await api<{ id: number }>("POST", "/v3.0/lists", { name: "Not for the map" })).id;
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

type BaseMapRequest = "style" | "tilejson" | "vector tile" | "raster tile" | "sprite" | "glyphs";

/**
 * Answers the browser's requests to OpenFreeMap with the stand-in style and its resources, and records
 * which kinds were asked for. A request the page's policy refused never gets here.
 */
async function standInOpenFreeMap(context: BrowserContext): Promise<Set<BaseMapRequest>> {
  const seen = new Set<BaseMapRequest>();
  await context.route(`${OPENFREEMAP}/**`, async (route) => {
    const { pathname } = new URL(route.request().url());
    const answer = (kind: BaseMapRequest, contentType: string, body: string | Buffer) => {
      seen.add(kind);
      return route.fulfill({
        status: 200,
        headers: { "Access-Control-Allow-Origin": "*", "Content-Type": contentType },
        body,
      });
    };
    const tile = /^\/planet\/\w+\/(\d+)\/(\d+)\/(\d+)\.pbf$/.exec(pathname);
    const sprite = /^\/sprites\/ofm_f384\/ofm(@2x)?\.(json|png)$/.exec(pathname);
    if (pathname === "/styles/liberty") return answer("style", "application/json", JSON.stringify(STYLE));
    if (pathname === "/planet") {
      const tileJson = {
        tilejson: "3.0.0",
        tiles: [`${OPENFREEMAP}/planet/20261001_001001_pt/{z}/{x}/{y}.pbf`],
        minzoom: 0,
        maxzoom: 14,
        vector_layers: [{ id: "pinpoints", fields: { name: "String" } }],
      };
      return answer("tilejson", "application/json", JSON.stringify(tileJson));
    }
    if (tile) {
      const [, z, x, y] = tile;
      const mvt = await fetch(`${server!.base}/v3.0/tiles/${z}/${x}/${y}.mvt`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      return answer("vector tile", "application/x-protobuf", Buffer.from(await mvt.arrayBuffer()));
    }
    if (/^\/natural_earth\/ne2sr\/\d+\/\d+\/\d+\.png$/.test(pathname)) {
      return answer(
        "raster tile",
        "image/png",
        png(256, 256, () => BACKGROUND),
      );
    }
    if (sprite) {
      const ratio = sprite[1] ? 2 : 1;
      return sprite[2] === "json"
        ? answer(
            "sprite",
            "application/json",
            JSON.stringify({ dot: { x: 0, y: 0, width: 8 * ratio, height: 8 * ratio, pixelRatio: ratio } }),
          )
        : answer(
            "sprite",
            "image/png",
            png(8 * ratio, 8 * ratio, () => [0x55, 0x6b, 0x2f]),
          );
    }
    // No glyphs in the range: the labels are laid out without them, as for a font missing characters.
    if (/^\/fonts\/[^/]+\/\d+-\d+\.pbf$/.test(pathname))
      return answer("glyphs", "application/x-protobuf", Buffer.alloc(0));
    return route.fulfill({ status: 404, body: "" });
  });
  return seen;
}

/** The map's frame, once the page has put every place on the map and drawn it; `errors` say why it did not. */
async function readyMap(page: Page, errors: string[]): Promise<Frame> {
  const frame = (await (await page.locator("iframe#map").elementHandle())!.contentFrame())!;
  await frame
    .waitForFunction(() => document.body.dataset.state !== "loading", null, { timeout: 60_000 })
    .catch(async (error: unknown) => {
      const shown = await frame
        .evaluate(() => {
          const map = (window as unknown as { liveMap?: import("maplibre-gl").Map }).liveMap;
          const style = map?.getStyle()?.name;
          return `${document.getElementById("status")?.textContent}; style ${style}, loaded ${map?.loaded()}, tiles ${map?.areTilesLoaded()}, source ${map?.getSource("places") ? map.isSourceLoaded("places") : "none"}, styleLoaded ${map?.isStyleLoaded()}, moving ${map?.isMoving()}, zoom ${map?.getZoom()}`;
        })
        .catch(() => null);
      throw new Error(`the map is still loading (${shown}); console errors:\n${errors.join("\n")}`, { cause: error });
    });
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
function markerPixels(frame: Frame, background: number[]) {
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
    background,
  );
}

test("framed by the allowed site, the map shows every place of the list over the default style, with popups", async () => {
  const { context, page, errors } = await browse("allowed");
  const outside = outsideRequests(context);
  const tiles = tileRequests(context);
  const baseMap = await standInOpenFreeMap(context);
  try {
    await page.goto(`${sites.allowed!.origin}/`);
    const frame = await readyMap(page, errors);
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
    const pixels = await markerPixels(frame, BACKGROUND);
    assert.ok(pixels.cluster > 500 && pixels.place > 50, `markers are drawn on the canvas: ${JSON.stringify(pixels)}`);
    assert.ok(pixels.background > pixels.size / 2, `under them, the default style: ${JSON.stringify(pixels)}`);
    // Every kind of request the style makes went out: the page's policy allows the style's origin for each.
    assert.deepEqual([...baseMap].sort(), ["glyphs", "raster tile", "sprite", "style", "tilejson", "vector tile"]);

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
      outside.filter((url) => new URL(url).hostname !== "localhost" && new URL(url).origin !== OPENFREEMAP),
      [],
      "nothing is loaded from outside this machine but the default style (from the stand-in)",
    );
  } finally {
    await context.close();
  }
});

test("when the default style cannot be had, refused or unanswered, the places are drawn on the plain background", async () => {
  const unreachable: [profile: string, handler: (route: Route) => Promise<void> | void][] = [
    ["offline", (route) => route.abort("internetdisconnected")],
    // Never answered: the page gives up on the style after 10 seconds.
    ["silent", () => {}],
  ];
  for (const [profile, handler] of unreachable) {
    const { context, page, errors } = await browse(profile);
    const warnings: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "warning") warnings.push(message.text());
    });
    try {
      await context.route(`${OPENFREEMAP}/**`, handler);
      await page.goto(`${sites.allowed!.origin}/`);
      const frame = await readyMap(page, errors);
      assert.equal((await frame.evaluate(() => document.body.dataset.loaded)) ?? "", String(PLACES), profile);
      const drawn = await rendered(frame, showcase);
      assert.equal(drawn.total, PLACES, `${profile}: every place is on screen: ${JSON.stringify(drawn)}`);
      const pixels = await markerPixels(frame, PLAIN);
      assert.ok(pixels.cluster > 500 && pixels.place > 50, `${profile}: markers: ${JSON.stringify(pixels)}`);
      assert.ok(pixels.background > pixels.size / 2, `${profile}: on the plain background: ${JSON.stringify(pixels)}`);
      assert.ok(
        warnings.some((w) => w.includes(`${OPENFREEMAP}/styles/liberty could not be loaded`)),
        `${profile}: the page says why: ${warnings.join("\n")}`,
      );
      // The browser's own line for each failed request to the style's origin, and nothing else.
      assert.deepEqual(
        errors.filter((e) => !e.startsWith(`${OPENFREEMAP}/`)),
        [],
        `${profile}: no other console error`,
      );
      if (profile === "offline") await page.screenshot({ path: join(SCREENSHOTS, "map-offline.png") });
    } finally {
      await context.close();
    }
  }
});

/** Not Chromium's note of a frame's 4xx status ("Failed to load resource: the server responded with a status of 403"). */
const notTheStatusNote = (error: string) =>
  !/: Failed to load resource: the server responded with a status of 4\d\d /.test(error);

/** Waits up to 10 seconds for a console error matching `pattern`. */
async function consoleError(page: Page, errors: string[], pattern: RegExp): Promise<string | undefined> {
  for (let waited = 0; waited < 10_000 && !errors.some((e) => pattern.test(e)); waited += 100) {
    await page.waitForTimeout(100);
  }
  return errors.find((e) => pattern.test(e));
}

test("framed by a site the key does not name, the frame says why; a page on a forged Referer the browser refuses", async () => {
  // The page request names its site as Referer: another site's gets a 403; outside a browser, problem details.
  const refused = await fetch(sites.other!.frame, { headers: { Referer: `${sites.other!.origin}/` } });
  assert.equal(refused.status, 403, await refused.clone().text());
  assert.equal(refused.headers.get("Content-Type"), "application/problem+json");
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
    // In a browser's frame, the refusal is a page that says why (and shows nothing of the list).
    await page.goto(`${sites.other!.origin}/`);
    const frame = (await (await page.locator("iframe#map").elementHandle())!.contentFrame())!;
    const status = frame.locator("#status");
    await status.waitFor({ timeout: 15_000 });
    assert.equal(
      await status.innerText(),
      `This map's key does not allow showing this list here. This publishable key is not allowed on the web origin ${sites.other!.origin}.`,
    );
    assert.equal(await frame.locator("#map").count(), 0, "the map page did not run in the refused frame");
    assert.doesNotMatch(await frame.content(), /Lyon by night|Place \d/, "nothing of the list is in the frame");
    await page.screenshot({ path: join(SCREENSHOTS, "map-refused.png") });
    // The browser notes the refused document's status on the console; nothing is blocked.
    assert.deepEqual(errors.filter(notTheStatusNote), [], "the refusal is shown, not blocked");

    // A Referer a browser would never send (as a script outside the browser can) gets the page served,
    // and the browser still refuses to show it in the other site's frame: the key's frame-ancestors. A
    // refused frame shows the browser's own error page: nothing of ours can be shown there.
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
    assert.equal(await again.locator("#status").count(), 0, "nor anything else of ours");
  } finally {
    await context.close();
  }
});

test("framed by the allowed site, a list the key does not publish: the frame says so", async () => {
  const { context, page, errors } = await browse("unpublished");
  try {
    // The style is not what this test is about: the same on every machine, online or not.
    await context.route(`${OPENFREEMAP}/**`, (route) => route.abort("internetdisconnected"));
    await page.goto(`${sites.allowed!.origin}/`);
    const map = `${server!.base}/maps/${unpublished}?key=${encodeURIComponent(key)}`;
    await page.locator("iframe#map").evaluate((frame, src) => ((frame as HTMLIFrameElement).src = src), map);
    const frame = (await (await page.locator("iframe#map").elementHandle())!.contentFrame())!;
    await frame.waitForURL(map);
    const status = frame.locator("#status");
    await status.waitFor({ timeout: 15_000 });
    assert.match(await status.innerText(), /^This list does not exist\. /);
    assert.doesNotMatch(await frame.content(), /Not for the map/);
    assert.deepEqual(
      errors.filter((e) => !e.startsWith(`${OPENFREEMAP}/`)).filter(notTheStatusNote),
      [],
      "no console error but the first map's unreachable style",
    );
  } finally {
    await context.close();
  }
});
