/**
 * The OpenAPI 3.1 document, read off the app's routes (`app.routes`): paths
 * and path parameters from the Hono patterns, query parameters and bodies
 * from the zod schemas the validators use, responses from each route's
 * `operation()` spec, security from the token middleware. Schemas go through
 * zod's own JSON Schema output (draft 2020-12, the dialect of OpenAPI 3.1), so
 * the reference cannot drift from what the service validates and returns.
 * A schema named with `.meta({ id })` where it is defined is shown once under
 * `components.schemas` and referenced; this module knows no resource.
 */
import type { RouterRoute } from "hono/types";
import * as z from "zod";
import { defaults } from "../core/config";
import { problemCodes, problemType, type ProblemCode } from "../core/problem";
import { scopeFor, type Scope } from "../core/scopes";
import { trimEnd } from "../core/trim";
import { BOOKMARK_HEADER } from "../http/bookmark-header";
import {
  DEFAULT_MAX_BODY_BYTES,
  describeBytes,
  marksOf,
  type OperationSpec,
  type ResponseSpec,
  type Validation,
} from "../http/route-metadata";
import { problemJson } from "./schemas";
import { addSyncHeaders, syncHeaders, syncParameters } from "./sync-headers";

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown>;

export type OpenApiDocument = {
  openapi: string;
  info: Record<string, unknown>;
  servers?: { url: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    responses: Record<string, unknown>;
    parameters: Record<string, unknown>;
    headers: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
  };
};

/** Tags in the order the reference shows them, with their descriptions. */
const TAGS: Record<string, string> = {
  authentication: "Access tokens for registered clients (OAuth 2.0 client credentials)",
  people:
    "Signing in as a person: sessions, passwords, the TOTP second factor, and a bearer token from the session " +
    "for every other operation",
  pinpoints: "Places: coordinates, address, description, tags, media",
  lists: "Named collections of pinpoints",
  categories: "Shared icons every client can read and use on its pinpoints",
  events: "What happens at a pinpoint, with one or more dates",
  changes: "What changed since a cursor, for clients that sync and work offline",
  media: "Stored media, public so that an `<img>` can load them",
  tiles: "Vector tiles of your pinpoints (MVT, GeoJSON) and their TileJSON, for map libraries and GIS",
  members: "The people of your account and their roles, for a person's token",
  invitations: "Invite people by email to your account or to one list; accept an invitation",
  collaborators: "People given one list without being members of the account",
  clients: "Your account's clients (client credentials), managed from a person's session",
  reference: "This document",
};

const SUCCESS_DESCRIPTIONS: Record<number, string> = {
  200: "OK",
  201: "Created",
  204: "No content",
  206: "Partial content",
  304: "Not modified",
};

const COMPONENT_REF = "#/components/schemas/";

/**
 * Converts zod schemas, moving those named with `.meta({ id })` where they are
 * defined into `components.schemas` and pointing at them.
 */
class SchemaWriter {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const json = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      // Names (`id`) and descriptions given with `.meta()` where each schema is defined.
      metadata: z.globalRegistry,
      unrepresentable: "any",
      override: ({ jsonSchema }) => {
        // A query parameter read from text by a transform documents what the text stands for (`.meta({
        // inputSchema })`: an integer, four numbers), not the string zod sees, so clients send what it reads.
        const { inputSchema } = jsonSchema;
        delete jsonSchema.inputSchema;
        if (io === "input" && inputSchema && typeof inputSchema === "object") {
          for (const key of Object.keys(jsonSchema)) if (key !== "description") delete jsonSchema[key];
          Object.assign(jsonSchema, inputSchema);
        }
        // A tuple with optional items last (`[longitude, latitude, altitude?]`) as one tuple per length: the
        // same values, but code generators read `prefixItems` as every item required and ignore `minItems`.
        const items = jsonSchema.prefixItems;
        const least = jsonSchema.minItems;
        if (Array.isArray(items) && typeof least === "number" && least < items.length && jsonSchema.items === false) {
          const { description } = jsonSchema;
          for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
          if (description !== undefined) jsonSchema.description = description;
          jsonSchema.oneOf = Array.from({ length: items.length - least + 1 }, (_, i) => ({
            type: "array",
            prefixItems: items.slice(0, least + i),
            items: false,
            minItems: least + i,
            maxItems: least + i,
          }));
        }
        // A format says it; zod's equivalent pattern for date-time is unreadable.
        if (jsonSchema.format && jsonSchema.pattern) delete jsonSchema.pattern;
        // Response bounds come from column storage types (±2^53, ±2^47), not from the API's rules.
        if (io === "output") {
          delete jsonSchema.minimum;
          delete jsonSchema.maximum;
        }
      },
    }) as JsonSchema;
    delete json.$schema;
    const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
    delete json.$defs;
    for (const [id, def] of Object.entries(defs)) {
      const rewritten = rewriteRefs(def) as JsonSchema;
      const existing = this.components[id];
      if (existing && JSON.stringify(existing) !== JSON.stringify(rewritten)) {
        throw new Error(`OpenAPI: schema ${id} differs between its uses (request and response?)`);
      }
      this.components[id] = rewritten;
    }
    return rewriteRefs(json) as JsonSchema;
  }
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === "$ref" && typeof v === "string" && v.startsWith("#/$defs/")
        ? COMPONENT_REF + v.slice("#/$defs/".length)
        : rewriteRefs(v),
    ]),
  );
}

