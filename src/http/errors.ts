/**
 * The app's `onError` and `notFound`: every failure leaves as problem details,
 * and a 5xx never shows a stack trace or SQL (it is logged with the request id
 * instead).
 */
import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "../core/env";
import { ApiError, problemCodes, problemType, type ProblemCode } from "../core/problem";
import { explainMissing, MissingHere } from "../db/ownership";
import { jsonErrorOffset, lineAndColumn } from "./json-position";

/** The problem details body (RFC 9457 §3) of an `ApiError`. */
export function problemBody(error: ApiError, instance: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: problemType(error.code),
    title: problemCodes[error.code].title,
    status: error.status,
    detail: error.detail,
    instance,
  };
  if (error.options.errors) body.errors = error.options.errors;
  return body;
}

function render(c: Context<AppEnv>, error: ApiError): Response {
  for (const [name, value] of Object.entries(error.options.headers ?? {})) c.header(name, value);
  c.header("Content-Type", "application/problem+json");
  return c.body(JSON.stringify(problemBody(error, c.req.path)), error.status);
}

const codeForStatus: Partial<Record<number, ProblemCode>> = {
  400: "malformed_json",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  413: "payload_too_large",
  415: "unsupported_media_type",
};

/** Hono's validator says only "Malformed JSON in request body"; the text is still cached, so say where. */
async function malformedJson(c: Context<AppEnv>): Promise<ApiError> {
  const text = await (c.req.bodyCache as { text?: Promise<string> }).text?.catch(() => undefined);
  const offset = text === undefined ? -1 : jsonErrorOffset(text);
  const where =
    text === undefined || offset < 0
      ? ""
      : offset >= text.length
        ? ` It ends too early (${lineAndColumn(text, offset)}).`
        : ` It stops being JSON at ${lineAndColumn(text, offset)} (character ${offset + 1}).`;
  return new ApiError("malformed_json", `The request body is not valid JSON.${where}`);
}

export const onError: ErrorHandler<AppEnv> = async (error, c) => {
  if (error instanceof MissingHere) return render(c, await explainMissing(error));
  if (error instanceof ApiError) return render(c, error);
  // A write refused because its account is moving (src/db/client.ts), wrapped by drizzle's query error.
  for (let cause: unknown = error.cause; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof ApiError && cause.code === "account_moving") return render(c, cause);
  }
  // Hono's own validator reports unparsable JSON this way.
  if (error instanceof HTTPException && error.status === 400 && /^Malformed JSON/.test(error.message)) {
    return render(c, await malformedJson(c));
  }
  if (error instanceof HTTPException && codeForStatus[error.status]) {
    return render(c, new ApiError(codeForStatus[error.status]!, error.message));
  }
  console.error(
    JSON.stringify({
      level: "error",
      request_id: c.var.requestId,
      method: c.req.method,
      path: c.req.path,
      error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
    }),
  );
  return render(
    c,
    new ApiError("internal_error", `Something went wrong on our side; quote request id ${c.var.requestId}.`),
  );
};

/** What an unknown path answers: also what a path answers that must look unknown (src/operator/auth.ts). */
export function noResourceAt(path: string): ApiError {
  return new ApiError("not_found", `No resource at ${path}.`);
}

/**
 * 404 for a path no route has. A path some route has, asked with another method, never gets here: it is
 * a 405, answered before the credential check (http/middleware/allowed-methods.ts).
 */
export const notFound: NotFoundHandler<AppEnv> = (c) => render(c, noResourceAt(c.req.path));
