/**
 * Sample uploads for the media tests: the smallest byte strings that carry
 * each accepted type's magic number, base64 helpers, R2 inspection, and a
 * way to land a concurrent request in the middle of an upload.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { app } from "../src/app";
import { BASE } from "./helpers";

const ascii = (text: string) => Array.from(text, (ch) => ch.charCodeAt(0));
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
// Trailing bytes whose base64 has "+" and "/" (standard) or "-" and "_" (URL-safe).
const tail = [0xfb, 0xef, 0xbe, 0xff, 0xff, 0xfe, 0x01];

export const samples = {
  "image/png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...ascii("\0\0\0\rIHDR"), ...tail]),
  "image/jpeg": new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, ...ascii("JFIF\0"), ...tail]),
  "image/gif": new Uint8Array([...ascii("GIF89a"), 1, 0, 1, 0, ...tail]),
  "image/webp": new Uint8Array([...ascii("RIFF"), 0x1a, 0, 0, 0, ...ascii("WEBPVP8 "), ...tail]),
  "image/avif": new Uint8Array([...be32(28), ...ascii("ftypavif"), 0, 0, 0, 0, ...ascii("avifmif1miaf"), ...tail]),
  "video/mp4": new Uint8Array([...be32(24), ...ascii("ftypisom"), 0, 0, 2, 0, ...ascii("isommp41"), ...tail]),
} as const;

export type SampleType = keyof typeof samples;

type Base64Bytes = Uint8Array & {
  toBase64(options?: { alphabet?: "base64" | "base64url"; omitPadding?: boolean }): string;
};

/** Standard base64 with padding (the runtime's native encoder). */
export function base64(bytes: Uint8Array): string {
  return (bytes as Base64Bytes).toBase64();
}

/** URL-safe base64 without padding. */
export function base64url(bytes: Uint8Array): string {
  return (bytes as Base64Bytes).toBase64({ alphabet: "base64url", omitPadding: true });
}

export function mediaFile(type: SampleType = "image/png", name = "photo.png") {
  return { content: base64(samples[type]), name, type };
}

/** Every key in the media bucket. */
export async function bucketKeys(): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.MEDIA.list({ cursor });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys.sort();
}

/** The R2 key behind a media URL. */
export function keyOf(url: unknown): string {
  expect(url).toEqual(expect.stringMatching(/^https:\/\/api\.example\.test\/media\/m\/[0-9a-f]{32}\.\w+$/));
  return new URL(url as string).pathname.slice("/media/".length);
}

/** Asserts that an object is gone from R2 (a caller's request resolves after its `waitUntil` deletions). */
export async function expectGone(key: string): Promise<void> {
  expect(await env.MEDIA.head(key), `${key} was not deleted`).toBeNull();
}

export async function exists(key: string): Promise<boolean> {
  return (await env.MEDIA.head(key)) !== null;
}

/**
 * Sends a JSON request as `who` through the app with the real bucket, running
 * `meanwhile` (e.g. a DELETE) as soon as an upload has reached R2 and before
 * the route writes its row: a concurrent request landing at exactly that
 * moment, made deterministic. Returns the response and the keys uploaded.
 */
export async function sendDuringUpload(
  who: { token: string },
  method: string,
  path: string,
  body: unknown,
  meanwhile: () => Promise<unknown>,
  headers: Record<string, string> = {},
): Promise<{ response: Response; uploaded: string[] }> {
  const request = new Request(new URL(path, BASE), {
    method,
    headers: { Authorization: `Bearer ${who.token}`, "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const uploaded: string[] = [];
  const real = env.MEDIA;
  const bucket = new Proxy(real, {
    get(target, property) {
      if (property === "put") {
        return async (...args: Parameters<R2Bucket["put"]>) => {
          const object = await target.put(...args);
          uploaded.push(args[0]);
          await meanwhile();
          return object;
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const ctx = createExecutionContext();
  const response = await app.fetch(request, { ...env, MEDIA: bucket }, ctx);
  await waitOnExecutionContext(ctx);
  return { response, uploaded };
}
