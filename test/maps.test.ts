/**
 * The map page (src/maps/): GET /maps/{list_id}?key=pk_… answers a small HTML
 * page whose policy lets it run only its own scripts, styles and MapLibre's
 * worker from this origin, talk to this origin (and the configured style's),
 * and be framed by the key's origins; bad ids and keys are problems as
 * everywhere else.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../src/app";
import { parseConfig } from "../src/core/config";
import { mapPolicy } from "../src/maps/page";
import { BASE, call, json } from "./helpers";

const KEY = "pk_test_0123456789abcdefABCDEF-_";

/** The policy as a map from directive to its sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy.split("; ").map((directive) => {
      const [name = "", ...sources] = directive.split(" ");
      return [name, sources];
    }),
  );
}

/** The app with some [vars] changed, as config.test.ts does. */
async function fetchWith(vars: Record<string, string>, path: string): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await app.fetch(new Request(new URL(path, BASE)), { ...env, ...vars } as Cloudflare.Env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("GET /maps/{list_id}", () => {
  it("answers the page: HTML naming only static assets of this origin, no inline script or style", async () => {
    const response = await call(`/maps/7?key=${KEY}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/html; charset=utf-8$/i);
    const html = await response.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts).toHaveLength(1);
    expect(scripts[0]![1]).toContain('type="module" src="/maps/map.js"');
    expect(scripts[0]![2]).toBe("");
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    for (const [, href] of html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)) expect(href).toMatch(/^\/maps\//);
    expect(html).toContain('data-style-url=""');
  });

  it("has a strict policy, framed by anyone while the key names no origins, and no X-Frame-Options", async () => {
    const response = await call(`/maps/7?key=${KEY}`);
    await response.body?.cancel();
    const policy = directives(response.headers.get("Content-Security-Policy")!);
    expect(Object.fromEntries(policy)).toEqual({
      "default-src": ["'none'"],
      "script-src": ["'self'"],
      "style-src": ["'self'"],
      "worker-src": ["'self'"],
      "connect-src": ["'self'"],
      "img-src": ["'self'", "data:", "blob:"],
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
    const slashed = await call(`/maps/7/?key=${KEY}`);
    expect(slashed.status).toBe(200);
    await slashed.body?.cancel();
    const head = await call(`/maps/7?key=${KEY}`, { method: "HEAD" });
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
    const post = await call(`/maps/7?key=${KEY}`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("Allow")).toContain("GET");
    await post.body?.cancel();
  });

  it("answers 400 naming `key` when it is missing or not a publishable key", async () => {
    for (const query of ["", "?key=", "?key=sk_live_abc", "?key=pk_", "?key=pk_a%20b", "?access_token=pk_abc"]) {
      const response = await call(`/maps/7${query}`);
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
    const response = await fetchWith(vars, `/maps/7?key=${KEY}`);
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
});

describe("the map page's policy", () => {
  const config = parseConfig({});

  it("is framed only by the key's origins when it names some", () => {
    const policy = directives(mapPolicy(config, ["https://guide.example", "http://127.0.0.1:8080"]));
    expect(policy.get("frame-ancestors")).toEqual(["https://guide.example", "http://127.0.0.1:8080"]);
  });

  it("is framed by nobody when none of the key's origins can be written into the policy", () => {
    for (const bad of ["https://a.example; script-src *", "*", "'self'", "javascript:x", "https://a.example b"]) {
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