type PathParam = { name: string; pattern: string | null };

/**
 * `/v3.0/pinpoints/:id{[0-9]+}` → `/v3.0/pinpoints/{id}` and its parameters. A pattern that ends in a
 * literal extension (`:y{.+\\.mvt}`) keeps it after the parameter: `{y}.mvt`.
 */
export function openApiPath(honoPath: string): { path: string; params: PathParam[] } {
  const params: PathParam[] = [];
  const segments = honoPath.split("/").map((segment) => {
    const match = /^:(\w+)(?:\{(.+)\})?\??$/.exec(segment);
    if (!match) return segment;
    const extension = /\\\.(\w+)$/.exec(match[2] ?? "");
    params.push({ name: match[1]!, pattern: extension ? null : (match[2] ?? null) });
    return `{${match[1]}}${extension ? `.${extension[1]}` : ""}`;
  });
  const path = segments.join("/");
  return { path: path.length > 1 ? trimEnd(path, "/") : path, params };
}

function pathParamSchema(pattern: string | null): JsonSchema {
  // The digits-only pattern is how every resource id is routed (http/path.ts ID).
  if (pattern === "[0-9]+") return { type: "integer", minimum: 1 };
  return pattern === null || pattern === ".+" ? { type: "string" } : { type: "string", pattern: `^${pattern}$` };
}

function problemResponses(): Record<string, unknown> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const [code, { status }] of Object.entries(problemCodes) as [ProblemCode, { status: number }][]) {
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      `Problem${status}`,
      {
        description: codes.map((code) => `${problemCodes[code].title} (\`${problemType(code)}\`)`).join("; "),
        headers: { ...problemHeaders(status), [BOOKMARK_HEADER]: { $ref: "#/components/headers/Bookmark" } },
        content: {
          "application/problem+json": { schema: { $ref: `${COMPONENT_REF}Problem` }, example: problemExample(codes) },
        },
      },
    ]),
  );
}

/** The headers particular to one problem status. */
function problemHeaders(status: number): Record<string, unknown> {
  if (status === 401)
    return {
      "WWW-Authenticate": {
        description:
          'The challenge: `Bearer realm="api"`, with `error="invalid_token"` when a token was sent; absent on ' +
          "the operations that take the session cookie, for which HTTP defines no challenge",
        schema: { type: "string" },
      },
    };
  if (status === 429)
    return {
      "Retry-After": {
        description: "Seconds to wait before the next request",
        schema: { type: "integer", minimum: 0 },
      },
      RateLimit: {
        description: "The limit exceeded: `<policy>;r=0;t=<seconds>` (draft-ietf-httpapi-ratelimit-headers)",
        schema: { type: "string" },
      },
    };
  return {};
}

