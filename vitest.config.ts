import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";

const wrangler = unstable_readConfig({ config: "./wrangler.toml" });

/**
 * Small limits with a 10 s window (the binding's shorter one) for the tests of the limits themselves
 * (test/helpers.ts `smallLimits`): bound beside wrangler.toml's [[ratelimits]] as `SMALL_<name>`, in
 * namespaces of their own, so those tests send tens of requests, not thousands, and wait seconds, not a
 * minute, for a fresh window.
 */
const SMALL_LIMITS: { name: string; variable: string; simple: { limit: number; period: 10 } }[] = [
  { name: "CLIENT_LIMITER", variable: "RATE_LIMIT_CLIENT", simple: { limit: 20, period: 10 } },
  { name: "PUBLIC_LIMITER", variable: "RATE_LIMIT_PUBLIC", simple: { limit: 10, period: 10 } },
  { name: "TOKEN_LIMITER", variable: "RATE_LIMIT_TOKEN", simple: { limit: 8, period: 10 } },
  { name: "TOKEN_ADDRESS_LIMITER", variable: "RATE_LIMIT_TOKEN_ADDRESS", simple: { limit: 5, period: 10 } },
  { name: "SIGN_IN_ADDRESS_LIMITER", variable: "RATE_LIMIT_SIGN_IN_ADDRESS", simple: { limit: 6, period: 10 } },
  { name: "SIGN_IN_EMAIL_LIMITER", variable: "RATE_LIMIT_SIGN_IN_EMAIL", simple: { limit: 4, period: 10 } },
];

/**
 * Tests run inside workerd with real (local) D1 and R2 bindings from wrangler.toml. With `shards`
 * (binding name → database name), the suite but the files `excluded` runs with those databases as
 * further shards (vitest.shards.config.ts).
 */
export function testConfig(shards: Record<string, string> = {}, excluded: string[] = []) {
  const sharded = Object.keys(shards).length > 0;
  return defineConfig({
    // In the checkout rather than node_modules/.vite: checkouts that share one node_modules (git worktrees)
    // would otherwise rebuild each other's pre-bundled dependencies under a running suite.
    cacheDir: ".vite",
    plugins: [
      cloudflareTest(async () => ({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          ...(sharded ? { d1Databases: { DB: "poi-content", ...shards } } : {}),
          ratelimits: Object.fromEntries(
            SMALL_LIMITS.map(({ name, simple }, i) => [`SMALL_${name}`, { namespace_id: String(9001 + i), simple }]),
          ),
          bindings: {
            ...(sharded ? { SHARDS: ["DB", ...Object.keys(shards)].join(",") } : {}),
            TOKEN_SIGNING_KEY: "test-signing-key-0123456789abcdef0123456789",
            // Webhooks deliver to the test receiver on 127.0.0.1 (test/webhook-receiver.ts).
            WEBHOOKS_ALLOW_LOOPBACK: "true",
            TEST_MIGRATIONS: await readD1Migrations("./migrations"),
            // Migration 0012 as databases applied it first (test/search-migration.test.ts).
            TEST_0012_FIRST_VERSION: await readD1Migrations("./test/fixtures/0012-first-version"),
            // The [[ratelimits]] bindings as configured, to check that [vars] states the same limits.
            TEST_RATE_LIMIT_BINDINGS: wrangler.ratelimits,
            TEST_SMALL_LIMITS: SMALL_LIMITS,
            // The queue consumers as configured, to check the names the Worker's code relies on.
            TEST_QUEUE_CONSUMERS: wrangler.queues.consumers,
          },
        },
      })),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      // Need three shards: vitest.shards.config.ts runs them.
      exclude: sharded ? excluded : ["test/shards.test.ts", "test/operator.test.ts"],
      setupFiles: ["./test/setup.ts"],
      // Vitest's default on a machine of n cores is n - 1 files at a time, for tests that run in its own
      // threads; these run in workerd, while the thread mostly waits, so one file per core keeps every
      // core busy (about a third less time on 2 cores).
      maxWorkers: availableParallelism(),
      // Every test file loads the Worker's modules into a fresh isolate, zod's and drizzle's hundreds of
      // files among them, one request to Vite each: bundled into a module each (as wrangler bundles them
      // for deployment), a file starts about a second sooner. Every entry point the code imports is listed:
      // one left out would load a second copy of the package beside the bundle.
      deps: {
        optimizer: {
          ssr: {
            enabled: true,
            include: [
              "zod",
              "drizzle-orm",
              "drizzle-orm/d1",
              "drizzle-orm/sqlite-core",
              "drizzle-zod",
              "@simplewebauthn/server",
            ],
          },
        },
      },
      globalSetup: ["./test/webhook-receiver.ts"],
      // Tests that apply every migration or race dozens of requests take seconds; on a shared
      // 2-core machine the 5 s default fails them for load, not for a fault.
      testTimeout: 30_000,
      // The per-request log line (src/http/middleware/request-log.ts) would bury test output; test/logging.test.ts checks it.
      onConsoleLog: (log) => !log.includes('"message":"request"'),
    },
  });
}

export default testConfig();
