/**
 * The errors the service reports: every failure is an `ApiError` with a code
 * from the one table below. Any layer may throw one (the data layer's
 * ownership checks do); http/errors.ts renders it as RFC 9457 problem details.
 * The token endpoint uses RFC 6749 bodies instead (see auth/oauth.ts).
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** Machine-readable problem codes, their HTTP status and their title. */
export const problemCodes = {
  bad_request: { status: 400, title: "Bad request" },
  validation_failed: { status: 400, title: "The request has invalid fields" },
  invalid_credentials: { status: 400, title: "The credentials do not match" },
  malformed_json: { status: 400, title: "The request body is not valid JSON" },
  invalid_cursor: { status: 400, title: "The page cursor is invalid" },
  passkey_not_accepted: { status: 400, title: "The passkey's answer was not accepted" },
  unauthorized: { status: 401, title: "Authentication required" },
  invalid_token: { status: 401, title: "The access token is invalid" },
  forbidden: { status: 403, title: "Access to this resource is forbidden" },
  insufficient_scope: { status: 403, title: "The access token lacks the required scope" },
  role_forbidden: { status: 403, title: "Your role does not allow this" },
  person_required: { status: 403, title: "Only a person may do this" },
  csrf_failed: { status: 403, title: "The request did not come from this service's own pages" },
  owner_required: { status: 403, title: "Only an owner of the account may do this" },
  invitation_email_mismatch: { status: 403, title: "The invitation is for another email address" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  conflict: { status: 409, title: "Conflict" },
  last_credential: { status: 409, title: "The last way to sign in cannot be removed" },
  idempotency_key_in_use: { status: 409, title: "A request with this idempotency key is still being processed" },
  last_owner: { status: 409, title: "An account keeps at least one owner" },
  already_member: { status: 409, title: "The person already has this access" },
  sign_in_to_accept: { status: 409, title: "A person with this email address exists: sign in to accept" },
  client_revoked: { status: 409, title: "The client was revoked" },
  cursor_expired: { status: 410, title: "The change feed cursor is older than the retention window" },
  idempotency_answer_unreadable: { status: 410, title: "The answer kept for this idempotency key cannot be read" },
  invitation_used: { status: 410, title: "The invitation was already accepted" },
  invitation_expired: { status: 410, title: "The invitation has expired" },
  invitation_revoked: { status: 410, title: "The invitation was revoked" },
  precondition_failed: { status: 412, title: "Precondition failed" },
  payload_too_large: { status: 413, title: "Payload too large" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  idempotency_key_reused: { status: 422, title: "The idempotency key was used for a different request" },
  tile_too_dense: { status: 422, title: "Too many places may match in this tile to count them exactly" },
  range_not_satisfiable: { status: 416, title: "Range not satisfiable" },
  too_many_requests: { status: 429, title: "Too many requests" },
  internal_error: { status: 500, title: "Internal server error" },
  not_configured: { status: 503, title: "The service is not configured" },
  account_moving: { status: 503, title: "The account is being moved to another database" },
  text_index_filling: { status: 503, title: "Text search is being rebuilt after an update" },
} as const satisfies Record<string, { status: ContentfulStatusCode; title: string }>;

export type ProblemCode = keyof typeof problemCodes;

/** One offending input: `pointer` (RFC 6901) into the JSON body, or a query `parameter`. */
export type FieldError = { pointer: string; detail: string } | { parameter: string; detail: string };

/** The problem `type` URI; each code is documented in docs/errors.md. */
export const problemType = (code: ProblemCode) => `urn:poi-api:problem:${code}`;

export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = "ApiError";
    this.status = problemCodes[code].status;
  }
}

/** A 400 for fields of the body, one entry per field (JSON Pointer into the body). */
export function fieldError(pointer: string, detail: string): ApiError {
  return new ApiError("validation_failed", `${pointer.slice(1) || "body"}: ${detail}`, {
    errors: [{ pointer, detail }],
  });
}

export function notFound(what = "resource"): ApiError {
  return new ApiError("not_found", `The ${what} does not exist.`);
}

export function forbidden(what = "resource"): ApiError {
  return new ApiError("forbidden", `The ${what} belongs to another account.`);
}
