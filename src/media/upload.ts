/**
 * Media uploads (`media_file`, `image_file`; CONTRACT "Media"): base64 in,
 * checked against the configured types and by magic number, limited in size,
 * stored in R2 under an unguessable key. The write protocol keeps R2 and D1
 * consistent: the object is written before the row that points to it, deleted
 * again if that row cannot be written, and a replaced object is deleted only
 * once the new row is committed. Whatever a crash leaves behind, the sweep
 * (sweep.ts) removes.
 */
import type { Context } from "hono";
import type { AppEnv } from "../core/env";
import { ApiError, fieldError } from "../core/problem";
import { randomHex } from "../core/secrets";
import { decodeBase64 } from "./base64";
import { acceptedTypes, TYPE_ALIASES, type Accept, type MediaFile } from "./file";
import { extensionOf, matchesType } from "./signatures";

/** A key names one object forever: every upload gets a new key. */
export const IMMUTABLE = "public, max-age=31536000, immutable";

/** Keys of media bundled with the Worker (built-in category icons); never deleted. */
export const BUILTIN_PREFIX = "builtin/";

function acceptedType(c: Context<AppEnv>, declared: string, pointer: string, accept: Accept): string {
  const type = TYPE_ALIASES[declared] ?? declared;
  const allowed = acceptedTypes(c.var.config.mediaTypes, accept);
  if (!allowed.includes(type)) throw fieldError(`${pointer}/type`, `must be one of ${allowed.join(", ")}`);
  return type;
}

/** 128 random bits as hex, then the type's extension: unguessable, and readable in R2 listings. */
function newKey(type: string): string {
  return `m/${randomHex(16)}.${extensionOf(type)}`;
}

/** `inline` with the uploaded name (RFC 6266 §4.3, UTF-8 via RFC 8187), so a saved file keeps its name. */
function contentDisposition(name: string): string {
  if (!name) return "inline";
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `inline; filename*=UTF-8''${encoded}`;
}

/**
 * Decodes `file`, checks its type against configuration (only image types
 * for `accept: "image"`) and its magic number, its size against
 * MAX_MEDIA_BYTES (413), and stores it in R2 with its content type; returns
 * the new key. Bad input is a 400 pointing under `pointer`
 * (e.g. "/media_file/content").
 */
export async function storeUpload(
  c: Context<AppEnv>,
  file: MediaFile,
  pointer: string,
  accept: Accept = "media",
): Promise<string> {
  const type = acceptedType(c, file.type, pointer, accept);
  const bytes = decodeBase64(file.content);
  if (bytes === null) throw fieldError(`${pointer}/content`, "must be base64 (standard or URL-safe)");
  if (bytes.byteLength === 0) throw fieldError(`${pointer}/content`, "must not be empty");
  const max = c.var.config.maxMediaBytes;
  if (bytes.byteLength > max) {
    const detail = `is ${bytes.byteLength} bytes once decoded; the maximum is ${max} bytes`;
    throw new ApiError("payload_too_large", `${pointer.slice(1)}: ${detail}.`, {
      errors: [{ pointer: `${pointer}/content`, detail }],
    });
  }
  if (!matchesType(type, bytes))
    throw fieldError(`${pointer}/content`, `is not ${/^[aeiou]/.test(type) ? "an" : "a"} ${type} file`);
  const key = newKey(type);
  await c.env.MEDIA.put(key, bytes, {
    // Cache headers travel with the object, so a public bucket domain (MEDIA_PUBLIC_BASE_URL) sends them too.
    httpMetadata: { contentType: type, contentDisposition: contentDisposition(file.name), cacheControl: IMMUTABLE },
    customMetadata: { name: file.name, account: String(c.var.principal.accountId) },
  });
  return key;
}

/**
 * Runs a database write that may change a row's media. `file` undefined keeps
 * the media (write gets `undefined`), `null` clears it (write gets `null`), a
 * file replaces it (write gets the new key, stored first). If `write` throws,
 * the new object is deleted before the error propagates; once it succeeds,
 * `previousKey` is deleted after the response when it was replaced or cleared.
 */
export async function writeWithMedia<T>(
  c: Context<AppEnv>,
  opts: { file: MediaFile | null | undefined; pointer: string; previousKey: string | null; accept?: Accept },
  write: (key: string | null | undefined) => Promise<T>,
): Promise<T> {
  const key = opts.file ? await storeUpload(c, opts.file, opts.pointer, opts.accept) : opts.file;
  let result: T;
  try {
    result = await write(key);
  } catch (error) {
    if (key) await deleteObjects(c, [key]);
    throw error;
  }
  if (key !== undefined && opts.previousKey !== key) deleteMediaLater(c, [opts.previousKey]);
  return result;
}

async function deleteObjects(c: Context<AppEnv>, keys: readonly (string | null)[]): Promise<void> {
  const doomed = keys.filter((k): k is string => k !== null && !k.startsWith(BUILTIN_PREFIX));
  // R2 deletes at most 1000 keys per call.
  for (let i = 0; i < doomed.length; i += 1000) {
    const batch = doomed.slice(i, i + 1000);
    try {
      await c.env.MEDIA.delete(batch);
    } catch (error) {
      // Not the client's problem: the sweep deletes unreferenced objects later.
      console.error(
        JSON.stringify({
          level: "error",
          request_id: c.var.requestId,
          message: "media delete failed",
          keys: batch,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    }
  }
}

/** Deletes objects after the response (`waitUntil`); ignores nulls and never deletes built-in media. */
export function deleteMediaLater(c: Context<AppEnv>, keys: readonly (string | null)[]): void {
  if (!keys.some((k) => k !== null && !k.startsWith(BUILTIN_PREFIX))) return;
  c.executionCtx.waitUntil(deleteObjects(c, keys));
}
