/**
 * Configuration ([vars], src/core/config.ts) beyond the defaults: requests go
 * through the app with some vars replaced, as a deployment configured
 * differently would run it. configFor() caches by env object, and each call
 * here passes a new one.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { defaults, parseConfig } from "../src/core/config";
import { BASE, basic, caller, createClient, fetchWith, json, type Caller, type TestClient } from "./helpers";
import { base64, bucketKeys, mediaFile, samples } from "./media-fixtures";

type Vars = Record<string, string>;
type Problem = { status: number; detail: string; errors?: { pointer: string; detail: string }[] };

function send(vars: Vars, who: Caller, method: string, path: string, body?: unknown): Promise<Response> {
  return fetchWith(vars, path, {
    method,
    headers: {
      Authorization: `Bearer ${who.token}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

function tokenWith(vars: Vars, client: TestClient): Promise<Response> {
  return fetchWith(vars, "/v3.0/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: basic(client.clientId, client.clientSecret),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
}

const place = { name: "Place", latitude: 1, longitude: 2 };
const pinpointWith = (vars: Vars, file: unknown) =>
  send(vars, a, "POST", "/v3.0/pinpoints", { ...place, media_file: file });

/** A PNG of exactly `size` bytes: the sample's signature, then zeros. */
function pngOf(size: number) {
  const bytes = new Uint8Array(size);
  bytes.set(samples["image/png"]);
  return { content: base64(bytes), name: "big.png", type: "image/png" };
}

async function expectRefused(response: Response, status: number, pointer: string): Promise<Problem> {
  const body = await json<Problem>(response);
  expect(response.status, JSON.stringify(body)).toBe(status);
  expect(body.errors?.map((e) => e.pointer)).toEqual([pointer]);
  return body;
}

let a: Caller;
beforeAll(async () => {
  a = await caller();
});

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

describe("MEDIA_TYPES", () => {
  it("narrows the accepted types: a JPEG is refused, a PNG stored", async () => {
    const vars = { MEDIA_TYPES: "image/png" };
    const before = await bucketKeys();
    const jpeg = await expectRefused(
      await pinpointWith(vars, mediaFile("image/jpeg", "x.jpg")),
      400,
      "/media_file/type",
    );
    expect(jpeg.errors?.[0]?.detail).toBe("must be one of image/png");
    expect(await bucketKeys()).toEqual(before);
    const png = await pinpointWith(vars, mediaFile("image/png"));
    expect(png.status).toBe(201);
    await png.arrayBuffer();
  });

  it("is read case-insensitively, and ignores types whose content cannot be checked", async () => {
    const vars = { MEDIA_TYPES: " IMAGE/GIF , image/svg+xml,,text/html, image/png " };
    const svg = base64(new TextEncoder().encode("<svg/>"));
    const refused = await expectRefused(
      await pinpointWith(vars, { content: svg, name: "x.svg", type: "image/svg+xml" }),
      400,
      "/media_file/type",
    );
    expect(refused.errors?.[0]?.detail).toBe("must be one of image/gif, image/png");
    const gif = await pinpointWith(vars, mediaFile("image/gif", "x.gif"));
    expect(gif.status).toBe(201);
    await gif.arrayBuffer();
  });

  it("narrows a category's image types too", async () => {
    const vars = { MEDIA_TYPES: "image/webp,video/mp4" };
    const body = await expectRefused(
      await send(vars, a, "POST", "/v3.0/categories", { name: "Icon", image_file: mediaFile("image/png") }),
      400,
      "/image_file/type",
    );
    expect(body.errors?.[0]?.detail).toBe("must be one of image/webp");
  });
});

describe("MAX_MEDIA_BYTES", () => {
  it("stores a file at the limit and answers 413 for one byte more, storing nothing", async () => {
    const vars = { MAX_MEDIA_BYTES: "100" };
    const atLimit = await pinpointWith(vars, pngOf(100));
    expect(atLimit.status).toBe(201);
    const { media_url } = await json<{ media_url: string }>(atLimit);
    expect((await env.MEDIA.head(new URL(media_url).pathname.slice("/media/".length)))?.size).toBe(100);
    const before = await bucketKeys();
    const over = await expectRefused(await pinpointWith(vars, pngOf(101)), 413, "/media_file/content");
    expect(over.detail).toBe("media_file: is 101 bytes once decoded; the maximum is 100 bytes.");
    expect(await bucketKeys()).toEqual(before);
  });
});

