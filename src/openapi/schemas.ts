/**
 * The problem details every error carries, as a schema for the reference:
 * `problemBody` builds them without one. Built from the code table itself;
 * test/openapi.test.ts checks real error responses against it.
 */
import * as z from "zod";
import { problemCodes, problemType, type ProblemCode } from "../core/problem";

const fieldError = z.union([
  z.object({ pointer: z.string(), detail: z.string() }).meta({ description: "JSON Pointer into the request body" }),
  z.object({ parameter: z.string(), detail: z.string() }).meta({ description: "A query parameter" }),
]);

/** RFC 9457 problem details, as `problemBody` renders an `ApiError`. */
export const problemJson = z
  .object({
    type: z.enum((Object.keys(problemCodes) as ProblemCode[]).map(problemType)),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string(),
    instance: z.string().meta({ description: "The request path" }),
    errors: z.array(fieldError).optional().meta({ description: "One entry per offending field (400)" }),
  })
  .meta({ id: "Problem" });
