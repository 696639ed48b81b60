/**
 * The headers of conditional requests, idempotent retries and D1 sessions
 * (docs/offline-and-concurrency.md), added to the document in one
 * pass over its operations, from what each operation already documents:
 * - a 304 answer means the GET takes `If-None-Match`; a 412 means the write
 *   takes `If-Match` (public media take both); either way its 2xx and 304
 *   answers carry the `ETag`, and so does
 *   the 201 of the POST that creates such a resource (the collection above it);
 * - every POST authenticated with an access token takes `Idempotency-Key` (auth/resource-app.ts),
 *   may answer 409, 410 (a kept answer that cannot be read) and 422, and
 *   marks a replay with `Idempotent-Replayed`;
 * - every operation authenticated with an access token takes `X-D1-Bookmark`, refuses one that is
 *   none with a 400 after the credential check (http/middleware/d1-session.ts),
 *   and answers an access token with its session's (problem answers too: the
 *   header is on the shared problem responses), a publishable key without one;
 *   the public operations neither take nor send one. Its shapes are
 *   http/bookmark-header.ts's.
 */
import { BOOKMARK_HEADER, BOOKMARK_PATTERN, ISSUED_BOOKMARK_PATTERN } from "../http/bookmark-header";

type Operation = Record<string, unknown>;
type Responses = Record<string, Record<string, unknown>>;

const ref = (kind: "parameters" | "headers" | "responses", name: string) => ({ $ref: `#/components/${kind}/${name}` });

/**
 * No `example` on these headers: Swagger UI fills a parameter's example into every request it sends, so
 * every POST from /docs would reuse one idempotency key (422 after the first) and every write would send
 * a stale `If-Match` (412). The examples are in the descriptions instead.
 */
export const syncParameters = {
  IfNoneMatch: {
    name: "If-None-Match",
    in: "header",
    description:
      'An `ETag` from an earlier answer, e.g. `"3"`: 304 without a body if the resource has not changed since',
    schema: { type: "string" },
  },
  IfMatch: {
    name: "If-Match",
    in: "header",
    description:
      'Write only if the resource is still at this `ETag`, e.g. `"3"` (or any version, `*`); otherwise 412 and ' +
      "nothing is written",
    schema: { type: "string" },
  },
  IdempotencyKey: {
    name: "Idempotency-Key",
    in: "header",
    description:
      "A fresh random key (1 to 255 visible ASCII characters, e.g. a UUID such as " +
      "`5f0c9a6e-3a61-4d55-9b0e-2f8e0a1c7d42`): a retry with the same key and request gets the first answer " +
      "again, kept 24 hours, and nothing is done twice",
    // The pattern the server checks (http/middleware/idempotency.ts).
    schema: { type: "string", pattern: "^[\\x21-\\x7e]{1,255}$" },
  },
  Bookmark: {
    name: BOOKMARK_HEADER,
    in: "header",
    description:
      "The bookmark of an earlier answer, exactly as given (80 base64url characters): this request reads data " +
      "at least that recent (read-your-writes with D1 read replication). One altered or not issued by this " +
      "service is a 400; D1's own form (`8-8-8-32` hexadecimal), which answers carried before, is accepted " +
      "and not followed",
    schema: { type: "string", pattern: BOOKMARK_PATTERN },
  },
};

export const syncHeaders = {
  ETag: { description: 'The resource\'s version, a strong entity tag such as `"3"`', schema: { type: "string" } },
  IdempotentReplayed: {
    description: "`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`",
    schema: { type: "string", enum: ["true"] },
  },
  Bookmark: {
    description:
      `The D1 session's latest position, sealed (80 base64url characters, different at every answer); send it ` +
      `back in \`${BOOKMARK_HEADER}\` to read your writes. On answers to an access token only`,
    schema: { type: "string", pattern: ISSUED_BOOKMARK_PATTERN },
  },
};

function addParameter(operation: Operation, name: keyof typeof syncParameters): void {
  operation.parameters = [...((operation.parameters as unknown[]) ?? []), ref("parameters", name)];
}

function addHeader(responses: Responses, statuses: string[], name: string, header: keyof typeof syncHeaders): void {
  for (const status of statuses) {
    const response = responses[status];
    if (!response || "$ref" in response) continue;
    response.headers = { ...(response.headers as object), [name]: ref("headers", header) };
  }
}

const successes = (responses: Responses) => Object.keys(responses).filter((s) => /^2\d\d$/.test(s));

export function addSyncHeaders(paths: Record<string, Record<string, Operation>>): void {
  const versioned = (path: string) =>
    Object.entries(paths).some(
      ([other, methods]) =>
        other.startsWith(`${path}/{`) &&
        !other.slice(path.length + 2).includes("/") &&
        "304" in ((methods.get?.responses as Responses) ?? {}),
    );
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const responses = operation.responses as Responses;
      // Operations with an access token; a signed-in browser's, with the session cookie, take none of these.
      const secured = ((operation.security as Record<string, unknown>[] | undefined) ?? []).some((s) => "bearer" in s);
      if ("304" in responses) addParameter(operation, "IfNoneMatch");
      if ("412" in responses) addParameter(operation, "IfMatch");
      if ("304" in responses || "412" in responses)
        addHeader(responses, [...successes(responses), "304"], "ETag", "ETag");
      if (method === "post" && "201" in responses && versioned(path)) addHeader(responses, ["201"], "ETag", "ETag");
      if (method === "post" && secured) {
        addParameter(operation, "IdempotencyKey");
        responses["409"] ??= ref("responses", "Problem409");
        responses["410"] ??= ref("responses", "Problem410");
        responses["422"] ??= ref("responses", "Problem422");
        addHeader(responses, successes(responses), "Idempotent-Replayed", "IdempotentReplayed");
      }
      if (secured) {
        addParameter(operation, "Bookmark");
        responses["400"] ??= ref("responses", "Problem400");
      }
      if (secured) addHeader(responses, Object.keys(responses), BOOKMARK_HEADER, "Bookmark");
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
    }
  }
}
