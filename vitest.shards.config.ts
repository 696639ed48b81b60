import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { unstable_readConfig } from "wrangler";

// The whole suite again, with the directory and two more shards (docs/scaling.md): test/helpers.ts
// places the tests' accounts on the three in turn, and test/setup.ts migrates every one.
export default defineConfig({
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        d1Databases: { DB: "poi-content", SHARD_1: "poi-content-shard-1", SHARD_2: "poi-content-shard-2" },
        bindings: {
          SHARDS: "DB,SHARD_1,SHARD_2",
          TOKEN_SIGNING_KEY: "test-signing-key-0123456789abcdef0123456789",
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          TEST_RATE_LIMIT_BINDINGS: unstable_readConfig({ config: "./wrangler.toml" }).ratelimits,
        },
      },
    })),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["./test/setup.ts"],
    testTimeout: 30_000,
    onConsoleLog: (log) => !log.includes('"message":"request"'),
  },
});