/** An example body for one status: its first code, or a field error for a 400. */
function problemExample(codes: ProblemCode[]): Record<string, unknown> {
  const code = codes.includes("validation_failed") ? "validation_failed" : codes[0]!;
  const { status, title } = problemCodes[code];
  return {
    type: problemType(code),
    title,
    status,
    detail:
      code === "validation_failed" ? "latitude: must be between -90 and 90" : `${title}: what happened, for people`,
    instance: "/v3.0/pinpoints/42",
    ...(code === "validation_failed"
      ? { errors: [{ pointer: "/latitude", detail: "must be between -90 and 90" }] }
      : {}),
  };
}

/** The security schemes; the token URL is absolute, on the origin the document is served from. */
export function securitySchemes(origin: string): Record<string, unknown> {
  return {
    oauth2: {
      type: "oauth2",
      description:
        "Client credentials grant (RFC 6749 §4.4): send the client id and secret, get a bearer token. " +
        "GET needs the read scope; POST, PUT and DELETE need write.",
      flows: {
        clientCredentials: {
          tokenUrl: new URL("/v3.0/oauth2/token", origin).toString(),
          scopes: {
            read: "Read your pinpoints, lists and events, and all categories",
            write: "Create, change and delete your content",
          } satisfies Record<Scope, string>,
        },
      },
    },
    bearer: {
      type: "http",
      scheme: "bearer",
      description:
        "An access token from POST /v3.0/oauth2/token, in `Authorization: Bearer <token>`. " +
        "Clients that cannot set headers may send it as the `access_token` query parameter (RFC 6750 §2.3). " +
        "An empty `access_token=` or `key=` is no credential: ignored beside this header.",
    },
    session: {
      type: "apiKey",
      in: "cookie",
      name: "__Host-poi_session",
      description:
        "A signed-in browser's session cookie, set by POST /v3.0/auth/sign-in (`poi_session` when the service " +
        "is reached over plain http, as in local development). Writes also need the session's CSRF token in " +
        "`X-CSRF-Token` (GET /v3.0/auth/session gives it) and must come from this service's own pages. " +
        "POST /v3.0/auth/token turns the session into a bearer token for every other operation.",
    },
    publishableKey: {
      type: "apiKey",
      in: "query",
      name: "key",
      description:
        "A publishable key (`pk_…`) from POST /v3.0/keys, for web pages: it may be public. It reads, on the " +
        "operations that list it, only the lists it publishes, their pinpoints, the events at them and the " +
        "categories, from the web origins it allows. Also accepted as `Authorization: Bearer pk_…`; an empty " +
        "`key=` is no key. " +
        "Answers to it are publicly cacheable (docs/publishing-maps.md).",
    },
  };
}

function derivedOperationId(method: string, path: string): string {
  const words = path
    .split("/")
    .filter((s) => s && !/^v\d/.test(s))
    .map((s) => (s.startsWith("{") ? `By${s.slice(1, 2).toUpperCase()}${s.slice(2, -1)}` : s))
    .map((s) => s.replace(/[^A-Za-z0-9]/g, ""))
    .map((s) => s.slice(0, 1).toUpperCase() + s.slice(1));
  return method.toLowerCase() + words.join("");
}

function defaultTag(path: string): string {
  const [first, second] = path.split("/").filter(Boolean);
  return (first && /^v\d/.test(first) ? second : first) ?? "api";
}

type RouteGroup = { method: string; honoPath: string; handlers: unknown[]; secured: boolean };

/** The document without what depends on the origin it is served from. */
type BaseDocument = Omit<OpenApiDocument, "servers" | "components"> & {
  components: Omit<OpenApiDocument["components"], "securitySchemes">;
};

