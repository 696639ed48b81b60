// @ts-check
/**
 * The live map of a list (/maps/{list_id}?key=pk_…), in the browser: reads the
 * list and its vector tiles (docs/vector-tiles.md: the TileJSON, then the
 * tiles MapLibre asks for) through the public API with the page's publishable
 * key, and shows them with MapLibre GL JS, clustered where dense, as the
 * server clusters them: a list of any size costs a few tiles per view. A click
 * on a cluster zooms into it; a click on a place opens a popup with its name,
 * address, media, description and coming events (read when the popup opens).
 * Errors are shown as a sentence, never as a blank map.
 *
 * Under the places it draws the deployment's base map style (MAP_STYLE_URL,
 * OpenFreeMap's by default), or a plain background when none is set or the
 * style cannot be loaded (offline, or no answer within 10 seconds).
 *
 * The page runs under a strict Content-Security-Policy (src/maps/page.ts):
 * this file, MapLibre and its worker come from this origin, and the API is
 * this origin too; the style's origin serves its tiles, glyphs and sprites.
 *
 * For tests and for anyone debugging from the console, the page says how far
 * it got on `document.body.dataset`: `state` ("loading", then "ready" once
 * the list's tiles in view are drawn, or "error") and `loaded` (the number of places
 * in the list, as the tiles count them); and the map is `window.liveMap`.
 */

/** Beside this file (scripts/static-assets.ts); a variable, so TypeScript takes the types from the package. */
const MAPLIBRE = "./maplibre-gl/maplibre-gl.mjs";
/** @type {typeof import("maplibre-gl")} */
const maplibregl = await import(MAPLIBRE);

/** @typedef {import("maplibre-gl").Map} MapLibreMap */
/** @typedef {import("maplibre-gl").StyleSpecification} StyleSpecification */
/** @typedef {import("maplibre-gl").MapGeoJSONFeature} MapGeoJSONFeature */
/**
 * A pinpoint as a GeoJSON Feature (the API's `format=geojson`).
 * @typedef {{ type: "Feature", id: number, geometry: { type: "Point", coordinates: number[] },
 *   properties: { name: string, address: string | null, description: string | null,
 *   media_url: string | null, media_credits: string | null } }} Place
 */
/** @typedef {{ id: number, name: string, dates: { start: string, end: string }[] }} Event */
/**
 * The tiles' TileJSON (GET /v3.0/tiles.json): their URL, with the list and the key, and the places' bounds.
 * @typedef {{ tiles: string[], minzoom: number, maxzoom: number, bounds: [number, number, number, number] }} TileJson
 */

/** Coming events shown per place. */
const EVENTS_SHOWN = 5;
const SOURCE = "places";
/** The tiles' layer (docs/vector-tiles.md). */
const LAYER = "pinpoints";
/** Cluster ids are 2^52 plus the XYZ tile of the bin the cluster fills (docs/vector-tiles.md). */
const CLUSTER_BASE = 2 ** 52;

/** How long the configured style may take to load before the page draws the plain background instead. */
const STYLE_WAIT_MS = 10_000;

/** Used when no style is configured, or the configured one fails: a plain background, no tiles. */
/** @type {StyleSpecification} */
const PLAIN_STYLE = {
  version: 8,
  name: "Plain",
  sources: {},
  layers: [{ id: "background", type: "background", paint: { "background-color": "#e8ecef" } }],
};

const body = document.body;
const status = /** @type {HTMLElement} */ (document.getElementById("status"));

/**
 * Shows `message` over the map (or hides it when empty) and records the state.
 * @param {"loading" | "ready" | "error"} state
 * @param {string} message
 */
function show(state, message) {
  body.dataset.state = state;
  status.textContent = message;
  status.hidden = message === "";
  status.className = state;
}

