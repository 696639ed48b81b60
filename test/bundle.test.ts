/// <reference types="vite/client" />
/**
 * The bundle keeps only the parts of zod in use (src/shims/zod-for-drizzle-zod.ts):
 * every member drizzle-zod calls on its `z` must be in the subset it is
 * bundled against, or the deployed Worker would fail where the tests pass.
 */
import drizzleZodSource from "../node_modules/drizzle-zod/index.mjs?raw";
import { describe, expect, it } from "vitest";
import { z } from "../src/shims/zod-for-drizzle-zod";

describe("zod subset for drizzle-zod", () => {
  it("has every member drizzle-zod uses", () => {
    // drizzle-zod names its zod `z`, `z$1` or `zod`: collect `<name>.member` and `<name>.coerce.member`.
    const used = new Set<string>();
    for (const match of drizzleZodSource.matchAll(/\b(?:z|z\$1|zod)\.([A-Za-z]+)(?:\.([A-Za-z]+))?/g)) {
      used.add(match[1] === "coerce" && match[2] ? `coerce.${match[2]}` : match[1]!);
    }
    expect(used.size).toBeGreaterThan(10);
    const subset = z as unknown as Record<string, Record<string, unknown>>;
    const missing = [...used].filter((name) => {
      const [head, member] = name.split(".") as [string, string | undefined];
      return member ? typeof subset[head]?.[member] !== "function" : subset[head] === undefined;
    });
    expect(missing).toEqual([]);
  });
});
