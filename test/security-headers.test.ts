/**
 * Security headers (src/http/middleware/security-headers.ts) on every kind of response:
 * successes, problems, 405s, preflights, the token endpoint's own errors,
 * media and the reference page; media loadable by `<img>` on other origins,
 * and /docs with a policy that allows its one inline script by hash only.
 */
import { describe, expect, it } from "vitest";
import { call, caller, createPinpoint } from "./helpers";
import { mediaFile } from "./media-fixtures";

const who = await caller();

async function sample(): Promise<Record<string, Response>> {
  const pinpoint = await createPinpoint(who, { media_file: mediaFile() });
  const mediaPath = new URL(pinpoint.media_url as string).pathname;
  return {
    "GET a pinpoint": await who.get(`/v3.0/pinpoints/${pinpoint.id}`),
    "POST a list": await who.send("POST", "/v3.0/lists", { name: "Headers" }),
    "401 problem": await call("/v3.0/pinpoints"),
    "404 problem": await call("/nowhere"),
    "405 problem": await call("/v3.0/pinpoints", { method: "PATCH" }),
    preflight: await call("/v3.0/pinpoints", {
      method: "OPTIONS",
      headers: { Origin: "https://maps.example", "Access-Control-Request-Method": "POST" },
    }),
    "token endpoint error": await call("/v3.0/oauth2/token", { method: "POST" }),
    "OpenAPI document": await call("/v3.0/openapi.json"),
    "reference page": await call("/docs"),
    media: await call(mediaPath),
    "missing media": await call("/media/m/0123456789abcdef0123456789abcdef.png"),
  };
}

describe("security headers", () => {
  it("are on every response, and X-Powered-By never is", async () => {
    for (const [what, response] of Object.entries(await sample())) {
      await response.body?.cancel();
      const header = (name: string) => response.headers.get(name);
      expect(header("X-Content-Type-Options"), what).toBe("nosniff");
      expect(header("Referrer-Policy"), what).toBe("no-referrer");
      expect(header("X-Frame-Options"), what).toBe("DENY");
      expect(header("Strict-Transport-Security"), what).toBe("max-age=31536000");
      expect(header("Content-Security-Policy"), what).toMatch(/(^|; )default-src 'none'(;|$)/);
      expect(header("Content-Security-Policy"), what).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
      expect(header("X-Powered-By"), what).toBeNull();
      // Media is for <img> on any origin; everything else is read through CORS, which CORP does not govern.
      expect(header("Cross-Origin-Resource-Policy"), what).toBe(what === "media" ? "cross-origin" : "same-origin");
    }
  });

  it("let the reference page run its own inline script, and only that one", async () => {
    const response = await call("/docs");
    const html = await response.text();
    const policy = response.headers.get("Content-Security-Policy")!;
    const scriptSrc = policy.split("; ").find((directive) => directive.startsWith("script-src "))!;
    expect(scriptSrc).not.toContain("unsafe-inline");
    const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(inline).toHaveLength(1);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(inline[0]));
    const hash = btoa(String.fromCharCode(...new Uint8Array(digest)));
    expect(scriptSrc.split(" ").slice(1).sort()).toEqual(["'self'", `'sha256-${hash}'`].sort());
    // Scripts with a src come from this origin.
    for (const [, src] of html.matchAll(/<script src="([^"]+)"/g)) expect(src).toMatch(/^\/docs\//);
  });
});
