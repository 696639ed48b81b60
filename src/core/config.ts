/**
 * Deploy-specific settings, parsed once per isolate from wrangler.toml
 * `[vars]` (see docs/operations.md "Configuration"). A missing or malformed value falls
 * back to its safe default rather than failing requests.
 */
import { trimEnd } from "./trim";

/** Requests allowed per key in each period (seconds: 10 or 60, the binding's two windows). */
export type RateLimit = { limit: number; period: 10 | 60 };

export type Config = {
  tokenTtlSeconds: number;
  maxBodyBytes: number;
  maxMediaBytes: number;
  mediaTypes: ReadonlySet<string>;
  corsOrigins: readonly string[];
  mediaPublicBaseUrl: string | null;
  /** The origin clients reach the API at (`https://api.example.com`), for the OpenAPI document; null: the request's. */
  publicOrigin: string | null;
  /** The limits the `[[ratelimits]]` bindings enforce, for the RateLimit headers (src/http/middleware/rate-limit.ts). */
  rateLimits: {
    client: RateLimit;
    public: RateLimit;
    token: RateLimit;
    tokenAddress: RateLimit;
    signInAddress: RateLimit;
    signInEmail: RateLimit;
  };
  /** A signed-in session ends this many seconds after its last request (src/people/sessions.ts). */
  sessionIdleSeconds: number;
  /** A signed-in session ends this many seconds after sign-in, however busy (src/people/sessions.ts). */
  sessionAbsoluteSeconds: number;
  /** How long the change feed keeps tombstones: an older cursor is 410 (src/changes/). */
  changesRetentionDays: number;
  /** The zoom from which every place is its own feature in a vector tile, below it clustered (src/tiles/). */
  tileClusterMaxZoom: number;
  /**
   * The MapLibre style the map page (src/maps/) draws under the places, an
   * absolute http(s) URL (OpenFreeMap's when MAP_STYLE_URL is not set); null,
   * from an empty MAP_STYLE_URL, for the page's own plain background (no tiles).
   */
  mapStyleUrl: string | null;
  /**
   * WEBHOOKS_ALLOW_LOOPBACK: webhooks may deliver to http://127.0.0.1 (local development); honoured only
   * while the API runs on a loopback origin (src/webhooks/targets.ts).
   */
  webhooksAllowLoopback: boolean;
  /** EMAIL_FROM: the sender of invitation emails; null (unset, empty or no address) sends none. */
  emailFrom: string | null;
};

export const defaults = {
  tokenTtlSeconds: 36_000,
  maxBodyBytes: 15 * 1024 * 1024,
  maxMediaBytes: 10 * 1024 * 1024,
  mediaTypes: "image/jpeg,image/png,image/gif,image/webp,image/avif,video/mp4",
  corsOrigins: "*",
  changesRetentionDays: 30,
  tileClusterMaxZoom: 16,
  /** OpenFreeMap's Liberty style: streets, coastlines and labels, no key, no account (https://openfreemap.org). */
  mapStyleUrl: "https://tiles.openfreemap.org/styles/liberty",
  rateLimits: {
    client: { limit: 1200, period: 60 },
    public: { limit: 600, period: 60 },
    token: { limit: 60, period: 60 },
    tokenAddress: { limit: 30, period: 60 },
    signInAddress: { limit: 10, period: 60 },
    signInEmail: { limit: 10, period: 60 },
  },
  /** OWASP Session Management: 2 hours idle for an application of ordinary risk. */
  sessionIdleSeconds: 2 * 3600,
  sessionAbsoluteSeconds: 7 * 24 * 3600,
} as const;

function positiveInt(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

function list(value: string | undefined, fallback: string): string[] {
  const items = (value ?? fallback)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : fallback.split(",");
}

/** A zoom level from 0 to 21: clusters need ids that name their bin, which zoom 22 has no room for. */
function zoom(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && /^\s*\d+\s*$/.test(value) && n <= 21 ? n : fallback;
}

/**
 * An absolute http(s) URL without credentials, as the URL parser writes it;
 * anything else is null. A browser fetches it, so a relative path, another
 * scheme or `user:password@` could only fail there or leak.
 */
function webUrl(value: string | undefined): string | null {
  const text = value?.trim();
  if (!text || !URL.canParse(text)) return null;
  const url = new URL(text);
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.username || url.password) return null;
  return url.href;
}

