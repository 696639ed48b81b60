/**
 * Bundled in place of `zod/v4` (wrangler.toml `[alias]`), which only
 * drizzle-zod imports. drizzle-zod uses zod's namespace object `z` as a value,
 * and a namespace used as a value keeps every export of zod in the bundle,
 * its ~350 KB of error-message locales included (80 KB of the gzip size).
 * This object holds just the members drizzle-zod calls, so the bundler drops
 * the rest; test/bundle.test.ts fails if drizzle-zod starts calling another.
 * Our own modules import zod as `import * as z from "zod"`, which the bundler
 * can tree-shake member by member. In shims/, not in a layer of the app: no
 * module of src/ imports it; the bundler links it in for drizzle-zod.
 */
import {
  any,
  array,
  bigint,
  boolean,
  coerce,
  custom,
  date,
  enum as enumSchema,
  int,
  null as nullSchema,
  number,
  object,
  record,
  string,
  tuple,
  union,
  uuid,
} from "zod";

export const z = {
  any,
  array,
  bigint,
  boolean,
  coerce,
  custom,
  date,
  enum: enumSchema,
  int,
  null: nullSchema,
  number,
  object,
  record,
  string,
  tuple,
  union,
  uuid,
};
