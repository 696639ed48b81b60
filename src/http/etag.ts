/**
 * Entity tags and conditional requests (RFC 9110 §8.8.3, §13) for single
 * resources. A resource's strong ETag is its row version (db/schema.ts), which
 * every change increments, so a tag names one state of one resource. Reads
 * honour If-None-Match (304); writes pass the versions If-Match accepts to the
 * data layer, which checks them in the write's own WHERE clause, so a
 * conditional write is atomic however many clients race.
 *
 * `parseEntityTags` is the one parser of If-Match and If-None-Match, here and
 * for public media (media/routes.ts). It reads a header in one pass, and not at
 * all past `MAX_CONDITIONAL_HEADER_LENGTH`: a header is client input of up to
 * the platform's header limit, and a parser that backtracks over it (as a
 * global unanchored regex does inside a run of spaces) costs time quadratic in
 * its length, seconds of CPU that every request sharing the isolate waits for.
 */
import type { Context } from "hono";
import { base64urlEncode } from "../core/crypto";

/** The strong ETag of a resource at `version`. */
export const etagOf = (version: number): string => `"${version}"`;

/**
 * Conditional headers longer than this are not parsed (room for ~200 tags;
 * a client revalidating one resource sends one). An over-long If-None-Match is
 * ignored, as a malformed one is; an over-long If-Match matches nothing (412),
 * so it can never make a conditional write unconditional.
 */
export const MAX_CONDITIONAL_HEADER_LENGTH = 4096;

/** One entity tag: `opaque` with its quotes (`"12"`), as an ETag header value carries it. */
export type EntityTag = { opaque: string; weak: boolean };

/** An If-Match or If-None-Match value: `*`, a list of tags, or a value this service does not parse. */
export type EntityTags = { kind: "any" } | { kind: "tags"; tags: EntityTag[] } | { kind: "invalid" };

const ANY: EntityTags = { kind: "any" };
const INVALID: EntityTags = { kind: "invalid" };
/** etagc (RFC 9110 §8.8.3): anything visible but DQUOTE, and obs-text. One class, anchored: linear. */
const OPAQUE_CHARS = /^[\x21\x23-\x7e\x80-\xff]*$/;
const isOws = (char: string | undefined) => char === " " || char === "\t";

/**
 * Parses `"*" / #entity-tag` (RFC 9110 §13.1.1, §13.1.2) in one left-to-right
 * pass: empty list elements are allowed (§5.6.1), a tag may contain commas,
 * and anything else, `*` inside a list included, makes the value invalid.
 */
export function parseEntityTags(header: string): EntityTags {
  if (header.length > MAX_CONDITIONAL_HEADER_LENGTH) return INVALID;
  if (header.trim() === "*") return ANY;
  const tags: EntityTag[] = [];
  let at = 0;
  for (;;) {
    while (at < header.length && (isOws(header[at]) || header[at] === ",")) at++;
    if (at === header.length) break;
    const weak = header.startsWith("W/", at);
    if (weak) at += 2;
    if (header[at] !== '"') return INVALID;
    const close = header.indexOf('"', at + 1);
    if (close < 0) return INVALID;
    const opaque = header.slice(at, close + 1);
    if (!OPAQUE_CHARS.test(opaque.slice(1, -1))) return INVALID;
    tags.push({ opaque, weak });
    at = close + 1;
    while (isOws(header[at])) at++;
    if (at < header.length && header[at] !== ",") return INVALID;
  }
  return tags.length > 0 ? { kind: "tags", tags } : INVALID;
}

/** Sets the resource's ETag on the response. */
export function setETag(c: Context, version: number): void {
  c.header("ETag", etagOf(version));
}

/**
 * The JSON of a resource at `version` with its ETag, or 304 Not Modified
 * without a body when If-None-Match names that tag (weak comparison, §13.1.2).
 * An If-None-Match that does not parse is ignored, as if absent.
 */
export function jsonWithETag<T>(c: Context, version: number, body: T) {
  setETag(c, version);
  if (noneMatch(c.req.header("If-None-Match"), etagOf(version))) return c.body(null, 304);
  return c.json(body);
}

/**
 * Whether an If-None-Match value names `etag` (weak comparison, §13.1.2), so
 * the answer is 304; one that does not parse names nothing (it is ignored).
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = parseEntityTags(header);
  return tags.kind === "any" || (tags.kind === "tags" && tags.tags.some((t) => t.opaque === etag));
}

/**
 * The versions a write may change, from If-Match (strong comparison, §13.1.1):
 * `null` when the header is absent or `*` (any version: the resource only has
 * to exist, as without the header), else the versions named; weak or foreign
 * tags name none, and neither does a value that does not parse, so the write
 * is refused with 412.
 */
export function ifMatch(c: Context): readonly number[] | null {
  const header = c.req.header("If-Match");
  if (header === undefined) return null;
  const tags = parseEntityTags(header);
  if (tags.kind === "any") return null;
  if (tags.kind === "invalid") return [];
  const versions: number[] = [];
  for (const { opaque, weak } of tags.tags) {
    const version = /^"([1-9]\d{0,14})"$/.exec(opaque)?.[1];
    if (!weak && version !== undefined) versions.push(Number(version));
  }
  return versions;
}

/**
 * A strong ETag for an answer with no version of its own (a vector tile): a
 * digest of its bytes, so equal bytes have equal tags and a 304 is always right.
 */
export async function contentETag(body: Uint8Array | string): Promise<string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `"${base64urlEncode(digest.subarray(0, 18))}"`;
}

/** The 304 of a GET, for the API reference. */
export const notModifiedResponse = { description: "Not modified: `If-None-Match` names the current `ETag`" };
