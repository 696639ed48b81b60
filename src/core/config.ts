/**
 * Deploy-specific settings, parsed once per isolate from wrangler.toml
 * `[vars]` (see README "Configuration"). A missing or malformed value falls
 * back to its safe default rather than failing requests.
 */
export type Config = {
  tokenTtlSeconds: number;
  maxBodyBytes: number;
  maxMediaBytes: number;
  mediaTypes: ReadonlySet<string>;
  corsOrigins: readonly string[];
  mediaPublicBaseUrl: string | null;
};

export const defaults = {
  tokenTtlSeconds: 36_000,
  maxBodyBytes: 15 * 1024 * 1024,
  maxMediaBytes: 10 * 1024 * 1024,
  mediaTypes: "image/jpeg,image/png,image/gif,image/webp,image/avif,video/mp4",
  corsOrigins: "*",
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

export function parseConfig(env: Partial<Record<string, unknown>>): Config {
  const str = (key: string) => (typeof env[key] === "string" ? (env[key] as string) : undefined);
  const base = str("MEDIA_PUBLIC_BASE_URL")?.trim().replace(/\/+$/, "");
  return {
    tokenTtlSeconds: positiveInt(str("TOKEN_TTL_SECONDS"), defaults.tokenTtlSeconds),
    maxBodyBytes: positiveInt(str("MAX_BODY_BYTES"), defaults.maxBodyBytes),
    maxMediaBytes: positiveInt(str("MAX_MEDIA_BYTES"), defaults.maxMediaBytes),
    mediaTypes: new Set(list(str("MEDIA_TYPES"), defaults.mediaTypes).map((t) => t.toLowerCase())),
    corsOrigins: list(str("CORS_ORIGINS"), defaults.corsOrigins),
    mediaPublicBaseUrl: base ? base : null,
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