/** Builds the document, but for its server and token URL, from the app's routes. */
export function buildDocument(routes: readonly RouterRoute[]): BaseDocument {
  const securedPrefixes: string[] = [];
  const groups = new Map<string, RouteGroup>();
  for (const route of routes) {
    if (route.method === "ALL") {
      if (marksOf(route.handler).tokenRequired) securedPrefixes.push(route.path.replace(/\/?\*$/, ""));
      continue;
    }
    const key = `${route.method} ${route.path}`;
    // A token middleware registered after a route never runs for it: Hono runs handlers in the order they
    // were registered, and a route's handler answers without calling on (POST /v3.0/invitations/accept).
    const secured = securedPrefixes.some((p) => route.path === p || route.path.startsWith(`${p}/`));
    const group = groups.get(key) ?? { method: route.method, honoPath: route.path, handlers: [], secured };
    group.handlers.push(route.handler);
    groups.set(key, group);
  }

  const writer = new SchemaWriter();
  const operations: { path: string; method: string; operation: Operation }[] = [];
  for (const { method, honoPath, handlers, secured } of groups.values()) {
    const marks = handlers.map(marksOf);
    if (marks.some((m) => m.hidden)) continue;
    const spec = marks.findLast((m) => m.operation)?.operation;
    const validations = marks.flatMap((m) => (m.validation ? [m.validation] : []));
    // The session cookie where a route needs it, or takes it when it is sent (accepting an invitation).
    const session = marks.some((m) => m.sessionRequired)
      ? "required"
      : marks.some((m) => m.sessionOptional)
        ? "optional"
        : null;
    const { path, params } = openApiPath(honoPath);
    const operation = describeOperation(writer, { method, path, params, validations, secured, session, spec });
    operations.push({ path, method: method.toLowerCase(), operation });
    if (method === "GET" && spec?.head)
      operations.push({ path, method: "head", operation: headOf(operation, spec.head) });
  }
  const order = Object.keys(TAGS);
  const rank = (tag: string) => (order.includes(tag) ? order.indexOf(tag) : order.length);
  const tagOf = (operation: Operation) => (operation.tags as string[])[0]!;
  // Stable: within a tag, routes keep the order the app declares them in.
  operations.sort((a, b) => rank(tagOf(a.operation)) - rank(tagOf(b.operation)));
  const paths: OpenApiDocument["paths"] = {};
  const usedTags: string[] = [];
  for (const { path, method, operation } of operations) {
    for (const tag of operation.tags as string[]) if (!usedTags.includes(tag)) usedTags.push(tag);
    (paths[path] ??= {})[method] = operation;
  }

  addSyncHeaders(paths);
  // The problem responses point at Problem, which no operation converts itself.
  writer.convert(problemJson, "output");

  return {
    openapi: "3.1.0",
    info: {
      title: "POI content API",
      version: "3.0",
      description: [
        "Points of interest (pinpoints), lists, categories and events, with their media.",
        "",
        "**Authorize:** register a client (`npm run clients -- create --account NAME`), then use *Authorize* " +
          "with its client id and secret: the client credentials flow gets a token for you. " +
          "`read` covers GET, `write` covers POST, PUT and DELETE.",
        "",
        "Errors are RFC 9457 problem details (`application/problem+json`); the token endpoint answers " +
          "with RFC 6749 error bodies instead. Collections are paged with `limit` and opaque cursors in " +
          "the `next` and `previous` URLs.",
      ].join("\n"),
    },
    tags: usedTags.map((name) => (TAGS[name] ? { name, description: TAGS[name] } : { name })),
    paths,
    components: {
      schemas: writer.components,
      responses: problemResponses(),
      parameters: syncParameters,
      headers: syncHeaders,
    },
  };
}

type OperationInput = {
  method: string;
  path: string;
  params: PathParam[];
  validations: Validation[];
  secured: boolean;
  /**
   * Called by a signed-in browser with its session cookie (and a CSRF token on writes): `required`, or
   * `optional` where a request without the cookie is served as signed out.
   */
  session: "required" | "optional" | null;
  spec: OperationSpec | undefined;
};

function pathParamAbout(given: string | { description: string; example: string } | undefined) {
  if (given === undefined) return {};
  return typeof given === "string" ? { description: given } : given;
}

/** HEAD for a GET: the same parameters, statuses and headers, and no content in any response. */
function headOf(get: Operation, { summary, description, except = [] }: NonNullable<OperationSpec["head"]>): Operation {
  const responses = Object.fromEntries(
    Object.entries(get.responses as Record<string, Record<string, unknown>>)
      .filter(([status]) => !except.includes(Number(status)))
      .map(([status, response]) => {
        if (typeof response.$ref === "string") return [status, { description: "As for GET, without the body" }];
        const { content: _content, ...rest } = response;
        return [status, rest];
      }),
  );
  return {
    ...get,
    summary,
    ...(description ? { description } : {}),
    operationId: String(get.operationId).replace(/^get/, "head"),
    responses,
  };
}

