/**
 * A typed client of the POI content API: openapi-fetch over the types
 * openapi-typescript generates from the service's own OpenAPI document
 * (schema.ts), so every operation's path, parameters, body and answers are
 * checked by the compiler, plus what every caller otherwise writes by hand:
 * tokens, paging, idempotency keys, conditional writes, bulk import, retries.
 */
import createClient, { type Client, type MaybeOptionalInit } from "openapi-fetch";
import { importFeatures, type ImportOptions, type ImportSource } from "./geojson-import.ts";
import type { paths } from "./paths.ts";
import type { components } from "./schema.ts";
import {
  authorizing,
  clientCredentialsGrant,
  personSessionTokens,
  retrying,
  TokenSource,
  type ClientCredentials,
  type Credentials,
  type Fetch,
  type PersonSession,
  type RetryOptions,
} from "./transport.ts";

export type { components, operations } from "./schema.ts";
export type { CreatePinpoint, paths } from "./paths.ts";
export { NotAFeatureCollection } from "./feature-splitter.ts";
export type { ImportFeature, ImportOptions, ImportProgress, ImportSource } from "./geojson-import.ts";
export {
  retryAfterMs,
  TokenError,
  type ClientCredentials,
  type Fetch,
  type PersonSession,
  type RetryOptions,
} from "./transport.ts";

export type Problem = components["schemas"]["Problem"];

/** A FeatureCollection of at most 1,000 Point features whose properties are pinpoint fields. */
export type PinpointImport = components["schemas"]["PinpointImport"];
/** The new pinpoints' ids, in feature order. */
export type PinpointImportResult = components["schemas"]["PinpointImportResult"];

/** The answer of a typed call: `data` on success, else `error` (the problem details, when the service sent some). */
export type Answer<T> =
  { data: T; error?: never; response: Response } | { data?: never; error: Problem | undefined; response: Response };

/** An answer that is not a success, from the helpers below (typed calls return it as `error` instead). */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    /** The problem details (RFC 9457) the service sent, when it sent any. */
    readonly problem: Problem | undefined,
    /** For an import, the index of the batch's first feature in the whole source: add it to `/features/N` pointers. */
    readonly firstFeature?: number,
  ) {
    super(problem ? `${status} ${problem.title}: ${problem.detail}` : `The service answered ${status}`);
  }
}

export type PoiClientOptions = {
  /** The service's origin, e.g. "https://api.example.com" (paths start with /v3.0). */
  baseUrl: string;
  /** Server side: a registered client's id and secret; tokens are fetched and renewed as needed. */
  credentials?: ClientCredentials;
  /**
   * A person signed in to the service (its session cookie): tokens are minted from the session and renewed
   * as needed, acting with the person's role in `session.account`. For pages on the service's own origin.
   */
  session?: PersonSession;
  /** Browsers: a publishable key (`pk_…`), sent as `?key=`; it reads what it publishes, nothing more. */
  publishableKey?: string;
  /** A token obtained elsewhere, used as it is. */
  accessToken?: string;
  /** Renew a token this long before it expires (default 60 s; at most half its lifetime). */
  renewBeforeSeconds?: number;
  /** Send a fresh `Idempotency-Key` with every POST that has none (default true). */
  idempotencyKeys?: boolean;
  retry?: RetryOptions;
  /** The fetch to use (default the global one), e.g. a Worker's service binding's. */
  fetch?: Fetch;
};

/** Paths whose GET answers a page envelope: `results` and a `next` link. */
export type PagedPath = {
  [P in keyof paths]: paths[P] extends {
    get: { responses: { 200: { content: { "application/json": { results: unknown[]; next: string | null } } } } };
  }
    ? P
    : never;
}[keyof paths];

/** The type of one result on the pages of `P`. */
export type PageItem<P extends PagedPath> = paths[P] extends {
  get: { responses: { 200: { content: { "application/json": { results: (infer T)[] } } } } };
}
  ? T
  : never;

/** `If-Match` naming the version a read (or write) answered with, for a conditional PUT or DELETE. */
export function ifMatch(answer: { response: Response }): { "If-Match": string } {
  const etag = answer.response.headers.get("ETag");
  if (etag === null) throw new TypeError(`The answer from ${answer.response.url} has no ETag`);
  return { "If-Match": etag };
}

async function apiError(response: Response, firstFeature?: number): Promise<ApiError> {
  const problem = (await response.json().catch(() => undefined)) as Problem | undefined;
  return new ApiError(response.status, problem, firstFeature);
}

/**
 * The media types the typed calls read: JSON and problem details. Reads also come as GeoJSON when asked
 * (`format=geojson`), which `fetch` below gets as it is.
 */
