/**
 * Entity tags and conditional requests (RFC 9110 §8.8.3, §13) for single
 * resources. A resource's strong ETag is its row version (db/schema.ts), which
 * every change increments, so a tag names one state of one resource. Reads
 * honour If-None-Match (304); writes pass the versions If-Match accepts to the
 * data layer, which checks them in the write's own WHERE clause, so a
 * conditional write is atomic however many clients race.
 */
import type { Context } from "hono";
import { base64urlEncode } from "../core/crypto";

/** The strong ETag of a resource at `version`. */
export const etagOf = (version: number): string => `"${version}"`;

type EntityTags = "*" | { tag: string; weak: boolean }[];

/** The entity tags of an If-Match or If-None-Match value; anything unparsable matches nothing. */
function parseTags(value: string): EntityTags {
  if (value.trim() === "*") return "*";
  const tags: { tag: string; weak: boolean }[] = [];
  for (const match of value.matchAll(/\s*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/g)) {
    tags.push({ tag: match[2]!, weak: match[1] !== undefined });
  }
  return tags;
}

/** Sets the resource's ETag on the response. */
export function setETag(c: Context, version: number): void {
  c.header("ETag", etagOf(version));
}

/**
 * The JSON of a resource at `version` with its ETag, or 304 Not Modified
 * without a body when If-None-Match names that tag (weak comparison, §13.1.2).
 */
export function jsonWithETag<T>(c: Context, version: number, body: T) {
  setETag(c, version);
  if (noneMatch(c.req.header("If-None-Match"), etagOf(version))) return c.body(null, 304);
  return c.json(body);
}

/** Whether an If-None-Match value names `etag` (weak comparison, §13.1.2), so the answer is 304. */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = parseTags(header);
  return tags === "*" || tags.some((t) => t.tag === etag);
}

/**
 * The versions a write may change, from If-Match (strong comparison, §13.1.1):
 * `null` when the header is absent or `*` (any version: the resource only has
 * to exist, as without the header), else the versions named; weak or foreign
 * tags name none, so the write is refused with 412.
 */
export function ifMatch(c: Context): readonly number[] | null {
  const header = c.req.header("If-Match");
  if (header === undefined) return null;
  const tags = parseTags(header);
  if (tags === "*") return null;
  const versions: number[] = [];
  for (const { tag, weak } of tags) {
    const version = /^"([1-9]\d{0,14})"$/.exec(tag)?.[1];
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
