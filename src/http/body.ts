/**
 * Transport rules for request bodies, applied once for the whole API
 * (CONTRACT "Transport"): a body must be JSON (415 otherwise), must fit the
 * configured maximum (413, refused up front when Content-Length already says
 * so), and is read once into Hono's body cache for the validator to parse.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import { ApiError } from "./problem";

const jsonMediaType = /^application\/(?:[\w.-]+\+)?json$/i;

function tooLarge(max: number): ApiError {
  return new ApiError("payload_too_large", `The request body exceeds the maximum of ${max} bytes.`);
}

/**
 * Reads a body of at most `max` bytes. With a Content-Length the bytes go
 * straight into one buffer of that size, so a large upload is held once, not
 * once per chunk plus once joined.
 */
export async function readBodyWithin(
  body: ReadableStream<Uint8Array>,
  max: number,
  declared: number | null,
): Promise<Uint8Array> {
  const reader = body.getReader();
  let buffer = new Uint8Array(declared ?? Math.min(max, 64 * 1024));
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

/** Middleware: enforces the body rules on every request that carries a body. */
export const jsonBody = () =>
  createMiddleware<AppEnv>(async function jsonBody(c, next) {
    const raw = c.req.raw;
    if (raw.body === null) return next();
    const max = c.var.config.maxBodyBytes;
    // Only a well-formed Content-Length sizes the buffer; the byte count read is what is enforced.
    const lengthHeader = c.req.header("Content-Length")?.trim();
    const declared = lengthHeader && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : null;
    if (declared !== null && declared > max) throw tooLarge(max);
    const contentType = c.req.header("Content-Type");
    const mediaType = contentType?.split(";")[0]?.trim() ?? "";
    const bytes = await readBodyWithin(raw.body, max, declared);
    const isJson = jsonMediaType.test(mediaType);
    if (bytes.byteLength === 0) {
      if (isJson) throw new ApiError("malformed_json", "The request body is empty; send a JSON document.");
      return next();
    }
    if (!isJson) {
      throw new ApiError(
        "unsupported_media_type",
        `Request bodies must be application/json${contentType ? `, not ${contentType}` : ""}.`,
        { headers: { "Accept-Post": "application/json" } },
      );
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new ApiError("malformed_json", "The request body is not valid UTF-8.");
    }
    // Hono's body cache is typed loosely; the validator reads the text from here.
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    return next();
  });
