/**
 * The map page (src/maps/): GET /maps/{list_id}?key=pk_… answers a small HTML
 * page whose policy lets it run only its own scripts, styles and MapLibre's
 * worker from this origin, talk to this origin (and the configured style's,
 * OpenFreeMap's by default), and be framed by the key's origins; bad ids and
 * keys are problems as everywhere else, and to a browser a page saying why,
 * which may be framed because it shows nothing of the list.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { parseConfig } from "../src/core/config";
import { mapPolicy, REFUSAL_POLICY, REFUSALS } from "../src/maps/page";
import { BASE, call, caller, createList, fetchWith, json, type Caller } from "./helpers";

let owner: Caller;
let listId = 0;
/** A key for the list with no origins, and one limited to two origins. */
let KEY = "";
let LIMITED = "";

async function createKey(body: Record<string, unknown>): Promise<string> {
  const response = await owner.send("POST", "/v3.0/keys", { name: "map", ...body });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await json<{ key: string }>(response)).key;
}

beforeAll(async () => {
  owner = await caller();
  listId = (await createList(owner, { name: "Published" })).id as number;
  KEY = await createKey({ lists: [listId] });
  LIMITED = await createKey({ lists: [listId], origins: ["https://guide.example", "https://*.maps.example"] });
});

/** The policy as a map from directive to its sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split("; ").map((directive) => {
      const [name = "", ...sources] = directive.split(" ");
      return [name, sources];
    }),
  );
}

describe("GET /maps/{list_id}", () => {
  it("answers the page: HTML naming only static assets of this origin, no inline script or style", async () => {
    const response = await call(`/maps/${listId}?key=${KEY}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/html; charset=utf-8$/i);
    const html = await response.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toContain('type="module" src="/maps/map.js"');
    expect(scripts[0]![2]).toBe("");
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    for (const [, href] of html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)) expect(href).toMatch(/^\/maps\//);
    expect(html).toContain('data-style-url="https://tiles.openfreemap.org/styles/liberty"');
    // The sentences the page's script shows for a refusal of the API are the Worker's own.
    const refusals = /data-refusals="([^"]*)"/.exec(html)?.[1]?.replaceAll("&quot;", '"').replaceAll("&#39;", "'");
    expect(JSON.parse(refusals ?? "null")).toEqual(REFUSALS);
  });

  it("has a strict policy, framed by anyone while the key names no origins, and no X-Frame-Options", async () => {
    const response = await call(`/maps/${listId}?key=${KEY}`);
    await response.body?.cancel();
    const policy = directives(response.headers.get("Content-Security-Policy")!);
    expect(Object.fromEntries(policy)).toEqual({
      "default-src": ["'none'"],
      "script-src": ["'self'"],
      "style-src": ["'self'"],
      "worker-src": ["'self'"],
      // The default style's origin: its style, TileJSON, tiles, glyphs and sprites.
      "connect-src": ["'self'", "https://tiles.openfreemap.org"],
      "img-src": ["'self'", "data:", "blob:", "https://tiles.openfreemap.org"],
      "media-src": ["'self'"],
      "base-uri": ["'none'"],
      "form-action": ["'none'"],
      "frame-ancestors": ["*"],
    });
    expect(response.headers.get("X-Frame-Options")).toBeNull();
    expect(response.headers.get("Cross-Origin-Resource-Policy")).toBe("cross-origin");
    expect(response.headers.get("Referrer-Policy")).toBe("same-origin");
    expect(response.headers.get("Cache-Control")).toBe("private, no-store");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });

  it("works with a trailing slash and for HEAD", async () => {
    const slashed = await call(`/maps/${listId}/?key=${KEY}`);
    expect(slashed.status).toBe(200);
    await slashed.body?.cancel();
    const head = await call(`/maps/${listId}?key=${KEY}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("Content-Security-Policy")).toContain("frame-ancestors *");
  });

  it("answers 404 for an id no list can have, and 405 for other methods", async () => {
    for (const path of ["/maps/abc", "/maps/0", "/maps/-1", "/maps/99999999999999999999", "/maps"]) {
      const response = await call(`${path}?key=${KEY}`);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("Content-Type"), path).toBe("application/problem+json");
      expect(response.headers.get("X-Frame-Options"), path).toBe("DENY");
      await response.body?.cancel();
    }
    const post = await call(`/maps/${listId}?key=${KEY}`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("Allow")).toContain("GET");
    await post.body?.cancel();
  });

  it("answers 400 naming `key` when it is missing or not a publishable key", async () => {
    const shapes = [
      "",
      "?key=",
      "?key=sk_live_abc",
      "?key=pk_",
      "?key=pk_a%20b",
      "?key=pk_short",
      "?access_token=pk_abc",
    ];
    for (const query of shapes) {
      const response = await call(`/maps/${listId}${query}`);
      expect(response.status, query).toBe(400);
      const problem = await json<{ errors: { parameter: string }[] }>(response);
      expect(
        problem.errors.map((e) => e.parameter),
        query,
      ).toEqual(["key"]);
    }
  });

  it("lets the page fetch the configured style's origin and media from their public base URL", async () => {
    const vars = {
      MAP_STYLE_URL: "https://tiles.example/styles/basic.json?token=x&y=<z>",
      MEDIA_PUBLIC_BASE_URL: "https://media.example/poi",
    };
    const response = await fetchWith(vars, `/maps/${listId}?key=${KEY}`);
    const html = await response.text();
    const policy = directives(response.headers.get("Content-Security-Policy")!);
    expect(policy.get("connect-src")).toEqual(["'self'", "https://tiles.example"]);
    expect(policy.get("img-src")).toEqual([
      "'self'",
      "data:",
      "blob:",
      "https://media.example",
      "https://tiles.example",
    ]);
    expect(policy.get("media-src")).toEqual(["'self'", "https://media.example"]);
    // Attribute values are escaped.
    expect(html).toContain('data-style-url="https://tiles.example/styles/basic.json?token=x&amp;y=%3Cz%3E"');
    expect(html).toContain('data-media-origin="https://media.example"');
  });

  it("with an empty MAP_STYLE_URL draws the plain background and lets the page fetch nothing elsewhere", async () => {
    const response = await fetchWith({ MAP_STYLE_URL: "" }, `/maps/${listId}?key=${KEY}`);
    const html = await response.text();
    expect(html).toContain('data-style-url=""');
    const policy = directives(response.headers.get("Content-Security-Policy")!);
    expect(policy.get("connect-src")).toEqual(["'self'"]);
    expect(policy.get("img-src")).toEqual(["'self'", "data:", "blob:"]);
  });
});

describe("GET /maps/{list_id} with the key's rules", () => {
  it("answers 401 for a key that is unknown or expired", async () => {
    const unknown = await call(`/maps/${listId}?key=pk_${"x".repeat(32)}`);
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("WWW-Authenticate")).toMatch(/^Bearer realm="api", error="invalid_token"/);
    await unknown.body?.cancel();
    const soon = await createKey({ lists: [listId], expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    const realNow = clock.now;
    clock.now = () => realNow() + 2 * 3_600_000;
    try {
      const expired = await call(`/maps/${listId}?key=${soon}`);
      expect(expired.status).toBe(401);
      expect((await json<{ detail: string }>(expired)).detail).toMatch(/expired/);
    } finally {
      clock.now = realNow;
    }
  });

  it("answers 404 for a list the key does not publish, whether it exists or not", async () => {
    const unlisted = (await createList(owner, { name: "Not published" })).id as number;
    const stranger = await caller();
    const theirs = (await createList(stranger, { name: "Someone else's" })).id as number;
    for (const id of [unlisted, theirs, 987654321]) {
      const response = await call(`/maps/${id}?key=${KEY}`);
      expect(response.status, String(id)).toBe(404);
      await response.body?.cancel();
    }
  });

  it("with origins: framed by them only, loaded only from them (by Referer)", async () => {
    for (const referer of ["https://guide.example/where/to-go.html", "https://city.maps.example/"]) {
      const response = await call(`/maps/${listId}?key=${LIMITED}`, { headers: { Referer: referer } });
      expect(response.status, referer).toBe(200);
      await response.body?.cancel();
      expect(directives(response.headers.get("Content-Security-Policy")!).get("frame-ancestors")).toEqual([
        "https://guide.example",
        "https://*.maps.example",
      ]);
      expect(response.headers.get("X-Frame-Options")).toBeNull();
    }
    const refused: Record<string, string>[] = [
      {},
      { Referer: "https://evil.example/" },
      { Referer: "https://maps.example/" },
    ];
    for (const headers of refused) {
      const response = await call(`/maps/${listId}?key=${LIMITED}`, { headers });
      expect(response.status, JSON.stringify(headers)).toBe(403);
      // A refusal as problem details (no Accept: text/html) is never framed, by anyone.
      expect(response.headers.get("X-Frame-Options")).toBe("DENY");
      await response.body?.cancel();
    }
  });

  it("with origins: the page's own API requests, from this origin, are answered", async () => {
    // Same-origin GETs carry no Origin; the page's Referrer-Policy makes them name the page.
    const page = `${BASE}/maps/${listId}?key=${LIMITED}`;
    for (const path of [`/v3.0/lists/${listId}`, `/v3.0/pinpoints?list=${listId}&format=geojson`, "/v3.0/events"]) {
      const response = await call(`${path}${path.includes("?") ? "&" : "?"}key=${LIMITED}`, {
        headers: { Referer: page },
      });
      expect(response.status, path).toBe(200);
      await response.body?.cancel();
    }
  });
});

describe("GET /maps/{list_id} refused to a browser", () => {
  const page = { Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

  /** The refusal as a browser's frame gets it: status, the sentence shown, and the headers that matter. */
  async function refusal(path: string, headers: Record<string, string> = {}) {
    const response = await call(path, { headers: { ...page, ...headers } });
    const html = await response.text();
    return {
      status: response.status,
      type: response.headers.get("Content-Type"),
      shown: /<p id="status" class="error" role="status">([^<]*)<\/p>/.exec(html)?.[1],
      html,
      policy: response.headers.get("Content-Security-Policy"),
      frameOptions: response.headers.get("X-Frame-Options"),
      resourcePolicy: response.headers.get("Cross-Origin-Resource-Policy"),
      cache: response.headers.get("Cache-Control"),
      vary: response.headers.get("Vary"),
      authenticate: response.headers.get("WWW-Authenticate"),
    };
  }

  it("is a page saying why, which any site may frame, with the problem's status and headers", async () => {
    const unlisted = (await createList(owner, { name: "Secret list name" })).id as number;
    const cases: [path: string, headers: Record<string, string>, status: number, sentence: string][] = [
      [`/maps/${listId}?key=pk_short`, {}, 400, REFUSALS[400]!],
      [`/maps/${listId}?key=pk_${"x".repeat(32)}`, {}, 401, REFUSALS[401]!],
      [`/maps/${listId}?key=${LIMITED}`, { Referer: "https://evil.example/" }, 403, REFUSALS[403]!],
      [`/maps/${listId}?key=${LIMITED}`, {}, 403, REFUSALS[403]!],
      [`/maps/${unlisted}?key=${KEY}`, {}, 404, REFUSALS[404]!],
    ];
    for (const [path, headers, status, sentence] of cases) {
      const answer = await refusal(path, headers);
      const what = `${path} ${JSON.stringify(headers)}`;
      expect(answer.status, what).toBe(status);
      expect(answer.type, what).toMatch(/^text\/html; charset=utf-8$/i);
      expect(answer.shown?.startsWith(sentence.replaceAll("'", "&#39;")), `${what}: ${answer.shown}`).toBe(true);
      // Nothing of the list, and nothing that runs: only the page's stylesheet.
      expect(answer.html).not.toContain("Secret list name");
      expect(answer.html).not.toContain("Published");
      expect(answer.html).not.toMatch(/<script|\sstyle=|\son[a-z]+=/i);
      expect(answer.policy, what).toBe(REFUSAL_POLICY);
      expect(directives(answer.policy!).get("frame-ancestors")).toEqual(["*"]);
      expect(directives(answer.policy!).get("default-src")).toEqual(["'none'"]);
      expect(answer.frameOptions, what).toBeNull();
      expect(answer.resourcePolicy, what).toBe("cross-origin");
      expect(answer.cache, what).toBe("private, no-store");
      expect(answer.vary, what).toMatch(/\bAccept\b/);
    }
    expect((await refusal(`/maps/${listId}?key=pk_${"y".repeat(32)}`)).authenticate).toMatch(/^Bearer realm="api"/);
  });

  it("stays problem details, never framed, for a client that does not ask for HTML", async () => {
    for (const accept of ["application/json", "application/problem+json", "*/*"]) {
      const response = await call(`/maps/${listId}?key=${LIMITED}`, {
        headers: { Accept: accept, Referer: "https://evil.example/" },
      });
      expect(response.status, accept).toBe(403);
      expect(response.headers.get("Content-Type"), accept).toBe("application/problem+json");
      expect(response.headers.get("X-Frame-Options"), accept).toBe("DENY");
      expect(response.headers.get("Vary"), accept).toMatch(/\bAccept\b/);
      await response.body?.cancel();
    }
  });

  it("the map page itself is still framed only by the key's origins", async () => {
    const response = await call(`/maps/${listId}?key=${LIMITED}`, {
      headers: { ...page, Referer: "https://guide.example/" },
    });
    expect(response.status).toBe(200);
    await response.body?.cancel();
    expect(directives(response.headers.get("Content-Security-Policy")!).get("frame-ancestors")).toEqual([
      "https://guide.example",
      "https://*.maps.example",
    ]);
  });
});

describe("the map page's policy", () => {
  const config = parseConfig({});

  it("is framed only by the key's origins when it names some", () => {
    const origins = ["https://guide.example", "http://127.0.0.1:8080", "https://*.maps.example"];
    expect(directives(mapPolicy(config, origins)).get("frame-ancestors")).toEqual(origins);
  });

  it("is framed by nobody when none of the key's origins can be written into the policy", () => {
    const unusable = [
      "https://a.example; script-src *",
      "*",
      "https://*",
      "'self'",
      "javascript:x",
      "https://a.example b",
    ];
    for (const bad of unusable) {
      expect(directives(mapPolicy(config, [bad])).get("frame-ancestors"), bad).toEqual(["'none'"]);
    }
    expect(directives(mapPolicy(config, ["https://ok.example", "*"])).get("frame-ancestors")).toEqual([
      "https://ok.example",
    ]);
  });

  it("treats an empty origin list like none at all: anyone may frame", () => {
    expect(directives(mapPolicy(config, [])).get("frame-ancestors")).toEqual(["*"]);
    expect(directives(mapPolicy(config, null)).get("frame-ancestors")).toEqual(["*"]);
  });
});