/** A failed API request, with a sentence a visitor can read. */
class ApiFailure extends Error {
  /**
   * @param {number} status
   * @param {string} message
   */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * What a visitor is told for each refusal, by status (the Worker's own sentences, src/maps/page.ts); the
 * problem's own `detail` follows.
 */
const REFUSALS = /** @type {Record<number, string>} */ (JSON.parse(body.dataset.refusals || "{}"));

/**
 * GETs a URL of this API and returns its JSON body, or throws an ApiFailure.
 * @param {string} url
 * @returns {Promise<any>}
 */
async function getJson(url) {
  let response;
  try {
    response = await fetch(url, { credentials: "omit" });
  } catch {
    throw new ApiFailure(0, "The map could not reach the server: check the connection and reload.");
  }
  if (response.ok) return response.json();
  let detail = "";
  try {
    detail = String((await response.json()).detail ?? "");
  } catch {
    // Not a problem document: the status says enough.
  }
  const sentence = REFUSALS[response.status] ?? `The map could not be loaded (HTTP ${response.status}).`;
  throw new ApiFailure(response.status, detail ? `${sentence} ${detail}` : sentence);
}

/** The page's own address: /maps/{list_id}?key=…. */
function readAddress() {
  const listId = /^\/maps\/([1-9][0-9]*)\/?$/.exec(location.pathname)?.[1];
  const key = new URLSearchParams(location.search).get("key") ?? "";
  return { listId, key };
}

/**
 * An API URL on this origin with the key and the given parameters.
 * @param {string} path
 * @param {Record<string, string | number>} params
 * @param {string} key
 */
function apiUrl(path, params, key) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, String(value));
  url.searchParams.set("key", key);
  return url.href;
}

/**
 * How many places the tiles hold: the one tile of zoom 0, whose clusters' counts and places add up to
 * every place of the list (as GeoJSON, one small request).
 * @param {string} listId
 * @param {string} key
 */
async function countPlaces(listId, key) {
  /** @type {{ features: { properties: { point_count?: number } }[] }} */
  const tile = await getJson(apiUrl("/v3.0/tiles/0/0/0.geojson", { list: listId }, key));
  return tile.features.reduce((sum, feature) => sum + (feature.properties.point_count ?? 1), 0);
}

// --- Descriptions ---------------------------------------------------------------------------

/**
 * Elements a description may keep, with the attributes each may carry beyond the
 * global ones: the server's own rule (src/fields/sanitize-html.ts), which the
 * Worker puts in the page (src/maps/page.ts).
 */
const MARKUP = /** @type {{ elements: Record<string, string[]>, globalAttributes: string[] }} */ (
  JSON.parse(body.dataset.descriptionMarkup || '{"elements":{},"globalAttributes":[]}')
);
const ALLOWED = new Map(Object.entries(MARKUP.elements));
const GLOBAL_ATTRIBUTES = MARKUP.globalAttributes;
const URL_ATTRIBUTES = new Set(["href", "src", "cite"]);
const SAFE_SCHEMES = new Set(["http:", "https:", "mailto:", "tel:"]);
/** Where images may come from: the page's policy allows this origin and the media base URL's. */
const IMAGE_ORIGINS = new Set([location.origin, body.dataset.mediaOrigin].filter(Boolean));

/**
 * The description as a fragment of new elements: the API stores descriptions
 * already sanitized (no scripts, event handlers, styles or `javascript:` URLs),
 * and this copies again only the allowed elements and attributes, so what the
 * page shows does not depend on the stored HTML being clean. It is parsed in a
 * DOMParser document, which runs no script and loads nothing, and no markup
 * string ever reaches this page's own document. The page's
 * Content-Security-Policy (no inline script) would block a script anyway.
 * Only absolute URLs are kept, and images only from the origins the policy
 * allows (others become their alt text).
 * @param {string} html
 * @returns {DocumentFragment}
 */
