import { testConfig } from "./vitest.config";

// The whole suite again, with the directory and two more shards (docs/scaling.md): test/helpers.ts
// places the tests' accounts on the three in turn, and test/setup.ts migrates every one.
export default testConfig({ SHARD_1: "poi-content-shard-1", SHARD_2: "poi-content-shard-2" });
