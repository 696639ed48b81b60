/**
 * GET/HEAD /media/{key}: stored media, public (no token, so an `<img>` can
 * load it). Keys are unguessable and never reused, so responses are cacheable
 * forever. We evaluate conditional requests (malformed headers are ignored);
 * R2 answers range requests.
 */
import { Hono, type Context } from "hono";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { parseEntityTags, type EntityTags } from "../http/etag";
import { operation } from "../http/route-metadata";
import { builtinMedia } from "./builtin";
import { IMMUTABLE } from "./upload";

const KEY = /^(?:m|builtin)\/[\w.-]{1,200}$/;

function headersFor(etag: string): Headers {
  return new Headers({
    ETag: etag,
    "Cache-Control": IMMUTABLE,
    "X-Content-Type-Options": "nosniff",
    // Media is for <img> and <video> on any origin (the app-wide default is same-origin).
    "Cross-Origin-Resource-Policy": "cross-origin",
  });
}

/** Content-Type and Content-Disposition as stored, without letting stored metadata override our caching. */
function describe(object: R2Object, headers: Headers): void {
  object.writeHttpMetadata(headers);
  headers.set("Cache-Control", IMMUTABLE);
}

/** Conditional request headers that parse (RFC 9110 §13.1); a malformed one is ignored, as if not sent. */
type Preconditions = {
  ifMatch?: Exclude<EntityTags, { kind: "invalid" }>;
  ifNoneMatch?: Exclude<EntityTags, { kind: "invalid" }>;
  ifModifiedSince?: number;
  ifUnmodifiedSince?: number;
};

const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const MONTH = "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "\\d\\d:\\d\\d:\\d\\d";
// IMF-fixdate, then the obsolete RFC 850 and asctime forms a recipient must also accept (RFC 9110 §5.6.7).
const HTTP_DATE = new RegExp(
  `^(?:${DAY}, \\d\\d ${MONTH} \\d{4} ${TIME} GMT|${DAY}[a-z]{0,6}, \\d\\d-${MONTH}-\\d\\d ${TIME} GMT|${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4})$`,
);

/** `*` or a list of entity tags (http/etag.ts); undefined if absent, malformed or over-long. */
function entityTags(header: string | undefined): Preconditions["ifMatch"] {
  if (header === undefined) return undefined;
  const tags = parseEntityTags(header);
  return tags.kind === "invalid" ? undefined : tags;
}