function sanitizedDescription(html) {
  const parsed = new DOMParser().parseFromString(html, "text/html");
  const fragment = document.createDocumentFragment();
  for (const child of parsed.body.childNodes) copyAllowed(child, fragment);
  return fragment;
}

/**
 * @param {Node} node a node of the parsed (inert) description
 * @param {Node} parent where its clean copy goes
 */
function copyAllowed(node, parent) {
  if (node.nodeType === Node.TEXT_NODE) {
    parent.appendChild(document.createTextNode(node.textContent ?? ""));
    return;
  }
  if (!(node instanceof Element)) return;
  const tag = node.localName;
  const allowed = ALLOWED.get(tag);
  if (!allowed) {
    // An unknown element keeps its text and allowed children, as the server unwraps it.
    for (const child of node.childNodes) copyAllowed(child, parent);
    return;
  }
  if (tag === "img" && !allowedImage(node.getAttribute("src"))) {
    const alt = node.getAttribute("alt");
    if (alt) parent.appendChild(document.createTextNode(alt));
    return;
  }
  const copy = document.createElement(tag);
  for (const name of [...GLOBAL_ATTRIBUTES, ...allowed]) {
    const value = node.getAttribute(name);
    if (value === null || (URL_ATTRIBUTES.has(name) && !safeUrl(value))) continue;
    copy.setAttribute(name, value);
  }
  if (tag === "a") {
    // The page may be in a frame: links open beside it, and the target learns nothing of it.
    copy.setAttribute("target", "_blank");
    copy.setAttribute("rel", "noopener noreferrer");
  }
  for (const child of node.childNodes) copyAllowed(child, copy);
  parent.appendChild(copy);
}

/**
 * An absolute URL with a safe scheme: a description has no base a relative URL could mean.
 * @param {string} value
 */
function safeUrl(value) {
  return URL.canParse(value) && SAFE_SCHEMES.has(new URL(value).protocol);
}

/** @param {string | null} src */
function allowedImage(src) {
  return src !== null && safeUrl(src) && IMAGE_ORIGINS.has(new URL(src).origin);
}

// --- Popups ---------------------------------------------------------------------------------

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [className]
 * @param {string} [text]
 */
function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** @param {string} url */
const isVideo = (url) => /\.mp4$/i.test(new URL(url).pathname);

