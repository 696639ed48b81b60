/**
 * What the OpenAPI document is built from, attached to the routes themselves:
 * validators carry their target and schema, the token middleware says that a
 * path needs a token, and each route's final handler carries its operation
 * (summary, responses). The marks are symbol properties set once while the
 * app is built, so they cost nothing per request.
 */
import type { Context, ValidationTargets } from "hono";
import { matchedRoutes } from "hono/route";
import type { CreateHandlersInterface } from "hono/factory";
import type * as z from "zod";
import type { AppEnv } from "../core/env";
import type { Scope } from "../core/scopes";

const VALIDATION = Symbol("openapi.validation");
const OPERATION = Symbol("openapi.operation");
const TOKEN_REQUIRED = Symbol("openapi.tokenRequired");
const SESSION_REQUIRED = Symbol("openapi.sessionRequired");
const SESSION_OPTIONAL = Symbol("openapi.sessionOptional");
const HIDDEN = Symbol("openapi.hidden");

/**
 * The OpenAPI document's own media type (OpenAPI 3.1 "Media types"), which links to the document name (the
 * OGC landing page's `service-desc`); /v3.0/openapi.json answers in it to clients that ask for it.
 */
export const OPENAPI_MEDIA_TYPE = "application/vnd.oai.openapi+json;version=3.1";

/** A media type by its shape (`type/subtype`), so that a body given by mistake as `{ schema }` does not compile. */
export type MediaType = `${string}/${string}`;

/** What a `validate(target, schema)` middleware checks. */
export type Validation = { target: keyof ValidationTargets; schema: z.ZodType };

/** One documented response: a JSON body (or none), or a body per media type, and headers worth naming. */
export type ResponseSpec = {
  description?: string;
  /** The body's schema; absent for a response without a body (204). */
  schema?: z.ZodType;
  /** The body's media type when it is not `application/json`. */
  mediaType?: string;
  /** The bodies by media type, for a response negotiated between several (JSON and GeoJSON); instead of `schema`. */
  content?: Record<MediaType, z.ZodType>;
  headers?: Record<string, { description: string; schema?: Record<string, unknown> }>;
};

/**
 * The body limit of a route that declares none: JSON without media. A membership batch of 1,000
 * `{"id": <id>}` items is about 25 KB, pretty-printed about 45 KB.
 */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;

/**
 * A body limit for JSON whose strings hold at most `characters` characters: each may take 6 bytes
 * (`\u00e9`: encoders that escape non-ASCII, Python's by default, write every such character so), and
 * 16 KiB more for the rest of the document, its keys, numbers and white space.
 */
export const jsonBodyLimit = (characters: number): number => Math.ceil((6 * characters) / 1024) * 1024 + 16 * 1024;

/** Bytes for people: `64 KiB (65,536 bytes)`. */
export function describeBytes(bytes: number): string {
  const [unit, size] = bytes >= 1024 * 1024 ? ["MiB", bytes / (1024 * 1024)] : ["KiB", bytes / 1024];
  return `${Number(size.toFixed(1))} ${unit} (${bytes.toLocaleString("en-US")} bytes)`;
}

/** What a route does, for readers of the reference; everything else is read off the route. */
export type OperationSpec = {
  summary: string;
  description?: string;
  operationId?: string;
  /** Defaults to the resource segment of the path (`/v3.0/pinpoints/{id}` → `pinpoints`). */
  tags?: string[];
  /** Success (and endpoint-specific error) responses by status; a bare schema means a JSON body. */
  responses: Record<number, z.ZodType | ResponseSpec>;
  /**
   * Problem-details statuses beyond those the route implies (a token: 401 and
   * 403; a validator: 400; a JSON body: 413 and 415; an `{id}`: 404).
   */
  errors?: number[];
  /** Descriptions of path parameters, by name, each with an example value where one helps. */
  pathParams?: Record<string, string | { description: string; example: string }>;
  /**
   * Documents HEAD beside this GET: Hono answers HEAD with the GET route and drops the body, so HEAD has
   * no route of its own to be read off. `except`: statuses of GET that HEAD never answers.
   */
  head?: { summary: string; description?: string; except?: number[] };
  /**
   * Request bodies by media type, beside the validator's (`json`: `application/json`; `form`: both form
   * types): one the route takes before its validator (a GeoJSON import), or, for a media type the
   * validator also reads, the contract where the validator is deliberately looser.
   */
  body?: Record<MediaType, z.ZodType>;
  /**
   * The request body's example by media type: what /docs fills in for "try it", so it must be a request
   * the service accepts (test/openapi-examples.test.ts sends each one). Ids in it name what a newcomer
   * creates first (`pinpoint: 1`).
   */
  examples?: Partial<Record<MediaType, unknown>>;
  /**
   * Takes a publishable key as well as an access token (src/auth/publishable-keys.ts): a public read.
   * `across-accounts`: its answer shows other accounts' content too (categories), so a public cache
   * must renew it after any account's category write (src/http/middleware/public-cache.ts).
   */
  publishable?: true | "across-accounts";
  /**
   * The largest body the route reads (http/body.ts), refused with 413 on its Content-Length before any
   * byte is read, and while reading one that has none: `DEFAULT_MAX_BODY_BYTES` when absent, or
   * `"MAX_BODY_BYTES"`, the configured maximum, for routes that take a media file. No route reads more
   * than `MAX_BODY_BYTES`.
   */
  maxBodyBytes?: number | "MAX_BODY_BYTES";
  /**
   * The scope a token needs, where it is not the method's (src/core/scopes.ts): `read` for a write that
   * changes only the caller's own standing (leaving an account), which a person whose tokens only read may do.
   */
  scope?: Scope;
};