/** The operation's parameters: its path's, then what its validators take from the query, path and headers. */
function describeParameters(
  writer: SchemaWriter,
  { params, validations, spec }: OperationInput,
): Record<string, unknown>[] {
  const parameters: Record<string, unknown>[] = params.map(({ name, pattern }) => ({
    name,
    in: "path",
    required: true,
    ...pathParamAbout(spec?.pathParams?.[name]),
    schema: pathParamSchema(pattern),
  }));
  for (const { target, schema } of validations) {
    const location = { query: "query", param: "path", header: "header", cookie: "cookie" }[target as string];
    if (!location) continue;
    const json = writer.convert(schema, "input");
    const required = (json.required ?? []) as string[];
    for (const [name, property] of Object.entries((json.properties ?? {}) as Record<string, JsonSchema>)) {
      const existing = parameters.findIndex((p) => p.name === name && p.in === location);
      // `explode: false`: an array as one comma-separated value (`bbox=1,2,3,4`, OpenAPI style form).
      const { description, explode, deprecated, ...propertySchema } = property;
      const parameter = {
        name,
        in: location,
        required: location === "path" || required.includes(name),
        // On the parameter, where Swagger UI and generated clients look for it.
        ...(deprecated === true ? { deprecated } : {}),
        // A path parameter keeps what the operation says of it (its example) beside its validator's schema.
        ...(location === "path" ? pathParamAbout(spec?.pathParams?.[name]) : {}),
        ...(description ? { description } : {}),
        ...(explode === false ? { style: "form", explode: false } : {}),
        schema: propertySchema,
      };
      if (existing >= 0) parameters[existing] = parameter;
      else parameters.push(parameter);
    }
  }
  return parameters;
}

/** The request body: the validated one's media types, and any the operation adds. */
function describeRequestBody(writer: SchemaWriter, { validations, spec }: OperationInput) {
  const bodyValidation = validations.find((v) => v.target === "json" || v.target === "form");
  const validatedTypes = !bodyValidation
    ? []
    : bodyValidation.target === "json"
      ? ["application/json"]
      : ["application/x-www-form-urlencoded", "multipart/form-data"];
  const bodies: Record<string, z.ZodType> = {
    ...Object.fromEntries(validatedTypes.map((type) => [type, bodyValidation!.schema])),
    ...spec?.body,
  };
  const mediaTypes = Object.keys(bodies);
  const requestBody = mediaTypes.length > 0 && {
    required: true,
    content: Object.fromEntries(
      Object.entries(bodies).map(([type, schema]) => {
        // Without one, Swagger UI makes an example up from the schema ("string" as base64 content...).
        const example = spec?.examples?.[type as keyof typeof spec.examples];
        return [type, { schema: writer.convert(schema, "input"), ...(example === undefined ? {} : { example }) }];
      }),
    ),
  };
  return { requestBody, mediaTypes };
}

/** Its own responses, then the problems every operation of its kind may answer. */
function describeResponses(
  writer: SchemaWriter,
  { params, validations, secured, session, spec }: OperationInput,
  mediaTypes: string[],
): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, given] of Object.entries(spec?.responses ?? { 200: {} })) {
    const response: ResponseSpec = given instanceof z.ZodType ? { schema: given } : given;
    const headers = { ...response.headers };
    if (status === "201") headers.Location ??= { description: "The URL of the new resource" };
    const bodies =
      response.content ??
      (response.schema || response.mediaType
        ? { [response.mediaType ?? "application/json"]: response.schema }
        : undefined);
    const content =
      bodies &&
      Object.fromEntries(
        Object.entries(bodies).map(([type, schema]) => [
          type,
          schema ? { schema: writer.convert(schema, "output") } : {},
        ]),
      );
    responses[status] = {
      description: response.description ?? SUCCESS_DESCRIPTIONS[Number(status)] ?? "Response",
      ...(Object.keys(headers).length > 0
        ? {
            headers: Object.fromEntries(
              Object.entries(headers).map(([name, h]) => [
                name,
                { description: h.description, schema: h.schema ?? { type: "string" } },
              ]),
            ),
          }
        : {}),
      ...(content ? { content } : {}),
    };
  }
  const errors = new Set(spec?.errors ?? []);
  if (secured) [401, 403, 429].forEach((s) => errors.add(s));
  if (session) [401, 403].forEach((s) => errors.add(s));
  if (validations.length > 0 || mediaTypes.length > 0) errors.add(400);
  if (mediaTypes.includes("application/json")) [413, 415].forEach((s) => errors.add(s));
  if (params.length > 0) errors.add(404);
  for (const status of [...errors].sort((a, b) => a - b)) {
    // OpenAPI 3.1 lets a reference override the description: the 413 states this route's body limit.
    const description = status === 413 ? { description: tooLargeDescription(spec) } : {};
    responses[status] ??= { $ref: `#/components/responses/Problem${status}`, ...description };
  }
  return responses;
}