/** @param {Place} place */
function placeContent(place) {
  const { name, address, description, media_url: mediaUrl, media_credits: credits } = place.properties;
  const article = element("article", "place");
  article.append(element("h2", "", name));
  if (address) article.append(element("p", "address", address));
  if (mediaUrl) {
    const figure = element("figure", "media");
    if (isVideo(mediaUrl)) {
      const video = element("video");
      video.controls = true;
      video.preload = "metadata";
      video.src = mediaUrl;
      figure.append(video);
    } else {
      const image = element("img");
      image.alt = name;
      image.src = mediaUrl;
      figure.append(image);
    }
    if (credits) figure.append(element("figcaption", "", credits));
    article.append(figure);
  }
  if (description) {
    const text = element("div", "description");
    text.append(sanitizedDescription(description));
    article.append(text);
  }
  const events = element("section", "events");
  events.append(element("h3", "", "Coming up"), element("p", "pending", "Looking for events…"));
  article.append(events);
  return { article, events };
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

/**
 * The place's coming events: those with an occurrence ending after now, soonest first.
 * @param {HTMLElement} section
 * @param {number} placeId
 * @param {string} key
 */
async function showEvents(section, placeId, key) {
  const now = new Date().toISOString();
  let events;
  try {
    const url = apiUrl("/v3.0/events", { pinpoint: placeId, from: now, limit: EVENTS_SHOWN }, key);
    events = /** @type {Event[]} */ ((await getJson(url)).results);
  } catch {
    section.replaceChildren(element("h3", "", "Coming up"), element("p", "", "The events could not be loaded."));
    return;
  }
  if (events.length === 0) {
    section.remove();
    return;
  }
  const list = element("ul");
  for (const event of events) {
    const next = event.dates.find((date) => date.end > now) ?? event.dates[0];
    const item = element("li");
    if (next) item.append(element("time", "", dateFormat.format(new Date(next.start))), " ");
    item.append(event.name);
    list.append(item);
  }
  section.replaceChildren(element("h3", "", "Coming up"), list);
}

// --- The map --------------------------------------------------------------------------------

/**
 * The source (the list's vector tiles) and its three layers, added whenever a style loads.
 * @param {MapLibreMap} map
 * @param {TileJson} tileJson
 */
function addPlaces(map, tileJson) {
  const { tiles, minzoom, maxzoom, bounds } = tileJson;
  map.addSource(SOURCE, { type: "vector", tiles, minzoom, maxzoom, bounds });
  map.addLayer({
    id: "clusters",
    type: "circle",
    source: SOURCE,
    "source-layer": LAYER,
    filter: ["has", "point_count"],
    paint: {
      "circle-color": ["step", ["get", "point_count"], "#5b8def", 10, "#3867d6", 50, "#1e3f99"],
      "circle-radius": ["step", ["get", "point_count"], 15, 10, 19, 50, 24],
      "circle-stroke-color": "#ffffff",
      "circle-stroke-width": 2,
    },
  });
  map.addLayer({
    id: "cluster-counts",
    type: "symbol",
    source: SOURCE,
    "source-layer": LAYER,
    filter: ["has", "point_count"],
    layout: { "text-field": ["get", "point_count_abbreviated"], "text-size": 13, "text-allow-overlap": true },
    paint: { "text-color": "#ffffff" },
  });
  map.addLayer({
    id: "places",
    type: "circle",
    source: SOURCE,
    "source-layer": LAYER,
    filter: ["!", ["has", "point_count"]],
    paint: {
      "circle-color": "#e8453c",
      "circle-radius": 7,
      "circle-stroke-color": "#ffffff",
      "circle-stroke-width": 2,
    },
  });
}

/**
 * The bounds of the XYZ tile `z/x/y`, as [[west, south], [east, north]].
 * @param {number} z
 * @param {number} x
 * @param {number} y
 * @returns {[[number, number], [number, number]]}
 */
function tileBounds(z, x, y) {
  const n = 2 ** z;
  const latitude = (/** @type {number} */ row) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * row) / n))) * 180) / Math.PI;
  return [
    [(x / n) * 360 - 180, latitude(y + 1)],
    [((x + 1) / n) * 360 - 180, latitude(y)],
  ];
}

/**
 * Clicks: a cluster zooms into the bin it fills (its id names that bin's tile), where its places spread
 * out; a place opens its popup, read from the API.
 * @param {MapLibreMap} map
 * @param {string} key
 */
function handleClicks(map, key) {
  map.on("click", "clusters", (event) => {
    const id = Number(event.features?.[0]?.properties.cluster_id);
    if (!Number.isSafeInteger(id) || id < CLUSTER_BASE) return;
    const z = (id - CLUSTER_BASE) % 32;
    const cell = (id - CLUSTER_BASE - z) / 32;
    map.fitBounds(tileBounds(z, cell % 2 ** z, Math.floor(cell / 2 ** z)), { padding: 48 });
  });
  map.on("click", "places", async (event) => {
    const id = Number(event.features?.[0]?.id);
    if (!Number.isSafeInteger(id) || id >= CLUSTER_BASE) return;
    /** @type {Place} */
    let place;
    try {
      place = await getJson(apiUrl(`/v3.0/pinpoints/${id}`, { format: "geojson" }, key));
    } catch {
      return;
    }
    const { article, events } = placeContent(place);
    const [longitude = 0, latitude = 0] = place.geometry.coordinates;
    new maplibregl.Popup({ maxWidth: "320px", focusAfterOpen: false })
      .setLngLat([longitude, latitude])
      .setDOMContent(article)
      .addTo(map);
    void showEvents(events, place.id, key);
  });
  for (const layer of ["clusters", "places"]) {
    map.on("mouseenter", layer, () => (map.getCanvas().style.cursor = "pointer"));
    map.on("mouseleave", layer, () => (map.getCanvas().style.cursor = ""));
  }
}