type Marked = {
  [VALIDATION]?: Validation;
  [OPERATION]?: OperationSpec;
  [TOKEN_REQUIRED]?: true;
  [SESSION_REQUIRED]?: true;
  [SESSION_OPTIONAL]?: true;
  [HIDDEN]?: true;
};

/** Marks a validator middleware with what it validates. */
export function markValidation<M extends object>(middleware: M, validation: Validation): M {
  return Object.assign(middleware, { [VALIDATION]: validation });
}

/** Marks the middleware that demands an access token (with the method's scope) on every path under it. */
export function markTokenRequired<M extends object>(middleware: M): M {
  return Object.assign(middleware, { [TOKEN_REQUIRED]: true as const });
}

/** Marks the middleware that demands a signed-in session's cookie (and, on writes, its CSRF token). */
export function markSessionRequired<M extends object>(middleware: M): M {
  return Object.assign(middleware, { [SESSION_REQUIRED]: true as const });
}

/** Marks the middleware that checks a session's cookie when one is sent, and serves a request without it signed out. */
export function markSessionOptional<M extends object>(middleware: M): M {
  return Object.assign(middleware, { [SESSION_OPTIONAL]: true as const });
}

/**
 * Documents a route: `.get("/", ...operation(spec)(validate(...), async (c) => ...))`.
 * It returns Hono's own `createHandlers` (so `c.req.valid` stays typed), which
 * hands the handlers back unchanged after marking the last one with `spec`.
 * Give the route's path as `Path` where a handler reads a path parameter by name.
 */
export function operation<Path extends string = string>(spec: OperationSpec): CreateHandlersInterface<AppEnv, Path> {
  return ((...handlers: object[]) => {
    Object.assign(handlers[handlers.length - 1]!, { [OPERATION]: spec });
    return handlers;
  }) as CreateHandlersInterface<AppEnv, Path>;
}

/** Keeps a route out of the reference (the reference page itself). */
export function hidden<H extends object>(handler: H): H {
  return Object.assign(handler, { [HIDDEN]: true as const });
}

/** The marks a route handler carries. */
export function marksOf(handler: unknown): {
  validation?: Validation;
  operation?: OperationSpec;
  tokenRequired: boolean;
  sessionRequired: boolean;
  sessionOptional: boolean;
  hidden: boolean;
} {
  const marked = handler as Marked;
  return {
    validation: marked[VALIDATION],
    operation: marked[OPERATION],
    tokenRequired: marked[TOKEN_REQUIRED] === true,
    sessionRequired: marked[SESSION_REQUIRED] === true,
    sessionOptional: marked[SESSION_OPTIONAL] === true,
    hidden: marked[HIDDEN] === true,
  };
}

/** The operation of the route a request matched, from any middleware before it runs. */
export function matchedOperation(c: Context): OperationSpec | undefined {
  for (const route of matchedRoutes(c)) {
    const spec = (route.handler as Marked)[OPERATION];
    if (spec) return spec;
  }
  return undefined;
}

/**
 * Whether the route a request matched reads a request body: it validates one, or its operation names the
 * bodies it takes (the OpenAPI document's `requestBody` says the same).
 */
export function readsBody(c: Context): boolean {
  return matchedRoutes(c).some(({ handler }) => {
    const { [VALIDATION]: validation, [OPERATION]: spec } = handler as Marked;
    return validation?.target === "json" || validation?.target === "form" || spec?.body !== undefined;
  });
}
