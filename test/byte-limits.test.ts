/**
 * Limits stated in bytes are counted in bytes: a bulk insert's statements stay
 * under D1's 2 MB string limit when every character is three or four bytes
 * of UTF-8 (src/core/utf8.ts, src/pinpoints/bulk-insert.ts), and the largest
 * pinpoint a request can create is stored whole, replayed whole under its
 * Idempotency-Key and read back whole.
 */
import { describe, expect, it } from "vitest";
import { utf8Length } from "../src/core/utf8";
import { DEFAULT_MAX_BODY_BYTES } from "../src/http/route-metadata";
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from "../src/fields/schemas";
import { chunkRows, MAX_CHUNK_BYTES, type BulkRow } from "../src/pinpoints/bulk-insert";
import { caller, json, postBody } from "./helpers";

const encoded = (text: string) => new TextEncoder().encode(text).byteLength;

/** `n` UTF-16 code units of `unit`, which is one or two units long. */
const fill = (unit: string, n: number) => unit.repeat(n / unit.length);

const EMOJI = "🗺️".slice(0, 2); // U+1F5FA: two UTF-16 units, four bytes
const CJK = "博"; // one unit, three bytes

describe("utf8Length", () => {
  it("equals the encoder's byte count for every kind of character, lone surrogates included", () => {
    const pieces = ["a", "é", "€", CJK, EMOJI, "\ud83d", "\ude00", "\u0000", "\u07ff", "\u0800", "\uffff"];
    let seed = 11;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let round = 0; round < 500; round++) {
      const text = Array.from(
        { length: Math.floor(random() * 40) },
        () => pieces[Math.floor(random() * pieces.length)],
      ).join("");
      expect(utf8Length(text), JSON.stringify(text)).toBe(encoded(text));
    }
  });
});

describe("bulk insert chunks", () => {
  const row = (description: string, i: number): BulkRow => ({
    name: `Place ${i}`,
    address: null,
    altitude: null,
    category: null,
    description,
    latitude: 0,
    longitude: 0,
    media_credits: null,
    tags: [],
  });

  for (const [what, unit] of [
    ["three-byte", CJK],
    ["four-byte", EMOJI],
  ] as const) {
    it(`keeps every statement's parameter under the limit in bytes with ${what} characters`, () => {
      const rows = Array.from({ length: 60 }, (_, i) => row(fill(unit, MAX_DESCRIPTION_LENGTH - 2), i));
      const chunks = chunkRows(rows);
      for (const chunk of chunks) expect(encoded(chunk.json)).toBeLessThanOrEqual(MAX_CHUNK_BYTES);
      // Counting code units would have packed several times more rows into each statement.
      expect(chunks.length).toBeGreaterThan(rows.length / 3);
      const names = chunks.flatMap((chunk) => (JSON.parse(chunk.json) as unknown[][]).map((r) => r[0]));
      expect(names).toEqual(rows.map((r) => r.name));
      expect(chunks.reduce((sum, chunk) => sum + chunk.count, 0)).toBe(rows.length);
    });
  }
});

describe("the largest pinpoint", () => {
  it("is created, replayed under its Idempotency-Key and read back byte for byte", async () => {
    const who = await caller();
    const body = {
      name: fill(EMOJI, MAX_NAME_LENGTH),
      latitude: 1,
      longitude: 2,
      description: `<p>${fill(EMOJI, MAX_DESCRIPTION_LENGTH - 8)}</p>`,
      tags: Array.from({ length: 100 }, (_, i) => String(i).padStart(2, "0") + fill(CJK, 98)),
    };
    const headers = { "Idempotency-Key": "largest-pinpoint" };
    const first = await who.send("POST", "/v3.0/pinpoints", body, headers);
    expect(first.status).toBe(201);
    const created = await first.text();
    expect(utf8Length(created)).toBeGreaterThan(200_000);
    const replay = await who.send("POST", "/v3.0/pinpoints", body, headers);
    expect(replay.status).toBe(201);
    expect(await replay.text()).toBe(created);
    const { id, description, tags, name } = JSON.parse(created) as { id: number } & typeof body;
    expect({ name, description, tags: [...tags].sort() }).toEqual({
      name: body.name,
      description: body.description,
      tags: [...body.tags].sort(),
    });
    const read = await json<typeof body>(await who.get(`/v3.0/pinpoints/${id}`));
    expect(read.description).toBe(body.description);
  });
});

describe("a body limit", () => {
  /** A JSON body of exactly `bytes` bytes of UTF-8, nearly all of it four-byte characters. */
  const bodyOf = (bytes: number) => {
    const frame = '{"name":""}';
    const room = bytes - frame.length;
    return `{"name":"${fill(EMOJI, Math.floor(room / 4) * 2)}${"x".repeat(room % 4)}"}`;
  };

  it("is counted in bytes, not characters, with or without a declared length", async () => {
    const who = await caller();
    const post = (text: string, declared: boolean) => {
      const data = new TextEncoder().encode(text);
      const body = declared ? data : new Blob([data]).stream();
      // Publishable keys take the default limit (src/http/route-metadata.ts).
      return postBody(who, "/v3.0/keys", body);
    };
    for (const declared of [true, false]) {
      const atLimit = bodyOf(DEFAULT_MAX_BODY_BYTES);
      expect(encoded(atLimit)).toBe(DEFAULT_MAX_BODY_BYTES);
      // Under the limit in UTF-16 code units, exactly at it in bytes: read, then refused by the name's own rule.
      expect(atLimit.length).toBeLessThan(DEFAULT_MAX_BODY_BYTES / 1.9);
      expect((await post(atLimit, declared)).status).toBe(400);
      const over = bodyOf(DEFAULT_MAX_BODY_BYTES + 1);
      expect(over.length).toBeLessThan(DEFAULT_MAX_BODY_BYTES / 1.9);
      expect((await post(over, declared)).status).toBe(413);
    }
  });
});