describe("MEDIA_PUBLIC_BASE_URL", () => {
  const vars = { MEDIA_PUBLIC_BASE_URL: "https://cdn.example/pictures/" };
  const cdn = /^https:\/\/cdn\.example\/pictures\/m\/[0-9a-f]{32}\.png$/;

  it("prefixes media_url and image_url in every response; category 1 stays on the Worker", async () => {
    const created = await pinpointWith(vars, mediaFile());
    const pinpoint = await json<{ id: number; media_url: string }>(created);
    expect(created.status).toBe(201);
    expect(pinpoint.media_url).toMatch(cdn);
    // The object is stored under the key the URL names.
    const key = pinpoint.media_url.slice("https://cdn.example/pictures/".length);
    expect(await env.MEDIA.head(key)).not.toBeNull();

    const got = await json<{ media_url: string }>(await send(vars, a, "GET", `/v3.0/pinpoints/${pinpoint.id}`));
    expect(got.media_url).toBe(pinpoint.media_url);
    const listed = await json<{ results: { id: number; media_url: string | null }[] }>(
      await send(vars, a, "GET", "/v3.0/pinpoints?limit=100"),
    );
    expect(listed.results.find((p) => p.id === pinpoint.id)?.media_url).toBe(pinpoint.media_url);

    const event = await send(vars, a, "POST", "/v3.0/events", {
      name: "Concert",
      pinpoint: pinpoint.id,
      dates: [{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T20:00:00Z" }],
      media_file: mediaFile(),
    });
    expect(event.status).toBe(201);
    expect((await json<{ media_url: string }>(event)).media_url).toMatch(cdn);

    const category = await send(vars, a, "POST", "/v3.0/categories", { name: "Icon", image_file: mediaFile() });
    expect(category.status).toBe(201);
    expect((await json<{ image_url: string }>(category)).image_url).toMatch(cdn);

    const builtin = await json<{ image_url: string }>(await send(vars, a, "GET", "/v3.0/categories/1"));
    expect(builtin.image_url).toBe(`${BASE}/media/builtin/default-pin.png`);
  });

  it("leaves URLs on the request's origin when empty or blank", async () => {
    for (const value of ["", "  "]) {
      const created = await pinpointWith({ MEDIA_PUBLIC_BASE_URL: value }, mediaFile());
      const { media_url } = await json<{ media_url: string }>(created);
      expect(media_url.startsWith(`${BASE}/media/m/`), value).toBe(true);
    }
  });
});

describe("MAP_STYLE_URL", () => {
  it("is OpenFreeMap's style when not set, an absolute http(s) URL, or null (empty) for the plain background", () => {
    expect(parseConfig({}).mapStyleUrl).toBe("https://tiles.openfreemap.org/styles/liberty");
    expect(parseConfig({ MAP_STYLE_URL: "" }).mapStyleUrl).toBeNull();
    expect(parseConfig({ MAP_STYLE_URL: "  " }).mapStyleUrl).toBeNull();
    // wrangler.toml states the default, so a deployment sees what it gets.
    expect(env.MAP_STYLE_URL).toBe(defaults.mapStyleUrl);
    expect(parseConfig({ MAP_STYLE_URL: " https://tiles.example/styles/basic.json " }).mapStyleUrl).toBe(
      "https://tiles.example/styles/basic.json",
    );
    expect(parseConfig({ MAP_STYLE_URL: "http://127.0.0.1:8080/style.json" }).mapStyleUrl).toBe(
      "http://127.0.0.1:8080/style.json",
    );
    // Not something a browser can fetch from the page, or a URL that would hand out a password: ignored.
    for (const bad of ["/style.json", "style.json", "ftp://tiles.example/s.json", "https://u:p@tiles.example/s.json"]) {
      expect(parseConfig({ MAP_STYLE_URL: bad }).mapStyleUrl, bad).toBeNull();
    }
  });
});

describe("EMAIL_FROM", () => {
  it("is the sender of invitation mails when it is an address, and null (no mail) otherwise", () => {
    expect(parseConfig({}).emailFrom).toBeNull();
    expect(env.EMAIL_FROM).toBe("");
    expect(parseConfig({ EMAIL_FROM: " invites@example.com " }).emailFrom).toBe("invites@example.com");
    expect(parseConfig({ EMAIL_FROM: "maps+invites@mail.example.co.uk" }).emailFrom).toBe(
      "maps+invites@mail.example.co.uk",
    );
    for (const bad of [
      "",
      "invites",
      "invites@localhost",
      "Maps <invites@example.com>",
      "a b@example.com",
      "@example.com",
    ]) {
      expect(parseConfig({ EMAIL_FROM: bad }).emailFrom, bad).toBeNull();
    }
  });
});

describe("TOKEN_TTL_SECONDS", () => {
  it("sets expires_in and the token's lifetime", async () => {
    const vars = { TOKEN_TTL_SECONDS: "60" };
    const client = await createClient();
    const issuedAt = Date.now();
    clock.now = () => issuedAt;
    const response = await tokenWith(vars, client);
    const body = await json<{ access_token: string; expires_in: number }>(response);
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.expires_in).toBe(60);
    const read = (at: number) => {
      clock.now = () => at;
      return fetchWith(vars, "/v3.0/pinpoints", { headers: { Authorization: `Bearer ${body.access_token}` } });
    };
    const fresh = await read(issuedAt + 59_000);
    expect(fresh.status).toBe(200);
    await fresh.arrayBuffer();
    const expired = await read(issuedAt + 61_000);
    expect(expired.status).toBe(401);
    await expired.arrayBuffer();
  });
});

describe("PUBLIC_ORIGIN", () => {
  it("is an http(s) origin, spelled as URL.origin spells it; anything else is none", () => {
    const origin = (value: unknown) => parseConfig({ PUBLIC_ORIGIN: value }).publicOrigin;
    expect(origin("https://API.example.com/")).toBe("https://api.example.com");
    expect(origin(" http://localhost:8787 ")).toBe("http://localhost:8787");
    expect(origin("https://api.example.com:443")).toBe("https://api.example.com");
    for (const bad of [
      undefined,
      "",
      " ",
      "api.example.com",
      "ftp://api.example.com",
      "https://api.example.com/v3.0",
    ]) {
      expect(origin(bad), String(bad)).toBeNull();
    }
    for (const bad of [
      "https://api.example.com/?x=1",
      "https://api.example.com/#x",
      "https://u:p@api.example.com",
      {},
    ]) {
      expect(origin(bad), String(bad)).toBeNull();
    }
  });
});

describe("malformed values", () => {
  it("fall back to the defaults", () => {
    for (const bad of ["abc", "-5", "0", "1.5", "", " ", "9007199254740993"]) {
      const config = parseConfig({ TOKEN_TTL_SECONDS: bad, MAX_BODY_BYTES: bad, MAX_MEDIA_BYTES: bad });
      expect(config.tokenTtlSeconds, bad).toBe(defaults.tokenTtlSeconds);
      expect(config.maxBodyBytes, bad).toBe(defaults.maxBodyBytes);
      expect(config.maxMediaBytes, bad).toBe(defaults.maxMediaBytes);
    }
    for (const empty of ["", " , "]) {
      const config = parseConfig({ MEDIA_TYPES: empty, CORS_ORIGINS: empty });
      expect([...config.mediaTypes].join(","), empty).toBe(defaults.mediaTypes);
      expect(config.corsOrigins, empty).toEqual([defaults.corsOrigins]);
    }
    // A value that is not a string at all (a misconfigured binding) is ignored the same way.
    expect(parseConfig({ TOKEN_TTL_SECONDS: 60, MEDIA_PUBLIC_BASE_URL: {} })).toMatchObject({
      tokenTtlSeconds: defaults.tokenTtlSeconds,
      mediaPublicBaseUrl: null,
    });
  });

  it("TOKEN_TTL_SECONDS=-5 issues tokens for the default lifetime", async () => {
    const response = await tokenWith({ TOKEN_TTL_SECONDS: "-5" }, await createClient());
    const body = await json<{ expires_in: number }>(response);
    expect(response.status).toBe(200);
    expect(body.expires_in).toBe(defaults.tokenTtlSeconds);
  });

  it("MAX_MEDIA_BYTES=abc keeps the 10 MiB limit", async () => {
    const max = defaults.maxMediaBytes;
    const small = await pinpointWith({ MAX_MEDIA_BYTES: "abc" }, pngOf(1000));
    expect(small.status).toBe(201);
    await small.arrayBuffer();
    const over = await expectRefused(
      await pinpointWith({ MAX_MEDIA_BYTES: "abc" }, pngOf(max + 1)),
      413,
      "/media_file/content",
    );
    expect(over.detail).toBe(`media_file: is ${max + 1} bytes once decoded; the maximum is ${max} bytes.`);
  });
});
