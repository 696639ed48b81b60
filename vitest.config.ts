import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";

// Tests run inside workerd with real (local) D1 and R2 bindings from wrangler.toml.
export default defineConfig({
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          TOKEN_SIGNING_KEY: "test-signing-key-0123456789abcdef0123456789",
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          // The [[ratelimits]] bindings as configured, to check that [vars] states the same limits.
          TEST_RATE_LIMIT_BINDINGS: unstable_readConfig({ config: "./wrangler.toml" }).ratelimits,
        },
      },
    })),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    // Needs three shards: vitest.shards.config.ts runs it.
    exclude: ["test/shards.test.ts"],
    setupFiles: ["./test/setup.ts"],
    // Tests that apply every migration or race dozens of requests take seconds; on a shared
    // 2-core machine the 5 s default fails them for load, not for a fault.
    testTimeout: 30_000,
    // The per-request log line (src/http/logging.ts) would bury test output; test/logging.test.ts checks it.
    onConsoleLog: (log) => !log.includes('"message":"request"'),
  },
});
