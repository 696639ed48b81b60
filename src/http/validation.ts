/**
 * Request validation: `validate(target, schema)` is zValidator wrapped once
 * with a hook that turns a ZodError into our 400 problem, one entry per field,
 * so a raw ZodError never reaches a client.
 */
import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import * as z from "zod";
import { ApiError, type FieldError } from "../core/problem";
import { markValidation } from "./route-metadata";

/** zod's `expected` types in the house wording ("must be a number"), not zod's "Invalid input: expected ...". */
const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "an object",
  tuple: "an array",
  record: "an object",
  bigint: "an integer",
  date: "a date",
  null: "null",
};

// A missing field reads better as "is required" than as "expected string, received undefined",
// and a wrong type as "must be a number" beside the house's other messages.
z.config({
  customError: (issue) => {
    if (issue.code !== "invalid_type") return undefined;
    if (issue.input === undefined) return "is required";
    const expected = TYPE_NAMES[issue.expected];
    return expected ? `must be ${expected}${issue.input === null ? ", not null" : ""}` : undefined;
  },
});

/** RFC 6901 JSON Pointer for a zod issue path. */
export function jsonPointer(path: readonly PropertyKey[]): string {
  return path.map((key) => "/" + String(key).replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

function fieldErrors(target: keyof ValidationTargets, issues: readonly z.core.$ZodIssue[]): FieldError[] {
  return issues.map((issue) =>
    target === "json"
      ? { pointer: jsonPointer(issue.path), detail: issue.message }
      : { parameter: String(issue.path[0] ?? target), detail: issue.message },
  );
}

/** A 400 listing every offending field of `target`. */
export function validationError(target: keyof ValidationTargets, issues: readonly z.core.$ZodIssue[]): ApiError {
  return fieldsError(fieldErrors(target, issues));
}

/** A 400 listing `errors`, each offending field or parameter once, as validation reports them. */
export function fieldsError(errors: FieldError[]): ApiError {
  const summary = errors
    .map((e) => `${"pointer" in e ? e.pointer.slice(1) || "body" : e.parameter}: ${e.detail}`)
    .join("; ");
  return new ApiError("validation_failed", summary, { errors });
}

/** zValidator with our 400 hook, marked with its target and schema for the OpenAPI document. */
export const validate = <Target extends keyof ValidationTargets, Schema extends z.ZodType>(
  target: Target,
  schema: Schema,
) =>
  markValidation(
    zValidator(target, schema, (result, c) => {
      // The parsed value is all we need; let the raw text (maybe megabytes of base64) go.
      if (target === "json") delete c.req.bodyCache.text;
      if (!result.success) throw validationError(target, result.error.issues);
    }),
    { target, schema },
  );
