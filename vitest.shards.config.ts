import { testConfig } from "./vitest.config";

/**
 * The suite again, with the directory and two more shards (docs/scaling.md): test/helpers.ts places the
 * tests' accounts on the three in turn, and test/setup.ts migrates every one. Left out are the files
 * whose subject does not depend on which database holds an account's rows; they run once, in
 * `npm run test:unit`. A new test file runs in both unless it is named here.
 */
const SAME_ON_ANY_SHARD = [
  // Migrations applied to a database of the test's own: the same statements on every shard.
  "migrations",
  "search-migration",
  "actors-migration",
  // The HTTP layer and the OpenAPI document, decided before a request reaches a database.
  "allowed-methods",
  "body-read",
  "bundle",
  "byte-limits",
  "config",
  "etag",
  "logging",
  "not-configured",
  "openapi",
  "openapi-conformance",
  "openapi-examples",
  "route-security",
  "security-headers",
  "transport",
  // Functions without a database.
  "keyset",
  "linear-text",
  "tile-cells",
  // The directory alone: people, their sessions, clients and tokens.
  "clients",
  "key-rotation",
  "passkeys",
  "people-cli",
  "person-token",
  "rate-limit",
  "sessions",
  "sign-in",
  "token-endpoint",
  "totp",
  // Scripts run on one database, and queries test/search-pinpoints.test.ts runs on every shard.
  "nearest-poles",
  "search-scripts",
  "seed",
];

export default testConfig(
  { SHARD_1: "poi-content-shard-1", SHARD_2: "poi-content-shard-2" },
  SAME_ON_ANY_SHARD.map((name) => `test/${name}.test.ts`),
);
