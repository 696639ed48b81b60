import type { D1Migration } from "@cloudflare/vitest-plugin";

// Bindings only the tests have.
declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      TEST_RATE_LIMIT_BINDINGS: { name: string; simple: { limit: number; period: number } }[];
    }
  }
}
