/**
 * The media module end to end: uploads through `media_file` (base64 variants,
 * type and magic-number checks, size limits) and the public media route
 * (headers, 304, 206, 404, the built-in icon).
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { Context } from "hono";
import { parseConfig } from "../src/core/config";
import type { AppEnv } from "../src/core/env";
import { mediaUrls } from "../src/media/url";
import { BASE, call, caller, json, postBody, type Caller } from "./helpers";
import { base64, base64url, bucketKeys, keyOf, mediaFile, samples, type SampleType } from "./media-fixtures";

type Problem = { status: number; detail: string; errors?: { pointer?: string; detail: string }[] };

const place = { name: "Place", latitude: 1, longitude: 2 };
let a: Caller;

beforeAll(async () => {
  a = await caller();
});

function upload(file: unknown, who: Caller = a) {
  return who.send("POST", "/v3.0/pinpoints", { ...place, media_file: file });
}

async function uploaded(file: unknown): Promise<string> {
  const response = await upload(file);
  const body = await json(response);
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.media_url as string;
}

async function expectRejected(file: unknown, status: number, pointer: string): Promise<Problem> {
  const before = await bucketKeys();
  const response = await upload(file);
  const body = await json<Problem>(response);
  expect(response.status, JSON.stringify(body)).toBe(status);
  expect(response.headers.get("Content-Type")).toBe("application/problem+json");
  expect(body.errors?.map((e) => e.pointer)).toEqual([pointer]);
  expect(await bucketKeys()).toEqual(before);
  return body;
}

async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

describe("uploads", () => {
  it.each(Object.keys(samples) as SampleType[])("stores %s and serves it back byte for byte", async (type) => {
    const url = await uploaded(mediaFile(type, "file"));
    const key = keyOf(url);
    expect(key.endsWith(`.${{ "image/jpeg": "jpg" }[type as string] ?? type.split("/")[1]}`)).toBe(true);
    const served = await call(new URL(url).pathname);
    expect(served.status).toBe(200);
    expect(served.headers.get("Content-Type")).toBe(type);
    expect(await bytesOf(served)).toEqual(samples[type]);
  });

  it("stores the content type and the uploader in R2 metadata", async () => {
    const key = keyOf(await uploaded(mediaFile("image/png", "Été à Paris.png")));
    const object = await env.MEDIA.head(key);
    expect(object?.httpMetadata?.contentType).toBe("image/png");
    expect(object?.httpMetadata?.cacheControl).toBe("public, max-age=31536000, immutable");
    expect(object?.httpMetadata?.contentDisposition).toBe(
      "inline; filename*=UTF-8''%C3%89t%C3%A9%20%C3%A0%20Paris.png",
    );
    expect(object?.customMetadata).toEqual({ name: "Été à Paris.png", account: String(a.accountId) });
  });

  it("cleans the file name of control characters and lone surrogates", async () => {
    const key = keyOf(await uploaded({ ...mediaFile(), name: " a\nb\u0000c\ud800.png " }));
    const object = await env.MEDIA.head(key);
    expect(object?.customMetadata?.name).toBe("abc\ufffd.png");
    expect(object?.httpMetadata?.contentDisposition).toBe("inline; filename*=UTF-8''abc%EF%BF%BD.png");
  });

  it("gives every upload a new unguessable key", async () => {
    const first = keyOf(await uploaded(mediaFile()));
    const second = keyOf(await uploaded(mediaFile()));
    expect(first).not.toBe(second);
  });

  it("accepts standard and URL-safe base64, with or without padding, with line breaks or a data: prefix", async () => {
    const bytes = samples["image/png"];
    const standard = base64(bytes);
    expect(standard).toMatch(/[+/]/);
    expect(standard).toMatch(/=$/);
    const urlSafe = base64url(bytes);
    expect(urlSafe).toMatch(/[-_]/);
    const variants = [
      standard,
      standard.replace(/=+$/, ""),
      urlSafe,
      urlSafe.padEnd(Math.ceil(urlSafe.length / 4) * 4, "="),
      standard.replace(/(.{8})/g, "$1\r\n"),
      `data:image/png;base64,${standard}`,
    ];
    for (const content of variants) {
      const url = await uploaded({ content, name: "x.png", type: "image/png" });
      expect(await bytesOf(await call(new URL(url).pathname)), content).toEqual(bytes);
    }
  });

  it("accepts a file without a name and image/jpg for image/jpeg", async () => {
    const url = await uploaded({ content: base64(samples["image/jpeg"]), type: "IMAGE/JPG" });
    const served = await call(new URL(url).pathname);
    expect(served.headers.get("Content-Type")).toBe("image/jpeg");
    expect(served.headers.get("Content-Disposition")).toBe("inline");
    await served.arrayBuffer();
  });

  it("refuses a PNG declared as JPEG", async () => {
    const body = await expectRejected(
      { content: base64(samples["image/png"]), name: "x.jpg", type: "image/jpeg" },
      400,
      "/media_file/content",
    );
    expect(body.errors?.[0]?.detail).toBe("is not an image/jpeg file");
  });

  it("refuses SVG, declared as SVG or as an image type", async () => {
    const svg = new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    await expectRejected({ content: base64(svg), name: "x.svg", type: "image/svg+xml" }, 400, "/media_file/type");
    await expectRejected({ content: base64(svg), name: "x.png", type: "image/png" }, 400, "/media_file/content");
  });

  it("refuses scripts and HTML declared as images or video", async () => {
    for (const text of ["<script>alert(1)</script>", "#!/bin/sh\nrm -rf /", "<!DOCTYPE html><html></html>"]) {
      const content = base64(new TextEncoder().encode(text));
      for (const type of Object.keys(samples)) {
        await expectRejected({ content, name: "x", type }, 400, "/media_file/content");
      }
    }
  });

  it("refuses a GIF-like prefix and an ftyp box without the right brand", async () => {
    const gif87 = new TextEncoder().encode("GIF87b......");
    await expectRejected({ content: base64(gif87), name: "x", type: "image/gif" }, 400, "/media_file/content");
    // An MP4 is not an AVIF, and an AVIF is not an MP4.
    const mp4 = base64(samples["video/mp4"]);
    await expectRejected({ content: mp4, name: "x", type: "image/avif" }, 400, "/media_file/content");
    const avif = base64(samples["image/avif"]);
    await expectRejected({ content: avif, name: "x", type: "video/mp4" }, 400, "/media_file/content");
  });

  it("refuses types outside the configured list", async () => {
    const body = await expectRejected(
      { content: base64(new Uint8Array([0x42, 0x4d, 1, 2, 3])), name: "x.bmp", type: "image/bmp" },
      400,
      "/media_file/type",
    );
    expect(body.errors?.[0]?.detail).toBe(
      "must be one of image/jpeg, image/png, image/gif, image/webp, image/avif, video/mp4",
    );
  });

  it("refuses invalid base64", async () => {
    for (const content of ["iVBOR!w0K", "iVBORw0K\u00e9", "iVBO+w0_", "a", "iVBORw0KGgo=AAAA"]) {
      await expectRejected({ content, name: "x", type: "image/png" }, 400, "/media_file/content");
    }
  });

  it("refuses an empty file", async () => {
    await expectRejected({ content: "", name: "x", type: "image/png" }, 400, "/media_file/content");
    await expectRejected({ content: "==", name: "x", type: "image/png" }, 400, "/media_file/content");
    await expectRejected({ content: " \n", name: "x", type: "image/png" }, 400, "/media_file/content");
  });

  it("refuses a media object with missing or mistyped fields", async () => {
    await expectRejected({ name: "x", type: "image/png" }, 400, "/media_file/content");
    await expectRejected({ content: base64(samples["image/png"]), name: "x" }, 400, "/media_file/type");
    await expectRejected({ content: 12, name: "x", type: "image/png" }, 400, "/media_file/content");
    await expectRejected("iVBORw0KGgo=", 400, "/media_file");
  });

  // Two 10 MiB uploads: on a loaded shared machine they take longer than the default 5 s.
  it("stores exactly MAX_MEDIA_BYTES and answers 413 for one byte more", { timeout: 30_000 }, async () => {
    const max = Number(env.MAX_MEDIA_BYTES);
    expect(max).toBe(10 * 1024 * 1024);
    const file = new Uint8Array(max + 1);
    file.set(samples["image/png"]);
    const atLimit = await uploaded({ content: base64(file.subarray(0, max)), name: "big.png", type: "image/png" });
    const head = await env.MEDIA.head(keyOf(atLimit));
    expect(head?.size).toBe(max);
    const body = await expectRejected(
      { content: base64(file), name: "big.png", type: "image/png" },
      413,
      "/media_file/content",
    );
    expect(body.detail).toBe(`media_file: is ${max + 1} bytes once decoded; the maximum is ${max} bytes.`);
  });

  it("refuses a body whose Content-Length exceeds MAX_BODY_BYTES before reading it", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const declared = Number(env.MAX_BODY_BYTES) + 1;
    const response = await postBody(a, "/v3.0/pinpoints", body, { "Content-Length": String(declared) });
    expect(response.status).toBe(413);
    await response.arrayBuffer();
    expect(pulled).toBeLessThanOrEqual(2);
  });

  it("lets the base64 of a 10 MiB file fit under MAX_BODY_BYTES", () => {
    const base64Length = Math.ceil((10 * 1024 * 1024) / 3) * 4;
    expect(base64Length + 10_000).toBeLessThan(Number(env.MAX_BODY_BYTES));
  });
});

describe("GET /media/{key}", () => {
  let url: string;
  let path: string;
  const bytes = samples["image/webp"];

  beforeAll(async () => {
    url = await uploaded(mediaFile("image/webp", "x.webp"));
    path = new URL(url).pathname;
  });

  it("is an absolute URL on the request's origin", () => {
    expect(url.startsWith(`${BASE}/media/m/`)).toBe(true);
  });

  it("is public and immutable, with type, ETag, length and nosniff", async () => {
    const response = await call(path);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("image/webp");
    expect(response.headers.get("ETag")).toMatch(/^"[0-9a-f]+"$/);
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Accept-Ranges")).toBe("bytes");
    expect(response.headers.get("Content-Length")).toBe(String(bytes.byteLength));
    expect(await bytesOf(response)).toEqual(bytes);
  });

  it("ignores a token and works cross-origin", async () => {
    const response = await call(path, {
      headers: { Authorization: "Bearer nonsense", Origin: "https://maps.example" },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    await response.arrayBuffer();
  });

  it("answers 304 to If-None-Match with the ETag", async () => {
    const first = await call(path);
    const etag = first.headers.get("ETag")!;
    await first.arrayBuffer();
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const response = await call(path, { headers: { "If-None-Match": header } });
      expect(response.status, header).toBe(304);
      expect(response.headers.get("ETag")).toBe(etag);
      expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
      expect(await response.text()).toBe("");
    }
    const changed = await call(path, { headers: { "If-None-Match": '"other"' } });
    expect(changed.status).toBe(200);
    await changed.arrayBuffer();
  });

  it("answers 412 when If-Match fails", async () => {
    const response = await call(path, { headers: { "If-Match": '"other"' } });
    expect(response.status).toBe(412);
    expect(response.headers.get("Cache-Control")).toBeNull();
    expect(response.headers.get("Content-Type")).toBe("application/problem+json");
    await response.arrayBuffer();
  });

  it("ignores malformed conditional headers (RFC 9110 §13.1) and serves the object", async () => {
    const cases: [string, string][] = [
      ["If-None-Match", "abc"],
      ["If-None-Match", "W/abc"],
      ["If-None-Match", '"abc'],
      ["If-None-Match", '"a", *'],
      ["If-Match", "abc"],
      ["If-Match", "W/abc"],
      ["If-Unmodified-Since", "garbage"],
      ["If-Unmodified-Since", "2000"],
      ["If-Modified-Since", "garbage"],
    ];
    for (const [name, value] of cases) {
      for (const method of ["GET", "HEAD"]) {
        const response = await call(path, { method, headers: { [name]: value } });
        expect(response.status, `${method} ${name}: ${value}`).toBe(200);
        expect(await bytesOf(response)).toEqual(method === "GET" ? bytes : new Uint8Array());
      }
    }
    const ranged = await call(path, { headers: { "If-None-Match": "abc", Range: "bytes=0-3" } });
    expect(ranged.status).toBe(206);
    expect(await bytesOf(ranged)).toEqual(bytes.subarray(0, 4));
  });

  it("evaluates valid If-Match, If-Unmodified-Since and If-Modified-Since in RFC 9110 order", async () => {
    const first = await call(path);
    const etag = first.headers.get("ETag")!;
    await first.arrayBuffer();
    const past = "Sat, 01 Jan 2000 00:00:00 GMT";
    const future = new Date(Date.now() + 86_400_000).toUTCString();
    const cases: [Record<string, string>, number][] = [
      [{ "If-Match": etag }, 200],
      [{ "If-Match": `"other", ${etag}` }, 200],
      [{ "If-Match": "*" }, 200],
      // If-Match compares strongly: a weak tag never matches.
      [{ "If-Match": `W/${etag}` }, 412],
      [{ "If-Unmodified-Since": past }, 412],
      [{ "If-Unmodified-Since": "Saturday, 01-Jan-00 00:00:00 GMT" }, 412],
      [{ "If-Unmodified-Since": "Sat Jan  1 00:00:00 2000" }, 412],
      [{ "If-Unmodified-Since": future }, 200],
      // A passing If-Match makes If-Unmodified-Since irrelevant, and a failing one wins over If-None-Match.
      [{ "If-Match": etag, "If-Unmodified-Since": past }, 200],
      [{ "If-Match": '"other"', "If-None-Match": etag }, 412],
      [{ "If-Modified-Since": future }, 304],
      [{ "If-Modified-Since": past }, 200],
      // If-None-Match takes precedence over If-Modified-Since.
      [{ "If-None-Match": '"other"', "If-Modified-Since": future }, 200],
      [{ "If-None-Match": etag, "If-Modified-Since": past }, 304],
      // A malformed header is ignored while the valid one still applies.
      [{ "If-None-Match": "abc", "If-Match": '"other"' }, 412],
      [{ "If-Match": "abc", "If-None-Match": etag }, 304],
    ];
    for (const [headers, status] of cases) {
      for (const method of ["GET", "HEAD"]) {
        const response = await call(path, { method, headers });
        expect(response.status, `${method} ${JSON.stringify(headers)}`).toBe(status);
        if (status !== 412) expect(response.headers.get("ETag")).toBe(etag);
        await response.arrayBuffer();
      }
    }
  });

  it("answers a conditional Range request with 206 when the preconditions hold", async () => {
    const etag = (await env.MEDIA.head(keyOf(url)))!.httpEtag;
    const response = await call(path, { headers: { Range: "bytes=0-3", "If-Match": `"other", ${etag}` } });
    expect(response.status).toBe(206);
    expect(await bytesOf(response)).toEqual(bytes.subarray(0, 4));
  });

  it("serves a Range only when If-Range names the current strong ETag, else the whole object (RFC 9110 §13.1.5)", async () => {
    const etag = (await env.MEDIA.head(keyOf(url)))!.httpEtag;
    const cases: [string, number][] = [
      [etag, 206],
      [` ${etag} `, 206],
      ['"other"', 200],
      // If-Range compares strongly, so a weak tag never matches.
      [`W/${etag}`, 200],
      // We send no Last-Modified, so no date can equal it.
      [new Date().toUTCString(), 200],
      ["garbage", 200],
    ];
    for (const [ifRange, status] of cases) {
      const response = await call(path, { headers: { Range: "bytes=0-3", "If-Range": ifRange } });
      expect(response.status, ifRange).toBe(status);
      expect(response.headers.get("Content-Range"), ifRange).toBe(
        status === 206 ? `bytes 0-3/${bytes.byteLength}` : null,
      );
      expect(response.headers.get("Content-Length"), ifRange).toBe(String(status === 206 ? 4 : bytes.byteLength));
      expect(await bytesOf(response), ifRange).toEqual(status === 206 ? bytes.subarray(0, 4) : bytes);
    }
    // An unsatisfiable range is ignored too when If-Range does not match, and If-Range alone changes nothing.
    const beyond = await call(path, { headers: { Range: `bytes=${bytes.byteLength}-`, "If-Range": '"other"' } });
    expect(beyond.status).toBe(200);
    expect(await bytesOf(beyond)).toEqual(bytes);
    const alone = await call(path, { headers: { "If-Range": '"other"' } });
    expect(alone.status).toBe(200);
    expect(await bytesOf(alone)).toEqual(bytes);
  });

  it("answers HEAD with the headers and no body, and 304 when the ETag matches", async () => {
    const response = await call(path, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("image/webp");
    expect(response.headers.get("Content-Length")).toBe(String(bytes.byteLength));
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(await response.text()).toBe("");
    const etag = response.headers.get("ETag")!;
    const again = await call(path, { method: "HEAD", headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
  });

  it("answers Range requests with 206 and Content-Range", async () => {
    const size = bytes.byteLength;
    const cases: [string, number, number][] = [
      ["bytes=0-3", 0, 3],
      ["bytes=4-", 4, size - 1],
      ["bytes=-5", size - 5, size - 1],
      ["bytes=2-1000", 2, size - 1],
    ];
    for (const [range, first, last] of cases) {
      const response = await call(path, { headers: { Range: range } });
      expect(response.status, range).toBe(206);
      expect(response.headers.get("Content-Range"), range).toBe(`bytes ${first}-${last}/${size}`);
      expect(response.headers.get("Content-Type")).toBe("image/webp");
      expect(response.headers.get("Content-Length")).toBe(String(last - first + 1));
      expect(await bytesOf(response), range).toEqual(bytes.subarray(first, last + 1));
    }
  });

  it("answers a range it does not serve, or one covering everything, with the whole object", async () => {
    for (const range of ["bytes=0-", "bytes=0-1,4-5", "items=0-1", "bytes=x"]) {
      const response = await call(path, { headers: { Range: range } });
      expect(response.status, range).toBe(200);
      expect(response.headers.get("Content-Range")).toBeNull();
      expect(await bytesOf(response), range).toEqual(bytes);
    }
  });

  it("answers 416 to a range beyond the object", async () => {
    for (const range of [
      `bytes=${bytes.byteLength}-`,
      `bytes=${bytes.byteLength + 10}-${bytes.byteLength + 20}`,
      "bytes=-0",
    ]) {
      const response = await call(path, { headers: { Range: range } });
      expect(response.status, range).toBe(416);
      expect(response.headers.get("Content-Range")).toBe(`bytes */${bytes.byteLength}`);
      await response.arrayBuffer();
    }
  });

  it("answers 404 problem details for a missing or malformed key", async () => {
    for (const missing of [
      "/media/m/00000000000000000000000000000000.png",
      "/media/nothing",
      "/media/m/../x",
      "/media/",
    ]) {
      const response = await call(missing);
      expect(response.status, missing).toBe(404);
      expect(response.headers.get("Content-Type")).toBe("application/problem+json");
      await response.arrayBuffer();
    }
  });

  it("answers 405 to other methods", async () => {
    const response = await call(path, { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toContain("GET");
    await response.arrayBuffer();
    expect(await bytesOf(await call(path))).toEqual(bytes);
  });
});

describe("the built-in icon", () => {
  it("is a PNG served from the Worker bundle", async () => {
    const response = await call("/media/builtin/default-pin.png");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("image/png");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const etag = response.headers.get("ETag")!;
    const png = await bytesOf(response);
    expect(png.subarray(0, 8)).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(response.headers.get("Content-Length")).toBe(String(png.byteLength));
    expect(new DataView(png.buffer, png.byteOffset).getUint32(16)).toBe(32); // IHDR width
    const cached = await call("/media/builtin/default-pin.png", { headers: { "If-None-Match": etag } });
    expect(cached.status).toBe(304);
    const head = await call("/media/builtin/default-pin.png", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("is category 1's image_url", async () => {
    const response = await a.get("/v3.0/categories/1");
    const body = await json(response);
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.image_url).toBe(`${BASE}/media/builtin/default-pin.png`);
  });
});

describe("media URLs", () => {
  const contextFor = (vars: Record<string, string>) =>
    ({
      var: { config: parseConfig(vars) },
      req: { url: "https://api.example.test/v3.0/pinpoints/7" },
    }) as unknown as Context<AppEnv>;

  it("use the request's origin by default", () => {
    const url = mediaUrls(contextFor({}));
    expect(url("m/abc.png")).toBe("https://api.example.test/media/m/abc.png");
    expect(url(null)).toBeNull();
  });

  it("use MEDIA_PUBLIC_BASE_URL when set, except for media bundled with the Worker", () => {
    const url = mediaUrls(contextFor({ MEDIA_PUBLIC_BASE_URL: "https://cdn.example/media/" }));
    expect(url("m/abc.png")).toBe("https://cdn.example/media/m/abc.png");
    expect(url("builtin/default-pin.png")).toBe("https://api.example.test/media/builtin/default-pin.png");
  });
});