/** Milliseconds since the epoch; undefined if absent or not an HTTP-date. */
function httpDate(header: string | undefined): number | undefined {
  const value = header?.trim();
  if (value === undefined || !HTTP_DATE.test(value)) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function preconditionsOf(c: Context<AppEnv>): Preconditions {
  return {
    ifMatch: entityTags(c.req.header("If-Match")),
    ifNoneMatch: entityTags(c.req.header("If-None-Match")),
    ifModifiedSince: httpDate(c.req.header("If-Modified-Since")),
    ifUnmodifiedSince: httpDate(c.req.header("If-Unmodified-Since")),
  };
}

const isConditional = (p: Preconditions) => Object.values(p).some((value) => value !== undefined);

/** Whether a tag list names our (strong) ETag; weak comparison ignores a `W/` prefix (RFC 9110 §8.8.3.2). */
function names(tags: NonNullable<Preconditions["ifMatch"]>, etag: string, weak: boolean): boolean {
  return tags.kind === "any" || tags.tags.some((tag) => tag.opaque === etag && (weak || !tag.weak));
}

/**
 * Evaluates the preconditions against the object (RFC 9110 §13.2.2, in its
 * order): a 304 response, a thrown 412, or null to serve it. Built-in media
 * has no upload time, so dates do not apply to it.
 */
function checkPreconditions(p: Preconditions, etag: string, uploaded?: Date): Response | null {
  // HTTP dates have whole seconds.
  const modified = uploaded && Math.floor(uploaded.getTime() / 1000) * 1000;
  const unmodifiedSince = p.ifUnmodifiedSince;
  if (
    p.ifMatch
      ? !names(p.ifMatch, etag, false)
      : modified !== undefined && unmodifiedSince !== undefined && modified > unmodifiedSince
  ) {
    throw new ApiError("precondition_failed", "The object does not match the request's preconditions.", {
      headers: { ETag: etag },
    });
  }
  const modifiedSince = p.ifModifiedSince;
  if (
    p.ifNoneMatch
      ? names(p.ifNoneMatch, etag, true)
      : modified !== undefined && modifiedSince !== undefined && modified <= modifiedSince
  ) {
    return new Response(null, { status: 304, headers: headersFor(etag) });
  }
  return null;
}

/** The first and last byte R2 read, clipped to the object's size. */
function byteSpan(range: R2Range, size: number): { first: number; last: number } {
  // R2 fills in all three fields, some undefined, so look at the values rather than the keys.
  const { offset, length, suffix } = range as { offset?: number; length?: number; suffix?: number };
  if (suffix !== undefined) return { first: Math.max(size - suffix, 0), last: size - 1 };
  const first = offset ?? 0;
  return { first, last: Math.min(first + (length ?? size - first), size) - 1 };
}

/**
 * Whether a `Range` header asks only for bytes past the end (RFC 9110
 * §14.1.2): `bytes=N-` or `bytes=N-M` with N at or beyond the size, or
 * `bytes=-0`. Other forms R2 either serves or ignores.
 */
function unsatisfiable(header: string, size: number): boolean {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return false;
  const [, first, last] = match;
  return first ? Number(first) >= size : last === "0";
}

function rangeNotSatisfiable(size: number): ApiError {
  return new ApiError("range_not_satisfiable", `The object has ${size} bytes.`, {
    headers: { "Content-Range": `bytes */${size}` },
  });
}

function serveBuiltin(c: Context<AppEnv>, key: string): Response | null {
  const media = builtinMedia(key);
  if (!media) return null;
  const failed = checkPreconditions(preconditionsOf(c), media.etag);
  if (failed) return failed;
  const headers = headersFor(media.etag);
  headers.set("Content-Type", media.contentType);
  headers.set("Content-Length", String(media.bytes.byteLength));
  // Range is optional for a server (RFC 9110 §14.2); a 309-byte icon is always sent whole.
  return new Response(c.req.method === "HEAD" ? null : media.bytes, { headers });
}

async function serveHead(c: Context<AppEnv>, key: string): Promise<Response | null> {
  const object = await c.env.MEDIA.head(key);
  if (!object) return null;
  const failed = checkPreconditions(preconditionsOf(c), object.httpEtag, object.uploaded);
  if (failed) return failed;
  const headers = headersFor(object.httpEtag);
  describe(object, headers);
  headers.set("Content-Length", String(object.size));
  headers.set("Accept-Ranges", "bytes");
  return new Response(null, { headers });
}

/**
 * Whether `If-Range` lets a range be served (RFC 9110 §13.1.5): only a strong
 * entity tag equal to ours. A weak tag never matches, and neither does a date:
 * we send no Last-Modified, so no date can equal it. Otherwise the whole
 * representation is sent.
 */
const rangeStillValid = (ifRange: string, etag: string) => ifRange.trim() === etag;

async function serveGet(c: Context<AppEnv>, key: string): Promise<Response | null> {
  const preconditions = preconditionsOf(c);
  let range = c.req.header("Range");
  // Ignored without a Range header (RFC 9110 §13.1.5).
  const ifRange = range === undefined ? undefined : c.req.header("If-Range");
  if (isConditional(preconditions) || ifRange !== undefined) {
    // Evaluated here, not by R2, which throws on a malformed ETag header and ignores If-Range; a 304
    // then costs no body.
    const head = await c.env.MEDIA.head(key);
    if (!head) return null;
    const failed = checkPreconditions(preconditions, head.httpEtag, head.uploaded);
    if (failed) return failed;
    if (ifRange !== undefined && !rangeStillValid(ifRange, head.httpEtag)) range = undefined;
  }
  let object: R2ObjectBody | null;
  try {
    object = await c.env.MEDIA.get(key, range === undefined ? {} : { range: c.req.raw.headers });
  } catch (error) {
    if (range === undefined) throw error;
    // R2 may reject a range that starts beyond the object.
    const head = await c.env.MEDIA.head(key);
    if (!head) return null;
    if (unsatisfiable(range, head.size)) throw rangeNotSatisfiable(head.size);
    throw error;
  }
  if (!object) return null;
  const headers = headersFor(object.httpEtag);
  headers.set("Accept-Ranges", "bytes");
  if (range !== undefined && unsatisfiable(range, object.size)) {
    await object.body.cancel();
    throw rangeNotSatisfiable(object.size);
  }
  describe(object, headers);
  const span = object.range ? byteSpan(object.range, object.size) : { first: 0, last: object.size - 1 };
  headers.set("Content-Length", String(span.last - span.first + 1));
  // A range R2 ignored (several ranges, another unit) or one covering everything is sent as a plain 200.
  if (range === undefined || span.last - span.first + 1 === object.size) return new Response(object.body, { headers });
  headers.set("Content-Range", `bytes ${span.first}-${span.last}/${object.size}`);
  return new Response(object.body, { status: 206, headers });
}

/** The route, for the API reference (src/openapi). */
const getMedia = operation<"/:key{.+}">({
  summary: "Get stored media",
  description:
    "Public: the URL comes from a `media_url` or `image_url` and needs no token. Cacheable forever (a new upload " +
    "gets a new URL); answers `If-None-Match` with 304 and `Range` with 206 (with `If-Range`, only when it " +
    "names the current strong ETag; otherwise 200 with the whole file).",
  operationId: "getMedia",
  tags: ["media"],
  pathParams: {
    key: {
      description: "The rest of the URL's path, as given in `media_url` or `image_url`",
      example: "builtin/default-pin.png",
    },
  },
  head: {
    summary: "Get stored media's headers",
    description: "The headers GET would send, without the body. Conditional headers apply; `Range` does not.",
    except: [206, 416],
  },
  responses: {
    200: {
      description: "The file, with the type it was uploaded as",
      mediaType: "*/*",
      headers: {
        ETag: { description: "The object's entity tag" },
        "Cache-Control": { description: "`public, max-age=31536000, immutable`" },
      },
    },
    206: {
      description: "The requested byte range",
      mediaType: "*/*",
      headers: { "Content-Range": { description: "`bytes first-last/size`" } },
    },
    304: { description: "Not modified (`If-None-Match`)" },
  },
  errors: [404, 412, 416],
});

export const mediaRoutes = new Hono<AppEnv>().get(
  "/:key{.+}",
  ...getMedia(async (c) => {
    const key = c.req.param("key");
    const response =
      serveBuiltin(c, key) ??
      (KEY.test(key) ? await (c.req.method === "HEAD" ? serveHead(c, key) : serveGet(c, key)) : null);
    if (!response) throw new ApiError("not_found", "No media is stored under this URL.");
    return response;
  }),
);
