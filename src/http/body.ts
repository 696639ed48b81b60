/**
 * Transport rules for request bodies, applied once for the whole API
 * (CONTRACT "Transport"): a body must be JSON (415 otherwise), must fit the
 * limit of the route it is sent to (413, refused before any byte is read
 * when Content-Length already says so, and while reading otherwise), and is
 * read once into Hono's body cache for the validator to parse.
 *
 * Each route states its limit in its operation (route-metadata.ts): what it
 * needs, not the 15 MiB a media upload needs, because JSON.parse reads a body
 * whole before any item limit applies (a 15 MiB batch is millions of items).
 */
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../core/env";
import { ApiError } from "../core/problem";
import { DEFAULT_MAX_BODY_BYTES, matchedOperation, readsBody } from "./route-metadata";

const jsonMediaType = /^application\/(?:[\w.-]+\+)?json$/i;

function tooLarge(max: number): ApiError {
  return new ApiError("payload_too_large", `The request body exceeds the maximum of ${max} bytes.`);
}

/** The size a well-formed Content-Length declares, or null. It only sizes the buffer: the bytes read are what is enforced. */
export function declaredLength(request: Request): number | null {
  const header = request.headers.get("Content-Length")?.trim();
  return header && /^\d+$/.test(header) ? Number(header) : null;
}

/**
 * Reads a body of at most `max` bytes. A byte stream is read with a BYOB
 * reader straight into one buffer (of the Content-Length's size when there is
 * one): a 1 MiB upload then takes a handful of reads instead of ~340 reads of
 * 4 KiB, each a promise and a copy, which cost 7 ms of CPU per MiB (measured
 * with `npm run bench`). Other streams are read chunk by chunk.
 */
export async function readBodyWithin(
  body: ReadableStream<Uint8Array>,
  max: number,
  declared: number | null,
): Promise<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    return readChunks(body.getReader(), max, declared);
  }
  let buffer = new ArrayBuffer(Math.min(max, declared ?? 64 * 1024));
  let length = 0;
  // Once the buffer is full, a small spare one tells whether more is coming (a wrong or absent
  // Content-Length); if it is, the buffer grows by doubling.
  let spare: ArrayBuffer | null = null;
  for (;;) {
    const full = length === buffer.byteLength;
    const view = full ? new Uint8Array((spare ??= new ArrayBuffer(1024))) : new Uint8Array(buffer, length);
    const { done, value } = await reader.read(view);
    if (!value) break;
    // A BYOB read transfers the buffer it was given; keep using the one it returns.
    if (full) spare = value.buffer;
    else buffer = value.buffer;
    if (done) break;
    if (full) {
      if (length + value.byteLength > max) {
        await reader.cancel();
        throw tooLarge(max);
      }
      const grown = new Uint8Array(Math.min(max, Math.max(length * 2, length + value.byteLength)));
      grown.set(new Uint8Array(buffer, 0, length));
      grown.set(value, length);
      buffer = grown.buffer;
    }
    length += value.byteLength;
  }
  return new Uint8Array(buffer, 0, length);
}

/** The same for streams without BYOB support: chunk by chunk into one growing buffer. */
async function readChunks(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  max: number,
  declared: number | null,
): Promise<Uint8Array> {
  let buffer = new Uint8Array(Math.min(max, declared ?? 64 * 1024));
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (length + value.byteLength > max) {
      await reader.cancel();
      throw tooLarge(max);
    }
    if (length + value.byteLength > buffer.byteLength) {
      const grown = new Uint8Array(Math.min(max, Math.max(buffer.byteLength * 2, length + value.byteLength)));
      grown.set(buffer.subarray(0, length));
      buffer = grown;
    }
    buffer.set(value, length);
    length += value.byteLength;
  }
  return buffer.subarray(0, length);
}

/**
 * The body limit of the route a request goes to: its operation is on the last handler of the matched
 * route; no route reads more than the configured maximum.
 */
export function bodyLimitOf(c: Context<AppEnv>): number {
  const spec = matchedOperation(c);
  const configured = c.var.config.maxBodyBytes;
  const declared = spec?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return declared === "MAX_BODY_BYTES" ? configured : Math.min(declared, configured);
}

/** Middleware: enforces the body rules on every request that carries a body. */
export const jsonBody = () =>
  createMiddleware<AppEnv>(async function jsonBody(c, next) {
    const raw = c.req.raw;
    if (raw.body === null) return next();
    const max = bodyLimitOf(c);
    const declared = declaredLength(raw);
    if (declared !== null && declared > max) throw tooLarge(max);
    const contentType = c.req.header("Content-Type");
    const isJson = jsonMediaType.test(contentType?.split(";")[0]?.trim() ?? "");
    const unsupported = () =>
      new ApiError(
        "unsupported_media_type",
        `Request bodies must be application/json${contentType ? `, not ${contentType}` : ""}.`,
        { headers: { "Accept-Post": "application/json" } },
      );
    // A declared non-empty body of another type is refused before any of it is read.
    if (!isJson && declared !== null && declared > 0) throw unsupported();
    const bytes = await readBodyWithin(raw.body, max, declared);
    // Hono's body cache is typed loosely; the validator and the idempotency fingerprint read the text from
    // here, since the stream is spent: an empty body too (`Content-Length: 0`, as many clients send a POST
    // without content), which is no body.
    const cache = (text: string) => ((c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text));
    if (bytes.byteLength === 0) {
      cache("");
      // Labelled JSON where the operation reads a document, it is a mistake worth naming; elsewhere it is no body.
      if (isJson && readsBody(c))
        throw new ApiError("malformed_json", "The request body is empty; send a JSON document.");
      return next();
    }
    if (!isJson) throw unsupported();
    try {
      cache(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
    } catch {
      throw new ApiError("malformed_json", "The request body is not valid UTF-8.");
    }
    return next();
  });
