/** Lists: the five operations, field rules and partial PUT. */
import { describe, expect, it } from "vitest";
import { BASE, caller, createList, createPinpoint, json, type Caller } from "./helpers";

type Problem = { status: number; detail: string; errors?: { pointer?: string; detail: string }[] };

const LIST_FIELDS = ["id", "name", "description", "created_at", "updated_at", "created_by", "updated_by"].sort();

async function expect400(response: Response, pointers: string[]): Promise<Problem> {
  const body = await json<Problem>(response);
  expect(response.status, JSON.stringify(body)).toBe(400);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
  expect((body.errors ?? []).map((e) => e.pointer).sort()).toEqual([...pointers].sort());
  return body;
}

async function expectStatus(response: Response, status: number) {
  expect(response.status).toBe(status);
  await response.body?.cancel();
}

const post = (who: Caller, body: unknown) => who.send("POST", "/v3.0/lists", body);

describe("POST /v3.0/lists", () => {
  it("answers 201 with {id, name, description} and an absolute Location", async () => {
    const a = await caller();
    const response = await post(a, { name: " Favourites ", description: "<p>Best <em>places</em></p>" });
    const body = await json(response);
    expect(response.status).toBe(201);
    expect(Object.keys(body).sort()).toEqual(LIST_FIELDS);
    expect(body).toMatchObject({ name: "Favourites", description: "<p>Best <em>places</em></p>" });
    expect(response.headers.get("Location")).toBe(`${BASE}/v3.0/lists/${body.id}`);
    expect(new Date(body.created_at as string).toISOString()).toBe(body.created_at);
  });

  it("returns description null when none is sent", async () => {
    const a = await caller();
    const body = await json(await post(a, { name: "Plain" }));
    expect(body.description).toBeNull();
  });

  it("requires a non-empty name of at most 200 characters", async () => {
    const a = await caller();
    await expect400(await post(a, {}), ["/name"]);
    await expect400(await post(a, { description: "x" }), ["/name"]);
    await expect400(await post(a, { name: null }), ["/name"]);
    await expect400(await post(a, { name: "  " }), ["/name"]);
    await expect400(await post(a, { name: "n".repeat(201) }), ["/name"]);
    await expect400(await post(a, { name: 5 }), ["/name"]);
    await expect400(await post(a, { name: "ok", description: 5 }), ["/description"]);
    await expect400(await post(a, [{ name: "x" }]), [""]);
    expect((await createList(a, { name: "n".repeat(200) })).name).toHaveLength(200);
  });

  it("sanitizes the description", async () => {
    const a = await caller();
    const body = await createList(a, {
      description:
        '<p onclick="x">a<script>alert(1)</script></p><a href="jav&#x61;script:alert(1)">l</a><iframe></iframe>',
    });
    expect(body.description).toBe("<p>a</p><a>l</a>");
  });

  it("keeps a description the HTML parser rejects as text, on create and update", async () => {
    const a = await caller();
    const list = await createList(a, { description: "<select><style>x</style></select>" });
    expect(list.description).toBe("&lt;select&gt;&lt;style&gt;x&lt;/style&gt;&lt;/select&gt;");
    const response = await a.send("PUT", `/v3.0/lists/${list.id}`, { description: "<frameset><style><b>" });
    expect(response.status).toBe(200);
    expect((await json(response)).description).toBe("&lt;frameset&gt;&lt;style&gt;&lt;b&gt;");
  });

  it("ignores unknown fields", async () => {
    const a = await caller();
    const body = await createList(a, { id: 424_242, pinpoints: [1, 2], account_id: 1 });
    expect(body.id).not.toBe(424_242);
    expect(Object.keys(body).sort()).toEqual(LIST_FIELDS);
  });
});

describe("GET /v3.0/lists/{id}", () => {
  it("reads the list, with and without a trailing slash", async () => {
    const a = await caller();
    const list = await createList(a, { description: "<p>d</p>" });
    for (const path of [`/v3.0/lists/${list.id}`, `/v3.0/lists/${list.id}/`]) {
      const response = await a.get(path);
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual(list);
    }
  });

  it("answers 404 for a missing, non-numeric or huge id", async () => {
    const a = await caller();
    for (const id of ["987654", "abc", "0", "99999999999999999999"]) {
      await expectStatus(await a.get(`/v3.0/lists/${id}`), 404);
    }
  });
});

describe("PUT /v3.0/lists/{id}", () => {
  it("changes only the fields sent", async () => {
    const a = await caller();
    const list = await createList(a, { name: "Old", description: "<p>keep</p>" });
    const renamed = await json(await a.send("PUT", `/v3.0/lists/${list.id}`, { name: "New" }));
    expect(renamed).toMatchObject({ id: list.id, name: "New", description: "<p>keep</p>" });
    expect(Object.keys(renamed).sort()).toEqual(LIST_FIELDS);
    const described = await json(
      await a.send("PUT", `/v3.0/lists/${list.id}`, { description: "<b>d</b><script>1</script>" }),
    );
    expect(described).toMatchObject({ name: "New", description: "<b>d</b>" });
    expect(await json(await a.get(`/v3.0/lists/${list.id}`))).toEqual(described);
  });

  it("clears the description with null and refuses a null or empty name", async () => {
    const a = await caller();
    const list = await createList(a, { description: "<p>d</p>" });
    expect((await json(await a.send("PUT", `/v3.0/lists/${list.id}`, { description: null }))).description).toBeNull();
    await expect400(await a.send("PUT", `/v3.0/lists/${list.id}`, { name: null }), ["/name"]);
    await expect400(await a.send("PUT", `/v3.0/lists/${list.id}`, { name: "" }), ["/name"]);
    expect((await json(await a.get(`/v3.0/lists/${list.id}`))).name).toBe(list.name);
  });

  it("answers {} with the list unchanged", async () => {
    const a = await caller();
    const list = await createList(a, { description: "<p>d</p>" });
    const response = await a.send("PUT", `/v3.0/lists/${list.id}`, {});
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual(list);
  });

  it("answers 404 for a list that does not exist", async () => {
    const a = await caller();
    await expectStatus(await a.send("PUT", "/v3.0/lists/987654", { name: "x" }), 404);
    await expectStatus(await a.send("PUT", "/v3.0/lists/987654", {}), 404);
  });
});

describe("DELETE /v3.0/lists/{id}", () => {
  it("answers 204 with no body; the list is gone, its pinpoints are not", async () => {
    const a = await caller();
    const pinpoint = await createPinpoint(a);
    const list = await createList(a);
    await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: pinpoint.id }]);
    const response = await a.send("DELETE", `/v3.0/lists/${list.id}`);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    await expectStatus(await a.get(`/v3.0/lists/${list.id}`), 404);
    await expectStatus(await a.get(`/v3.0/pinpoints?list=${list.id}`), 404);
    await expectStatus(await a.send("DELETE", `/v3.0/lists/${list.id}`), 404);
    expect((await a.get(`/v3.0/pinpoints/${pinpoint.id}`)).status).toBe(200);
  });
});

describe("GET /v3.0/lists", () => {
  it("lists the caller's lists in ascending id order in the page envelope", async () => {
    const a = await caller();
    const created = [await createList(a, { name: "b" }), await createList(a, { name: "a" })];
    const response = await a.get("/v3.0/lists");
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ results: created, next: null, previous: null });
    expect(await json(await a.get("/v3.0/lists/"))).toEqual({ results: created, next: null, previous: null });
  });
});