function describeOperation(writer: SchemaWriter, input: OperationInput): Operation {
  const { method, path, secured, session, spec } = input;
  const parameters = describeParameters(writer, input);
  const { requestBody, mediaTypes } = describeRequestBody(writer, input);
  const responses = describeResponses(writer, input, mediaTypes);
  return {
    tags: spec?.tags ?? [defaultTag(path)],
    summary: spec?.summary ?? `${method} ${path}`,
    ...(spec?.description ? { description: spec.description } : {}),
    operationId: spec?.operationId ?? derivedOperationId(method, path),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    // OpenAPI 3.1 "Security Requirement Object": an empty requirement makes the cookie optional.
    ...(session ? { security: session === "required" ? [{ session: [] }] : [{ session: [] }, {}] } : {}),
    ...(secured
      ? {
          security: [
            { oauth2: [spec?.scope ?? scopeFor(method)] },
            { bearer: [] },
            ...(spec?.publishable ? [{ publishableKey: [] }] : []),
          ],
        }
      : {}),
  };
}

/** The 413 of a route that reads a body: its limit (http/body.ts), and that it is refused before reading. */
function tooLargeDescription(spec: OperationSpec | undefined): string {
  const limit = spec?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const over =
    limit === "MAX_BODY_BYTES"
      ? `\`MAX_BODY_BYTES\`, ${describeBytes(defaults.maxBodyBytes)} by default`
      : `${describeBytes(limit)}, or \`MAX_BODY_BYTES\` if that is smaller`;
  return (
    `${problemCodes.payload_too_large.title} (\`${problemType("payload_too_large")}\`): the body is over ${over}; ` +
    "a `Content-Length` over it is refused before the body is read. The description names any other limit."
  );
}

const built = new WeakMap<readonly RouterRoute[], BaseDocument>();

/**
 * The document for a request's origin: built once per routes table (once per
 * isolate), then given the origin as its server and token URL.
 */
export function openApiDocument(routes: readonly RouterRoute[], origin: string): OpenApiDocument {
  let document = built.get(routes);
  if (!document) built.set(routes, (document = buildDocument(routes)));
  return {
    ...document,
    servers: [{ url: origin }],
    components: { ...document.components, securitySchemes: securitySchemes(origin) },
  };
}

/**
 * The document of the operations under `prefix` alone, with `origin + prefix` as its server: the
 * definition of an API whose landing page is `prefix` (/ogc), whose paths clients read relative to
 * that page. GDAL's OAPIF driver looks up `/collections/{collectionId}/items` there to learn which
 * query parameters filter the items (docs/ogc.md "Queryables").
 */
export function prefixedApiDocument(routes: readonly RouterRoute[], origin: string, prefix: string): OpenApiDocument {
  const whole = openApiDocument(routes, origin);
  const paths = Object.entries(whole.paths)
    .filter(([path]) => path === prefix || path.startsWith(`${prefix}/`))
    .map(([path, item]) => [path.slice(prefix.length) || "/", item] as const);
  const used = new Set(paths.flatMap(([, item]) => Object.values(item).flatMap((op) => op.tags as string[])));
  return {
    ...whole,
    servers: [{ url: `${origin}${prefix}` }],
    tags: whole.tags.filter((tag) => used.has(tag.name)),
    paths: Object.fromEntries(paths),
  };
}
