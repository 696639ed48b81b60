/**
 * The map page's HTML and its Content-Security-Policy, and the page that
 * says why the map is refused. The HTML is a few lines: a container, the
 * stylesheets and one module script, all static assets under /maps/
 * (scripts/static-assets.ts copies them from static/maps/ and maplibre-gl).
 * What differs per deployment (the style URL, the media origin, the markup a
 * description may keep) and the sentences a refusal shows travel in `data-`
 * attributes, so the page has no inline script or style and its policy needs
 * no hash or nonce.
 */
import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { Config } from "../core/config";
import { isOriginPattern } from "../core/publishable-keys";
import { DESCRIPTION_MARKUP } from "../fields/sanitize-html";

/** What a description may contain, by the server's own rule, for the page to check it again. */
const DESCRIPTION_JSON = JSON.stringify(DESCRIPTION_MARKUP);

/**
 * What a visitor is told for each refusal, by status: by the refusal page
 * below, and by the map page's script when the API refuses one of its requests
 * (the problem's own `detail` follows the sentence in both).
 */
export const REFUSALS: Readonly<Record<number, string>> = {
  400: "This map's address is not valid.",
  401: "This map's key is not valid, or it has expired.",
  403: "This map's key does not allow showing this list here.",
  404: "This list does not exist.",
  429: "Too many visitors at once: try again in a minute.",
};

const REFUSALS_JSON = JSON.stringify(REFUSALS);

/** The sentence for a refusal with `status`, then the problem's `detail`. */
export function refusalMessage(status: number, detail: string): string {
  const sentence = REFUSALS[status] ?? `The map could not be loaded (HTTP ${status}).`;
  return detail ? `${sentence} ${detail}` : sentence;
}

/** Where scripts/static-assets.ts puts the page's files, as a URL path. */
export const MAP_ASSETS_PATH = "/maps";

/** The origin of an absolute URL, or null for anything the URL parser refuses. */
function originOf(url: string | null): string | null {
  return url !== null && URL.canParse(url) ? new URL(url).origin : null;
}

/**
 * The page's policy: its scripts, styles and MapLibre's worker module from
 * this origin only; requests to the API here and to the configured style's
 * origin (its tiles, glyphs and sprites); images and video from here, the
 * media base URL's origin and, for raster tiles and sprites, the style's;
 * `data:` and `blob:` images, which MapLibre makes of decoded tiles. Framing:
 * by `framers` (the key's origins), by anyone when the key names none.
 */
export function mapPolicy(config: Config, framers: readonly string[] | null): string {
  const style = originOf(config.mapStyleUrl);
  const media = originOf(config.mediaPublicBaseUrl);
  const named = framers !== null && framers.length > 0;
  // The key's own rule for origins (exact, or https://*.domain), which CSP's host-source reads alike; it also
  // keeps out anything with a meaning in a policy (spaces, semicolons, quotes).
  const allowed = named ? framers.filter(isOriginPattern) : [];
  const sources = (...list: (string | null)[]) => [...new Set(list.filter((s) => s !== null))].join(" ");
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "worker-src 'self'",
    `connect-src ${sources("'self'", style)}`,
    `img-src ${sources("'self'", "data:", "blob:", media, style)}`,
    `media-src ${sources("'self'", media)}`,
    "base-uri 'none'",
    "form-action 'none'",
    // A key whose origins are all unusable may be framed by nobody, never by everybody.
    `frame-ancestors ${!named ? "*" : allowed.length > 0 ? allowed.join(" ") : "'none'"}`,
  ].join("; ");
}

/** The page. `html` escapes every value put into it. */
export function mapPage(config: Config): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Map</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${MAP_ASSETS_PATH}/maplibre-gl/maplibre-gl.css" />
        <link rel="stylesheet" href="${MAP_ASSETS_PATH}/map.css" />
        <link rel="modulepreload" href="${MAP_ASSETS_PATH}/maplibre-gl/maplibre-gl.mjs" />
        <script type="module" src="${MAP_ASSETS_PATH}/map.js"></script>
      </head>
      <body
        data-state="loading"
        data-style-url="${config.mapStyleUrl ?? ""}"
        data-media-origin="${originOf(config.mediaPublicBaseUrl) ?? ""}"
        data-description-markup="${DESCRIPTION_JSON}"
        data-refusals="${REFUSALS_JSON}"
      >
        <div id="map"></div>
        <p id="status" role="status">Loading the map…</p>
      </body>
    </html>`;
}

/**
 * The refusal page's policy: its stylesheet (and empty icon) and nothing else, and framed by
 * anyone. It shows no data of the list or the account, only why the map is
 * not shown, so letting any site frame it gives away nothing the key protects:
 * the framing site cannot read it (it is another origin), and it has nothing
 * to click. Framing it lets the visitor read the sentence instead of the
 * browser's own error for a refused frame.
 */
export const REFUSAL_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  // The empty icon (`data:,`), so a browser asks for no /favicon.ico.
  "img-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors *",
].join("; ");

/** The page that says why the map is not shown (`message`), as the map page would say it. */
export function refusalPage(message: string): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Map not available</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="${MAP_ASSETS_PATH}/map.css" />
      </head>
      <body data-state="error">
        <p id="status" class="error" role="status">${message}</p>
      </body>
    </html>`;
}