export type JsonMedia = "application/json" | "application/problem+json";

export type PoiClient = Client<paths, JsonMedia> & {
  /** Every result of a collection, page after page, following `next` as the service gives it. */
  paginate<P extends PagedPath>(path: P, init?: MaybeOptionalInit<paths[P], "get">): AsyncGenerator<PageItem<P>>;
  /**
   * One bulk import, `POST /v3.0/pinpoints` with a GeoJSON body (the typed `POST` is the single create):
   * all or nothing, `data.ids` in feature order, or `error` naming every bad feature by a pointer.
   */
  importPinpoints(
    collection: PinpointImport,
    init?: { headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Answer<PinpointImportResult>>;
  /**
   * Creates a pinpoint for each GeoJSON Point feature of `source`, 1,000 to a request; resolves with
   * their ids in feature order. Each batch is all or nothing: a refused one throws an `ApiError` whose
   * `firstFeature` places its pointers in the source, and the batches before it stay imported.
   */
  importGeoJSON(source: ImportSource, options?: ImportOptions): Promise<number[]>;
  /** The fetch every call goes through (credentials, idempotency keys, retries), for requests of your own. */
  fetch: Fetch;
};

/** A client of the service at `options.baseUrl`. */
export function createPoiClient(options: PoiClientOptions): PoiClient {
  let baseUrl = options.baseUrl;
  while (baseUrl.endsWith("/")) baseUrl = baseUrl.slice(0, -1);
  const given = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const transport = retrying(given, options.retry);
  let credentials: Credentials;
  if (options.credentials !== undefined) {
    const grant = clientCredentialsGrant(baseUrl, options.credentials, transport);
    credentials = { tokens: new TokenSource(grant, options.renewBeforeSeconds) };
  } else if (options.session !== undefined) {
    const minted = personSessionTokens(baseUrl, options.session, transport);
    credentials = { tokens: new TokenSource(minted, options.renewBeforeSeconds) };
  } else if (options.publishableKey !== undefined) {
    credentials = { publishableKey: options.publishableKey };
  } else if (options.accessToken !== undefined) {
    credentials = { accessToken: options.accessToken };
  } else {
    throw new TypeError("Give credentials (client id and secret), a session, a publishableKey or an accessToken");
  }
  const fetch = authorizing(transport, credentials, options.idempotencyKeys ?? true);
  const client = createClient<paths, JsonMedia>({
    baseUrl,
    fetch: (request) => fetch(request),
    // Every array parameter of the API is `explode: false`: one comma-separated value (`bbox=1,2,3,4`).
    querySerializer: { array: { style: "form", explode: false } },
  });

  async function* paginate<P extends PagedPath>(path: P, init?: MaybeOptionalInit<paths[P], "get">) {
    type Page = { results: PageItem<P>[]; next: string | null };
    type First = { data?: Page; error?: Problem; response: Response };
    const first = await (client.GET as (path: P, init: unknown) => Promise<First>)(path, init);
    // openapi-fetch has read the body: the problem is its `error`.
    if (first.data === undefined) throw new ApiError(first.response.status, first.error);
    let page = first.data;
    for (;;) {
      yield* page.results;
      if (page.next === null) return;
      const response = await fetch(new Request(page.next, { headers: { Accept: "application/json" } }));
      if (!response.ok) throw await apiError(response);
      page = (await response.json()) as Page;
    }
  }

  /** `POST /v3.0/pinpoints` of a FeatureCollection's JSON text (features sent as written). */
  const postImport = (body: string, init: { headers?: Record<string, string>; signal?: AbortSignal } = {}) =>
    fetch(
      new Request(`${baseUrl}/v3.0/pinpoints`, {
        method: "POST",
        headers: { ...init.headers, "Content-Type": "application/geo+json", Accept: "application/json" },
        body,
        signal: init.signal,
      }),
    );

  async function importPinpoints(
    collection: PinpointImport,
    init?: { headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Answer<PinpointImportResult>> {
    const response = await postImport(JSON.stringify(collection), init);
    if (response.status === 201) return { data: (await response.json()) as PinpointImportResult, response };
    return { error: (await response.json().catch(() => undefined)) as Problem | undefined, response };
  }

  async function sendBatch(body: string, firstFeature: number, signal?: AbortSignal): Promise<number[]> {
    const response = await postImport(body, { signal });
    if (response.status !== 201) throw await apiError(response, firstFeature);
    return ((await response.json()) as PinpointImportResult).ids;
  }

  return {
    ...client,
    paginate,
    importPinpoints,
    importGeoJSON: (source, importOptions) => importFeatures(source, sendBatch, importOptions),
    fetch,
  };
}
