/**
 * The one entity-tag parser (src/http/etag.ts) of If-Match and If-None-Match,
 * for resources and media: RFC 9110 lists in one pass, and nothing parsed past
 * MAX_CONDITIONAL_HEADER_LENGTH, where an If-None-Match is ignored and an
 * If-Match matches nothing. How long parsing takes belongs to the benchmarks;
 * what is tested here is which inputs are parsed at all.
 */
import { describe, expect, it } from "vitest";
import { MAX_CONDITIONAL_HEADER_LENGTH, parseEntityTags } from "../src/http/etag";
import { call, caller, json } from "./helpers";

/** Foreign tags, then `last`: a list of exactly `length` characters. */
function listOfLength(length: number, last: string): string {
  const filler = `"x", `;
  const count = Math.floor((length - last.length) / filler.length);
  const head = filler.repeat(count);
  return head + " ".repeat(length - head.length - last.length) + last;
}

describe("parseEntityTags", () => {
  it("reads RFC 9110 lists: weak tags, empty elements, commas inside a tag", () => {
    expect(parseEntityTags(`"1"`)).toEqual({ kind: "tags", tags: [{ opaque: `"1"`, weak: false }] });
    expect(parseEntityTags(` , W/"a" ,,"b,c",\t"" `)).toEqual({
      kind: "tags",
      tags: [
        { opaque: `"a"`, weak: true },
        { opaque: `"b,c"`, weak: false },
        { opaque: `""`, weak: false },
      ],
    });
    expect(parseEntityTags(" * ")).toEqual({ kind: "any" });
  });

  it("refuses anything else as a whole", () => {
    for (const value of ["", " , ", "abc", "W/abc", '"abc', '"a", *', '"a" "b"', '"a"x', 'w/"a"', '"a b"', '"a\x7f"']) {
      expect(parseEntityTags(value), JSON.stringify(value)).toEqual({ kind: "invalid" });
    }
  });

  it("does not parse a value longer than the bound, however well formed", () => {
    expect(parseEntityTags(listOfLength(MAX_CONDITIONAL_HEADER_LENGTH, `"1"`))).toMatchObject({ kind: "tags" });
    expect(parseEntityTags(listOfLength(MAX_CONDITIONAL_HEADER_LENGTH + 1, `"1"`))).toEqual({ kind: "invalid" });
    expect(parseEntityTags(`x${" ".repeat(30_000)}x`)).toEqual({ kind: "invalid" });
    expect(parseEntityTags(`"1"${" ".repeat(60_000)}`)).toEqual({ kind: "invalid" });
  });
});

describe("conditional headers longer than the bound", () => {
  const over = (tag: string) => listOfLength(MAX_CONDITIONAL_HEADER_LENGTH + 1, tag);
  const under = (tag: string) => listOfLength(MAX_CONDITIONAL_HEADER_LENGTH, tag);

  it("If-None-Match is ignored: the resource is sent, not 304", async () => {
    const reader = await caller("read");
    const response = await reader.get("/v3.0/categories/1", { "If-None-Match": over(`"1"`) });
    expect(response.status).toBe(200);
    expect((await json(response)).id).toBe(1);
    const spaces = await reader.get("/v3.0/categories/1", { "If-None-Match": `x${" ".repeat(30_000)}x` });
    expect(spaces.status).toBe(200);
    await spaces.arrayBuffer();
    // Up to the bound, the list is read to its end.
    expect((await reader.get("/v3.0/categories/1", { "If-None-Match": under(`"1"`) })).status).toBe(304);
  });

  it("If-Match matches nothing: a write naming the current ETag is 412 and changes nothing", async () => {
    const writer = await caller();
    const created = await writer.send("POST", "/v3.0/lists", { name: "kept" });
    const { id } = await json<{ id: number }>(created);
    const etag = created.headers.get("ETag")!;
    const refused = await writer.send("PUT", `/v3.0/lists/${id}`, { name: "lost" }, { "If-Match": over(etag) });
    expect(refused.status).toBe(412);
    await refused.arrayBuffer();
    const deleted = await writer.send("DELETE", `/v3.0/lists/${id}`, undefined, { "If-Match": over(etag) });
    expect(deleted.status).toBe(412);
    await deleted.arrayBuffer();
    expect((await json(await writer.get(`/v3.0/lists/${id}`))).name).toBe("kept");
    const ok = await writer.send("PUT", `/v3.0/lists/${id}`, { name: "changed" }, { "If-Match": under(etag) });
    expect(ok.status).toBe(200);
    await ok.arrayBuffer();
  });

  it("on media, If-None-Match is ignored like any header that does not parse", async () => {
    const path = "/media/builtin/default-pin.png";
    const etag = (await call(path, { method: "HEAD" })).headers.get("ETag")!;
    const response = await call(path, { headers: { "If-None-Match": over(etag) } });
    expect(response.status).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(0);
    expect((await call(path, { method: "HEAD", headers: { "If-None-Match": under(etag) } })).status).toBe(304);
  });
});