/** An http(s) origin, scheme and host (and port) only, as `URL.origin` spells it; null for anything else. */
function origin(value: string | undefined): string | null {
  const text = value?.trim();
  if (!text || !URL.canParse(text)) return null;
  const url = new URL(text);
  const bare = url.pathname === "/" && !url.search && !url.hash && !url.username && !url.password;
  return bare && (url.protocol === "https:" || url.protocol === "http:") ? url.origin : null;
}

/** An email address (`local@domain`, no spaces or display name), or null. */
function address(value: string | undefined): string | null {
  const text = value?.trim() ?? "";
  return /^[^\s@<>]+@[^\s@<>.]+(?:\.[^\s@<>.]+)+$/.test(text) ? text : null;
}

/** `"<requests>/<seconds>"`, seconds 10 or 60. */
function rateLimit(value: string | undefined, fallback: RateLimit): RateLimit {
  const match = /^\s*(\d+)\s*\/\s*(10|60)\s*$/.exec(value ?? "");
  const limit = Number(match?.[1]);
  return match && Number.isSafeInteger(limit) && limit > 0 ? { limit, period: Number(match[2]) as 10 | 60 } : fallback;
}

export function parseConfig(env: Partial<Record<string, unknown>>): Config {
  const str = (key: string) => (typeof env[key] === "string" ? (env[key] as string) : undefined);
  const base = trimEnd(str("MEDIA_PUBLIC_BASE_URL")?.trim() ?? "", "/");
  return {
    tokenTtlSeconds: positiveInt(str("TOKEN_TTL_SECONDS"), defaults.tokenTtlSeconds),
    maxBodyBytes: positiveInt(str("MAX_BODY_BYTES"), defaults.maxBodyBytes),
    maxMediaBytes: positiveInt(str("MAX_MEDIA_BYTES"), defaults.maxMediaBytes),
    mediaTypes: new Set(list(str("MEDIA_TYPES"), defaults.mediaTypes).map((t) => t.toLowerCase())),
    corsOrigins: list(str("CORS_ORIGINS"), defaults.corsOrigins),
    mediaPublicBaseUrl: base ? base : null,
    publicOrigin: origin(str("PUBLIC_ORIGIN")),
    changesRetentionDays: positiveInt(str("CHANGES_RETENTION_DAYS"), defaults.changesRetentionDays),
    tileClusterMaxZoom: zoom(str("TILE_CLUSTER_MAXZOOM"), defaults.tileClusterMaxZoom),
    // Not set: the default style. Set but empty (or not a URL a browser may fetch): the plain background.
    mapStyleUrl: webUrl(str("MAP_STYLE_URL") ?? defaults.mapStyleUrl),
    webhooksAllowLoopback: str("WEBHOOKS_ALLOW_LOOPBACK")?.trim().toLowerCase() === "true",
    emailFrom: address(str("EMAIL_FROM")),
    rateLimits: {
      client: rateLimit(str("RATE_LIMIT_CLIENT"), defaults.rateLimits.client),
      public: rateLimit(str("RATE_LIMIT_PUBLIC"), defaults.rateLimits.public),
      token: rateLimit(str("RATE_LIMIT_TOKEN"), defaults.rateLimits.token),
      tokenAddress: rateLimit(str("RATE_LIMIT_TOKEN_ADDRESS"), defaults.rateLimits.tokenAddress),
      signInAddress: rateLimit(str("RATE_LIMIT_SIGN_IN_ADDRESS"), defaults.rateLimits.signInAddress),
      signInEmail: rateLimit(str("RATE_LIMIT_SIGN_IN_EMAIL"), defaults.rateLimits.signInEmail),
    },
    sessionIdleSeconds: positiveInt(str("SESSION_IDLE_SECONDS"), defaults.sessionIdleSeconds),
    sessionAbsoluteSeconds: positiveInt(str("SESSION_ABSOLUTE_SECONDS"), defaults.sessionAbsoluteSeconds),
  };
}

const cache = new WeakMap<object, Config>();

/** The parsed config for this env object (the Worker's bindings); computed once per isolate. */
export function configFor(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    config = parseConfig(env as Record<string, unknown>);
    cache.set(env, config);
  }
  return config;
}