async function main() {
  const { listId, key } = readAddress();
  if (!listId || !/^pk_[A-Za-z0-9_-]+$/.test(key)) {
    show("error", "This map's address needs a list id and a publishable key (?key=pk_…).");
    return;
  }
  const styleUrl = body.dataset.styleUrl || "";
  const map = new maplibregl.Map({
    container: "map",
    style: styleUrl || PLAIN_STYLE,
    center: [0, 20],
    zoom: 1,
    attributionControl: { compact: true },
  });
  Object.assign(window, { liveMap: map });
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }));

  /** @type {TileJson | undefined} */
  let tileJson;
  // Whether the style in use has loaded, so layers can be added to it. MapLibre's isStyleLoaded() also waits
  // for the style's own tiles and images, which a real base map is still fetching long after.
  let styleReady = false;
  let fellBack = false;
  // Whenever a style loads (the configured one, or the plain one after it failed), once the tiles are known.
  const addIfReady = () => {
    if (tileJson && styleReady && !map.getSource(SOURCE)) addPlaces(map, tileJson);
  };
  map.on("style.load", () => {
    styleReady = true;
    addIfReady();
  });
  /**
   * The configured style could not be loaded (offline, blocked, too slow): the places still show, on the
   * plain background.
   * @param {unknown} reason
   */
  const fallBack = (reason) => {
    if (!styleUrl || styleReady || fellBack) return;
    fellBack = true;
    console.warn(`The map style ${styleUrl} could not be loaded; drawing a plain background.`, reason);
    map.setStyle(PLAIN_STYLE, { diff: false });
  };
  setTimeout(() => fallBack(`no answer within ${STYLE_WAIT_MS / 1000} s`), STYLE_WAIT_MS);
  map.on("error", (event) => {
    if (!styleReady) return fallBack(event.error);
    // A tile the API refused (the key revoked meanwhile, too many requests): say so over the map.
    if ("sourceId" in event && event.sourceId === SOURCE) show("error", "Some places could not be loaded.");
  });
  handleClicks(map, key);

  let places = 0;
  try {
    const list = await getJson(apiUrl(`/v3.0/lists/${listId}`, {}, key));
    document.title = `${list.name} – map`;
    tileJson = /** @type {TileJson} */ (await getJson(apiUrl("/v3.0/tiles.json", { list: listId }, key)));
    places = await countPlaces(listId, key);
  } catch (error) {
    show("error", error instanceof ApiFailure ? error.message : "The map could not be loaded.");
    if (!(error instanceof ApiFailure)) console.error(error);
    return;
  }
  body.dataset.loaded = String(places);
  if (places > 0) {
    const [west, south, east, north] = tileJson.bounds;
    map.fitBounds(
      [
        [west, south],
        [east, north],
      ],
      { padding: 48, maxZoom: 15, animate: false },
    );
  }
  // Ready once the list's tiles in view are in and drawn. Not at "idle": the tiles are live (they expire
  // within seconds, docs/publishing-maps.md), so MapLibre keeps renewing them, and a busy map may never idle.
  const whenDrawn = () => {
    if (!map.getSource(SOURCE) || !map.isSourceLoaded(SOURCE)) return;
    map.off("sourcedata", whenDrawn);
    map.once("render", () => {
      if (body.dataset.state === "loading") show("ready", places === 0 ? "This list has no places yet." : "");
    });
    map.triggerRepaint();
  };
  map.on("sourcedata", whenDrawn);
  addIfReady();
  whenDrawn();
}

await main();
