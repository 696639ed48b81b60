import type { D1Migration } from "@cloudflare/vitest-plugin";

declare global {
  namespace Cloudflare {
    // Bindings only the tests have.
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      TEST_0012_FIRST_VERSION: D1Migration[];
      TEST_RATE_LIMIT_BINDINGS: { name: string; simple: { limit: number; period: number } }[];
      /** Each bound as `SMALL_<name>` (vitest.config.ts; test/helpers.ts `smallLimits`). */
      TEST_SMALL_LIMITS: { name: string; variable: string; simple: { limit: number; period: number } }[];
      TEST_QUEUE_CONSUMERS: { queue: string; dead_letter_queue?: string }[];
    }
    // Types `exports` from "cloudflare:workers" after our main module; type-only test glue, kept here so
    // that src/ never imports its own entry point.
    interface GlobalProps {
      mainModule: typeof import("../src/index");
    }
  }
}
