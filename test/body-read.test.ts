/**
 * readBodyWithin: BYOB reads into one buffer for byte streams (request bodies),
 * chunk by chunk otherwise; all of the body whatever the declared length says,
 * and a 413 past the maximum.
 */
import { describe, expect, it } from "vitest";
import { readBodyWithin } from "../src/http/body";
import { ApiError } from "../src/core/problem";

function bytes(n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => i % 251);
}

/** A byte stream that hands out `data` in pieces of `piece` bytes. */
function byteStream(data: Uint8Array, piece = 4096): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (at >= data.byteLength) return controller.close();
      controller.enqueue(data.slice(at, at + piece));
      at += piece;
    },
  });
}

function plainStream(data: Uint8Array, piece = 4096): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= data.byteLength) return controller.close();
      controller.enqueue(data.slice(at, at + piece));
      at += piece;
    },
  });
}

describe("readBodyWithin", () => {
  const data = bytes(200_000);

  for (const [kind, stream] of [
    ["byte stream", byteStream],
    ["plain stream", plainStream],
  ] as const) {
    it(`reads a whole ${kind} with its exact length declared`, async () => {
      expect(await readBodyWithin(stream(data), 1_000_000, data.byteLength)).toEqual(data);
    });

    it(`reads a whole ${kind} longer than declared`, async () => {
      expect(await readBodyWithin(stream(data), 1_000_000, 1000)).toEqual(data);
    });

    it(`reads a whole ${kind} with no length declared`, async () => {
      expect(await readBodyWithin(stream(data), 1_000_000, null)).toEqual(data);
    });

    it(`reads an empty ${kind}`, async () => {
      expect(await readBodyWithin(stream(new Uint8Array()), 1000, 0)).toEqual(new Uint8Array());
    });

    it(`refuses a ${kind} past the maximum with 413`, async () => {
      const error = await readBodyWithin(stream(data), 100_000, null).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(413);
    });
  }

  it("refuses a byte stream that runs past its declared length and the maximum", async () => {
    const error = await readBodyWithin(byteStream(data), 150_000, 150_000).catch((e: unknown) => e);
    expect((error as ApiError).status).toBe(413);
  });
});
