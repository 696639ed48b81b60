/**
 * Pinpoints: the five operations, field rules (required fields, bounds, types,
 * category, tags, sanitized descriptions), partial PUT and the delete cascade
 * into lists.
 */
import { describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import { sanitizeHtml, sanitizeWithRewriter } from "../src/fields/sanitize-html";
import { BASE, caller, createList, createPinpoint, json, type Caller } from "./helpers";

type Problem = { type: string; status: number; detail: string; errors?: { pointer?: string; detail: string }[] };

const valid = { name: "Eiffel Tower", latitude: 48.8584, longitude: 2.2945 };

/** Every field the original API gives a pinpoint response, plus the additive timestamps and actors. */
const RESPONSE_FIELDS = [
  "id",
  "name",
  "address",
  "altitude",
  "category",
  "description",
  "latitude",
  "longitude",
  "media_credits",
  "media_url",
  "tags",
  "created_at",
  "updated_at",
  "created_by",
  "updated_by",
].sort();

async function expect400(response: Response, pointers: string[]): Promise<Problem> {
  const body = await json<Problem>(response);
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
  expect(body.status).toBe(400);
  expect((body.errors ?? []).map((e) => e.pointer).sort()).toEqual([...pointers].sort());
  return body;
}

const post = (who: Caller, body: unknown) => who.send("POST", "/v3.0/pinpoints", body);

describe("POST /v3.0/pinpoints", () => {
  it("answers 201 with the full object and an absolute Location", async () => {
    const a = await caller();
    const response = await post(a, valid);
    const body = await json(response);
    expect(response.status).toBe(201);
    expect(Object.keys(body).sort()).toEqual(RESPONSE_FIELDS);
    expect(body).toMatchObject({
      ...valid,
      address: null,
      altitude: null,
      category: null,
      description: null,
      media_credits: null,
      media_url: null,
      tags: [],
    });
    expect(typeof body.id).toBe("number");
    expect(response.headers.get("Location")).toBe(`${BASE}/v3.0/pinpoints/${body.id}`);
    expect(new Date(body.created_at as string).toISOString()).toBe(body.created_at);
    expect(body.updated_at).toBe(body.created_at);
  });

  it("stores and returns every optional field", async () => {
    const a = await caller();
    const response = await post(a, {
      ...valid,
      address: " Champ de Mars, 75007 Paris ",
      altitude: 330.5,
      category: 1,
      description: "<p>Iron <strong>lattice</strong> tower</p>",
      media_credits: "© Somebody",
      tags: ["landmark", "paris"],
    });
    const body = await json(response);
    expect(response.status).toBe(201);
    const expected = {
      ...valid,
      address: "Champ de Mars, 75007 Paris",
      altitude: 330.5,
      category: 1,
      description: "<p>Iron <strong>lattice</strong> tower</p>",
      media_credits: "© Somebody",
      tags: ["landmark", "paris"],
    };
    expect(body).toMatchObject(expected);
    const read = await json(await a.get(`/v3.0/pinpoints/${body.id}`));
    expect(read).toEqual(body);
  });

  it("replaces each lone surrogate with one U+FFFD in every text field", async () => {
    const a = await caller();
    // JSON.stringify sends them as \ud800-style escapes, which JSON allows.
    const body = await createPinpoint(a, {
      name: "a\ud800b",
      address: "\udc00x",
      media_credits: "c\udbff",
      tags: ["t\ud800", "t\udfff", "\ud83d\ude00"],
      description: "<p>d\ud800</p>",
    });
    const expected = {
      name: "a\ufffdb",
      address: "\ufffdx",
      media_credits: "c\ufffd",
      tags: ["t\ufffd", "\ud83d\ude00"],
      description: "<p>d\ufffd</p>",
    };
    // Compared as JSON text: a lone surrogate in a failure message would break the test runner's own channel.
    const fields = (object: Record<string, unknown>) =>
      JSON.stringify(Object.fromEntries(Object.keys(expected).map((key) => [key, object[key]])));
    expect(fields(body)).toBe(JSON.stringify(expected));
    expect(fields(await json(await a.get(`/v3.0/pinpoints/${body.id}`)))).toBe(JSON.stringify(expected));
    const updated = await json(await a.send("PUT", `/v3.0/pinpoints/${body.id}`, { name: "\udc00\ud800" }));
    expect(JSON.stringify(updated.name)).toBe(JSON.stringify("\ufffd\ufffd"));
  });

  it("accepts the slashed path and ignores unknown fields", async () => {
    const a = await caller();
    const response = await a.send("POST", "/v3.0/pinpoints/", { ...valid, id: 999_999, account_id: 1, color: "red" });
    const body = await json(response);
    expect(response.status).toBe(201);
    expect(body.id).not.toBe(999_999);
    expect(body).not.toHaveProperty("color");
    expect(body).not.toHaveProperty("account_id");
  });

  it("requires name, latitude and longitude, each named by a pointer", async () => {
    const a = await caller();
    await expect400(await post(a, {}), ["/name", "/latitude", "/longitude"]);
    await expect400(await post(a, { latitude: 1, longitude: 2 }), ["/name"]);
    await expect400(await post(a, { name: "x", longitude: 2 }), ["/latitude"]);
    await expect400(await post(a, { name: "x", latitude: 1 }), ["/longitude"]);
    await expect400(await post(a, { ...valid, name: null }), ["/name"]);
    await expect400(await post(a, { ...valid, latitude: null }), ["/latitude"]);
  });

  it.each([
    ["latitude", -90.0001, "/latitude"],
    ["latitude", 90.0001, "/latitude"],
    ["longitude", -180.5, "/longitude"],
    ["longitude", 181, "/longitude"],
    ["altitude", -20_001, "/altitude"],
    ["altitude", 100_001, "/altitude"],
    ["name", "", "/name"],
    ["name", "   ", "/name"],
    ["name", "n".repeat(201), "/name"],
    ["address", "a".repeat(501), "/address"],
    ["media_credits", "c".repeat(1001), "/media_credits"],
  ])("rejects %s = %j out of bounds", async (field, value, pointer) => {
    const a = await caller();
    const body = await expect400(await post(a, { ...valid, [field]: value }), [pointer]);
    expect(body.errors![0]!.detail).toBeTruthy();
  });

  it("accepts the bounds themselves", async () => {
    const a = await caller();
    for (const [latitude, longitude, altitude] of [
      [-90, -180, -20_000],
      [90, 180, 100_000],
      [0, 0, 0],
    ]) {
      const body = await createPinpoint(a, { latitude, longitude, altitude, name: "n".repeat(200) });
      expect(body).toMatchObject({ latitude, longitude, altitude });
    }
  });

  it("reports the range in the latitude error", async () => {
    const a = await caller();
    const body = await expect400(await post(a, { ...valid, latitude: 91 }), ["/latitude"]);
    expect(body.errors![0]!.detail).toBe("must be between -90 and 90");
  });

  it.each([
    ["name", 42, ["/name"]],
    ["latitude", "48.85", ["/latitude"]],
    ["longitude", true, ["/longitude"]],
    ["altitude", "high", ["/altitude"]],
    ["address", 7, ["/address"]],
    ["category", "1", ["/category"]],
    ["category", 1.5, ["/category"]],
    ["category", 0, ["/category"]],
    ["description", { html: "x" }, ["/description"]],
    ["media_credits", [], ["/media_credits"]],
    ["tags", "a,b", ["/tags"]],
    ["tags", [1, "ok", 2], ["/tags/0", "/tags/2"]],
  ])("rejects %s of the wrong type (%j)", async (field, value, pointers) => {
    const a = await caller();
    await expect400(await post(a, { ...valid, [field]: value }), pointers);
  });

  it("lists every offending field at once", async () => {
    const a = await caller();
    await expect400(await post(a, { name: "", latitude: 100, longitude: "x", tags: "no" }), [
      "/name",
      "/latitude",
      "/longitude",
      "/tags",
    ]);
  });

  it("rejects a body that is not an object", async () => {
    const a = await caller();
    for (const body of [[valid], "pinpoint", 42, null]) {
      const response = await post(a, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      await response.body?.cancel();
    }
  });

  it("accepts the built-in category 1 and refuses an unknown one", async () => {
    const a = await caller();
    expect((await createPinpoint(a, { category: 1 })).category).toBe(1);
    const body = await expect400(await post(a, { ...valid, category: 987_654 }), ["/category"]);
    expect(body.detail).not.toMatch(/SQL|constraint|FOREIGN/i);
  });

  it("trims tags, drops empty ones and duplicates, keeps order", async () => {
    const a = await caller();
    const body = await createPinpoint(a, { tags: [" b ", "a", "", "  ", "b", "c", "a ", "B"] });
    expect(body.tags).toEqual(["b", "a", "c", "B"]);
    expect((await createPinpoint(a, { tags: null })).tags).toEqual([]);
    expect((await createPinpoint(a, { tags: [] })).tags).toEqual([]);
  });
});

describe("descriptions are sanitized (HTMLRewriter in workerd)", () => {
  const cases: [string, string, string][] = [
    ["script", "<p>Hi<script>alert(1)</script></p>", "<p>Hi</p>"],
    ["upper-case script", "<SCRIPT>alert(1)</SCRIPT><p>x</p>", "<p>x</p>"],
    ["event handler", '<p onclick="alert(1)" title="t">x</p>', '<p title="t">x</p>'],
    ["img onerror", '<img src="a.png" onerror="alert(1)" alt="a">', '<img src="a.png" alt="a">'],
    ["javascript: href", '<a href="javascript:alert(1)">x</a>', "<a>x</a>"],
    ["entity-encoded javascript:", '<a href="jav&#x61;script:alert(1)">x</a>', "<a>x</a>"],
    ["decimal entity, no semicolon", '<a href="&#106avascript:alert(1)">x</a>', "<a>x</a>"],
    ["tab inside the scheme", '<a href="java&#9;script:alert(1)">x</a>', "<a>x</a>"],
    ["&colon;", '<a href="javascript&colon;alert(1)">x</a>', "<a>x</a>"],
    ["leading space and case", '<a href="  JaVaScRiPt:alert(1)">x</a>', "<a>x</a>"],
    ["data: URL", '<a href="data:text/html,<script>alert(1)</script>">x</a>', "<a>x</a>"],
    ["vbscript:", '<a href="vbscript:msgbox(1)">x</a>', "<a>x</a>"],
    ["iframe", '<p>a</p><iframe src="https://evil.example"></iframe>', "<p>a</p>"],
    ["style element", "<style>body{display:none}</style><p>a</p>", "<p>a</p>"],
    ["style attribute", '<p style="background:url(javascript:x)">a</p>', "<p>a</p>"],
    ["object/embed", '<object data="x.swf"></object><embed src="x.swf"><p>a</p>', "<p>a</p>"],
    ["svg with script", "<svg><script>alert(1)</script></svg><p>a</p>", "<p>a</p>"],
    ["form", '<form action="https://evil.example"><input name="q"></form><p>a</p>', "<p>a</p>"],
    ["comment", "<!-- secret --><p>a</p>", "<p>a</p>"],
    ["unknown element keeps its text", "<blink>a</blink>", "a"],
    ["meta refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><p>a</p>', "<p>a</p>"],
    // Raw-text elements: their content is text to the parser and would read as markup once unwrapped.
    ["xmp", "<p>a</p><xmp><script>alert(1)</script></xmp>", "<p>a</p>"],
    ["noembed", "<p>a</p><noembed><img src=x onerror=alert(1)></noembed>", "<p>a</p>"],
    ["plaintext", "<p>a</p><plaintext><script>alert(1)</script>", "<p>a</p>"],
    // Removing a tag or comment must not join a text "<" with the text after it into a tag.
    ["a tag between < and text", "<<b>script>alert(1)<</b>/script>", "&lt;<b>script>alert(1)&lt;</b>/script>"],
    ["an unknown tag between < and text", "<<x>img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)>"],
    ["a comment between < and text", "<<!---->img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)>"],
    ["a tag named like an Object property", '<constructor title="x">a</constructor>', "a"],
    ["a bare < in text", "a < b", "a &lt; b"],
    // A tag left open at the end would be completed by the next ">" of the page embedding the description.
    ["an unfinished tag at the end", "<p>a</p><img src=x onerror=alert(1)//", "<p>a</p><img src=x>"],
    [
      "an unfinished attribute value",
      '<p>a</p><img title="x onerror=alert(1)',
      '<p>a</p><img title="x onerror=alert(1)">',
    ],
    ["an unfinished comment", "<p>a</p><!-- <img src=x onerror=alert(1)>", "<p>a</p>"],
    ["an unfinished script", "<p>a</p><script>alert(1)", "<p>a</p>"],
    ["an unfinished javascript: link", '<p>a</p><a href="javascript:alert(1)', "<p>a</p><a>"],
    // Browsers use the first of two attributes with one name; other parsers may use the last.
    ["a duplicate unsafe href", '<a href="https://ok.example" href="javascript:alert(1)">x</a>', "<a>x</a>"],
    // A name starting with "=" is inert in an HTML5 browser but reads as an event handler to other tokenizers.
    ["an attribute name starting with =", "<p =onclick=alert(1)>a</p>", "<p>a</p>"],
    ["an attribute named = after a kept one", "<img src=x ==onerror=alert(1)>", '<img src="x">'],
    [
      "an =-name among kept ones",
      `<p title='a"b' =x lang=en>a<b>b</b></p>`,
      '<p title="a&quot;b" lang="en">a<b>b</b></p>',
    ],
    ["an =-name on an element without its end tag", "<p =onclick=alert(1)>a<p>b", "<p>a<p>b"],
    // End tags are stored bare, whatever followed their name, matched or stray.
    ["an end tag with an attribute", "<p>a</p onclick=alert(1)>", "<p>a</p>"],
    ["a stray end tag with an attribute", "a</b onclick=alert(1)>b</x\tonmouseover=alert(1)>", "a</b>b</x>"],
    ["an end tag with a slash and attribute", "<b>a</b/onclick=alert(1)>", "<b>a</b>"],
    // The parser refuses a raw-text element where it cannot tell how to read it: the whole input is kept as text.
    ...(
      [
        "<select><style>a</style></select>",
        "<select><title>a</title></select>",
        "<p>x</p><select><xmp><script>alert(1)</script></xmp>",
        "<frameset><style>a</style>",
      ] as const
    ).map((input): [string, string, string] => [
      `the markup of ${input}, which the parser rejects, by keeping it all as text`,
      input,
      input.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;"),
    ]),
  ];

  it.each(cases)("removes %s", async (_, input, expected) => {
    const a = await caller();
    expect((await createPinpoint(a, { description: input })).description).toBe(expected);
  });

  it("keeps ordinary markup", async () => {
    const a = await caller();
    const html =
      '<p>Visit <a href="https://example.com/x?a=1&amp;b=2">us</a> or <a href="/relative">here</a>, ' +
      '<a href="mailto:a@example.com">mail</a></p><ul><li><strong>one</strong></li><li><em>two</em></li></ul>' +
      "<h2>Title</h2><p>5 &lt; 6 &amp; text</p>";
    expect((await createPinpoint(a, { description: html })).description).toBe(html);
  });

  it("returns clean markup as written, as the rewriter would, without it; anything else goes through it", async () => {
    const clean = [
      "<p>Point of interest number <strong>42</strong>, imported from a file.</p>",
      "  plain text, with > and & and &amp; and &lt;  ",
      "<p>a<p>b</p></p></br><ul><li>x</li></ul><h2>t</h2><table><tr><td>1</td></tr></table><img><a>l</a>",
      "<pre>\n  x\n</pre>\r\n<b>é 😀</b>",
      "",
    ];
    for (const html of clean) {
      expect(await sanitizeHtml(html)).toBe(html.trim());
      expect(await sanitizeWithRewriter(html)).toBe(html.trim());
    }
    // Near misses of the clean form: the same answer as the rewriter's, which changes each of them.
    const others = [
      "<p title=x>a</p>",
      "<P>a</P>",
      "<blink>a</blink>",
      "<p/>a",
      "a < b",
      "<p>a</p><script>x</script>",
      "<p>a</p><img",
      "<!---->a",
      "a\u0000b",
      "a\ud800b",
      "<p>a</p onclick=x>",
      "<br/>",
    ];
    for (const html of others) expect(await sanitizeHtml(html), html).toBe(await sanitizeWithRewriter(html));
  });

  it("sanitizes on update too, and null clears it", async () => {
    const a = await caller();
    const { id } = await createPinpoint(a, { description: "<p>a</p>" });
    const updated = await json(
      await a.send("PUT", `/v3.0/pinpoints/${id}`, { description: "<b onmouseover=x>b</b><script>1</script>" }),
    );
    expect(updated.description).toBe("<b>b</b>");
    const cleared = await json(await a.send("PUT", `/v3.0/pinpoints/${id}`, { description: null }));
    expect(cleared.description).toBeNull();
  });
});

describe("GET /v3.0/pinpoints/{id}", () => {
  it("reads the pinpoint, with and without a trailing slash", async () => {
    const a = await caller();
    const created = await createPinpoint(a, { tags: ["x"] });
    for (const path of [`/v3.0/pinpoints/${created.id}`, `/v3.0/pinpoints/${created.id}/`]) {
      const response = await a.get(path);
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual(created);
    }
  });

  it("answers 404 for a missing, non-numeric, zero or huge id", async () => {
    const a = await caller();
    for (const id of ["999999", "abc", "0", "12abc", "-1", "99999999999999999999999", "1.5"]) {
      const response = await a.get(`/v3.0/pinpoints/${id}`);
      const body = await json<Problem>(response);
      expect(response.status, id).toBe(404);
      expect(response.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
      expect(body.status).toBe(404);
    }
  });
});

describe("PUT /v3.0/pinpoints/{id}", () => {
  const full = {
    ...valid,
    address: "Paris",
    altitude: 35,
    category: 1,
    description: "<p>d</p>",
    media_credits: "credits",
    tags: ["a", "b"],
  };

  it("changes only the fields sent and returns the full object", async () => {
    const a = await caller();
    const created = await createPinpoint(a, full);
    const response = await a.send("PUT", `/v3.0/pinpoints/${created.id}`, { name: "Renamed", tags: ["c"] });
    const body = await json(response);
    expect(response.status).toBe(200);
    expect(Object.keys(body).sort()).toEqual(RESPONSE_FIELDS);
    expect(body).toEqual({ ...created, name: "Renamed", tags: ["c"], updated_at: body.updated_at });
    expect(await json(await a.get(`/v3.0/pinpoints/${created.id}`))).toEqual(body);
  });

  it("moves updated_at forward and keeps created_at", async () => {
    const a = await caller();
    const created = await createPinpoint(a);
    const later = Date.parse(created.updated_at as string) + 90_000;
    const realNow = clock.now;
    clock.now = () => later;
    try {
      const body = await json(await a.send("PUT", `/v3.0/pinpoints/${created.id}`, { latitude: 1 }));
      expect(body.created_at).toBe(created.created_at);
      expect(body.updated_at).toBe(new Date(later).toISOString());
    } finally {
      clock.now = realNow;
    }
  });

  it("clears optional fields sent as null", async () => {
    const a = await caller();
    const created = await createPinpoint(a, full);
    const body = await json(
      await a.send("PUT", `/v3.0/pinpoints/${created.id}`, {
        address: null,
        altitude: null,
        category: null,
        description: null,
        media_credits: null,
        tags: null,
      }),
    );
    expect(body).toMatchObject({
      ...valid,
      address: null,
      altitude: null,
      category: null,
      description: null,
      media_credits: null,
      tags: [],
    });
  });

  it("refuses null on a required field and leaves the pinpoint unchanged", async () => {
    const a = await caller();
    const created = await createPinpoint(a, full);
    for (const field of ["name", "latitude", "longitude"]) {
      await expect400(await a.send("PUT", `/v3.0/pinpoints/${created.id}`, { [field]: null, address: "x" }), [
        `/${field}`,
      ]);
    }
    expect(await json(await a.get(`/v3.0/pinpoints/${created.id}`))).toEqual(created);
  });

  it("answers an empty body {} with the pinpoint unchanged", async () => {
    const a = await caller();
    const created = await createPinpoint(a, full);
    for (const body of [{}, { unknown: 1 }]) {
      const response = await a.send("PUT", `/v3.0/pinpoints/${created.id}`, body);
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual(created);
    }
  });

  it("validates bounds, types and category like create", async () => {
    const a = await caller();
    const { id } = await createPinpoint(a);
    await expect400(await a.send("PUT", `/v3.0/pinpoints/${id}`, { latitude: -91 }), ["/latitude"]);
    await expect400(await a.send("PUT", `/v3.0/pinpoints/${id}`, { longitude: 180.01 }), ["/longitude"]);
    await expect400(await a.send("PUT", `/v3.0/pinpoints/${id}`, { name: "" }), ["/name"]);
    await expect400(await a.send("PUT", `/v3.0/pinpoints/${id}`, { tags: [null] }), ["/tags/0"]);
    await expect400(await a.send("PUT", `/v3.0/pinpoints/${id}`, { category: 424_242 }), ["/category"]);
    await expect400(await a.send("PUT", `/v3.0/pinpoints/${id}`, [{ name: "x" }]), [""]);
  });

  it("answers 404 for a pinpoint that does not exist (even with an empty body)", async () => {
    const a = await caller();
    for (const body of [{ name: "x" }, {}]) {
      const response = await a.send("PUT", "/v3.0/pinpoints/987654321", body);
      expect(response.status).toBe(404);
      await response.body?.cancel();
    }
    const response = await a.send("PUT", "/v3.0/pinpoints/abc", { name: "x" });
    expect(response.status).toBe(404);
    await response.body?.cancel();
  });
});

describe("DELETE /v3.0/pinpoints/{id}", () => {
  it("answers 204 with no body, then GET is 404 and a second DELETE is 404", async () => {
    const a = await caller();
    const { id } = await createPinpoint(a);
    const response = await a.send("DELETE", `/v3.0/pinpoints/${id}`);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    const after = await a.get(`/v3.0/pinpoints/${id}`);
    expect(after.status).toBe(404);
    await after.body?.cancel();
    const again = await a.send("DELETE", `/v3.0/pinpoints/${id}`);
    expect(again.status).toBe(404);
    await again.body?.cancel();
  });

  it("removes the pinpoint from its lists", async () => {
    const a = await caller();
    const [p1, p2] = [await createPinpoint(a), await createPinpoint(a)];
    const list = await createList(a);
    const added = await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: p1.id }, { id: p2.id }]);
    expect(await json(added)).toEqual({ total: 2, errors: [] });
    const before = await json<{ results: { id: number }[] }>(await a.get(`/v3.0/pinpoints?list=${list.id}`));
    expect(before.results.map((p) => p.id)).toEqual([p1.id, p2.id]);

    expect((await a.send("DELETE", `/v3.0/pinpoints/${p1.id}`)).status).toBe(204);
    const page = await json<{ results: { id: number }[] }>(await a.get(`/v3.0/pinpoints?list=${list.id}`));
    expect(page.results.map((p) => p.id)).toEqual([p2.id]);
    // No membership row is left behind pointing at the deleted pinpoint.
    const removal = await json(await a.send("DELETE", `/v3.0/lists/${list.id}/pinpoints`, [{ id: p1.id }]));
    expect(removal).toEqual({ total: 1, errors: [{ index: 0, id: p1.id, error: "not_found" }] });
  });

  it("answers 404 for a non-numeric or huge id", async () => {
    const a = await caller();
    for (const id of ["abc", "99999999999999999999"]) {
      const response = await a.send("DELETE", `/v3.0/pinpoints/${id}`);
      expect(response.status, id).toBe(404);
      await response.body?.cancel();
    }
  });
});

describe("GET /v3.0/pinpoints", () => {
  it("lists the caller's pinpoints in the page envelope", async () => {
    const a = await caller();
    const created = [await createPinpoint(a, { name: "one" }), await createPinpoint(a, { name: "two" })];
    const response = await a.get("/v3.0/pinpoints");
    const page = await json(response);
    expect(response.status).toBe(200);
    expect(page).toEqual({ results: created, next: null, previous: null });
  });

  it("starts empty for a new account", async () => {
    const a = await caller();
    expect(await json(await a.get("/v3.0/pinpoints/"))).toEqual({ results: [], next: null, previous: null });
  });
});
