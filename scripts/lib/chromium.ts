/**
 * Debian's Chromium, driven by playwright-core, for the browser tests
 * (scripts/test-docs.ts, scripts/test-map.ts): one set of launch settings, so
 * every test runs the browser the same way.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/**
 * Flags for headless Chromium on a machine with no GPU and no network beyond
 * loopback. Nothing phones home (no background networking, component or
 * field-trial updates, sync, QUIC probes). WebGL, which MapLibre needs, runs on
 * the CPU through ANGLE's SwiftShader backend: Chromium offers it to pages only
 * when asked with `--enable-unsafe-swiftshader` ("unsafe" because a page's
 * shaders then run in a software rasterizer; these are our own test pages).
 * `--disable-gpu` is left out: with it WebGL falls back to a slower path that
 * logs a "GPU stall due to ReadPixels" warning on every map frame read.
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--use-angle=swiftshader",
  "--enable-unsafe-swiftshader",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Starts Chromium headless with a fresh profile in `profile` (a folder the caller removes). */
export async function launchChromium(
  profile: string,
  viewport: { width: number; height: number } = { width: 1280, height: 1000 },
): Promise<BrowserContext> {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`);
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
  });
}

/** Collects the URL of every request the browser makes to anywhere but this machine (127.0.0.1), data: aside. */
export function outsideRequests(context: BrowserContext): string[] {
  const outside: string[] = [];
  context.on("request", (request) => {
    const { hostname, protocol } = new URL(request.url());
    if (protocol !== "data:" && protocol !== "blob:" && hostname !== "127.0.0.1") outside.push(request.url());
  });
  return outside;
}
