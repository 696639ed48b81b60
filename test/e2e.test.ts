/**
 * End to end, as a map client would use the service: a registered client gets
 * a token with HTTP Basic, creates pinpoints, pages through them, builds a
 * list, filters by it, updates and deletes, and checks what is left.
 */
import { expect, it } from "vitest";
import { basic, call, createClient } from "./helpers";

type Pinpoint = { id: number; name: string; tags: string[]; description: string | null };
type Page<T> = { results: T[]; next: string | null; previous: string | null };

it("plays a client from token to final state", async () => {
  // 1. Registration (the provider's portal) yields a client id and secret.
  const client = await createClient();

  // 2. Token: Basic client authentication, form-encoded body, as SPEC "Authentication" shows.
  const tokenResponse = await call("/v3.0/oauth2/token", {
    method: "POST",
    headers: {
      Authorization: basic(client.clientId, client.clientSecret),
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: `client_id=${encodeURIComponent(client.clientId)}&grant_type=client_credentials`,
  });
  expect(tokenResponse.status).toBe(200);
  expect(tokenResponse.headers.get("Cache-Control")).toBe("no-store");
  const token = await tokenResponse.json<{
    access_token: string;
    token_type: string;
    expires_in: number;
    scope: string;
  }>();
  expect(token).toMatchObject({ token_type: "Bearer", expires_in: 36000 });
  expect(token.scope.split(" ").sort()).toEqual(["read", "write"]);

  const api = async <T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const response = await call(path, {
      method,
      headers: {
        Authorization: `Bearer ${token.access_token}`,
        ...(body === undefined ? {} : { "Content-Type": "application/json;charset=UTF-8" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };

  // Without the token: 401.
  expect((await call("/v3.0/pinpoints")).status).toBe(401);

  // 3. Create 25 pinpoints; the client sends category 1 unconditionally.
  const created: Pinpoint[] = [];
  for (let i = 0; i < 25; i++) {
    const { status, body } = await api<Pinpoint>("POST", "/v3.0/pinpoints/", {
      name: `Stop ${i}`,
      latitude: 48 + i / 100,
      longitude: 2 + i / 100,
      category: 1,
      tags: i % 2 ? ["odd", " odd "] : ["even"],
      description: `<p>Stop <b>${i}</b><script>track()</script></p>`,
    });
    expect(status).toBe(201);
    expect(body.tags).toEqual(i % 2 ? ["odd"] : ["even"]);
    expect(body.description).toBe(`<p>Stop <b>${i}</b></p>`);
    created.push(body);
  }

  // 4. Page through them, 10 at a time, following next as given.
  const seen: Pinpoint[] = [];
  let url: string | null = "/v3.0/pinpoints?limit=10&format=json";
  let pages = 0;
  while (url) {
    const { status, body }: { status: number; body: Page<Pinpoint> } = await api<Page<Pinpoint>>("GET", url);
    expect(status).toBe(200);
    seen.push(...body.results);
    url = body.next;
    pages++;
  }
  expect(pages).toBe(3);
  expect(seen).toEqual(created);

  // 5. A list of the even stops, plus one stop that does not exist.
  const list = await api<{ id: number; name: string }>("POST", "/v3.0/lists", {
    name: "Evens",
    description: "<p>Even</p>",
  });
  expect(list.status).toBe(201);
  const evens = created.filter((_, i) => i % 2 === 0);
  const added = await api("POST", `/v3.0/lists/${list.body.id}/pinpoints`, [
    ...evens.map((p) => ({ id: p.id })),
    { id: 999_999_999 },
  ]);
  expect(added).toEqual({
    status: 200,
    body: { total: 14, errors: [{ index: 13, id: 999_999_999, error: "not_found" }] },
  });

  // 6. Filter by the list.
  const filtered = async () => {
    const out: Pinpoint[] = [];
    for (let at: string | null = `/v3.0/pinpoints?list=${list.body.id}&limit=5`; at;) {
      const { body }: { body: Page<Pinpoint> } = await api<Page<Pinpoint>>("GET", at);
      out.push(...body.results);
      at = body.next;
    }
    return out;
  };
  expect(await filtered()).toEqual(evens);

  // 7. Update one member: only the fields sent change, and the filter shows the change.
  const renamed = await api<Pinpoint>("PUT", `/v3.0/pinpoints/${evens[1]!.id}`, { name: "Renamed stop" });
  expect(renamed.status).toBe(200);
  expect(renamed.body).toMatchObject({ ...evens[1], name: "Renamed stop", updated_at: expect.any(String) });
  expect((await filtered()).map((p) => p.name)).toContain("Renamed stop");

  // 8. Delete a member: it leaves the list too.
  expect((await api("DELETE", `/v3.0/pinpoints/${evens[0]!.id}`)).status).toBe(204);
  expect((await api("GET", `/v3.0/pinpoints/${evens[0]!.id}`)).status).toBe(404);
  // 9. Take another out of the list, asking for the minimal answer.
  const removed = await call(`/v3.0/lists/${list.body.id}/pinpoints`, {
    method: "DELETE",
    headers: {
      Authorization: `Bearer ${token.access_token}`,
      "Content-Type": "application/json",
      Prefer: "return=minimal",
    },
    body: JSON.stringify([{ id: evens[2]!.id }]),
  });
  expect(removed.status).toBe(204);
  expect((await filtered()).map((p) => p.id)).toEqual([evens[1]!, ...evens.slice(3)].map((p) => p.id));

  // 10. Rename and then delete the list; its pinpoints stay.
  expect((await api<{ name: string }>("PUT", `/v3.0/lists/${list.body.id}`, { name: "Even stops" })).body.name).toBe(
    "Even stops",
  );
  expect((await api("DELETE", `/v3.0/lists/${list.body.id}`)).status).toBe(204);
  expect((await api("GET", `/v3.0/pinpoints?list=${list.body.id}`)).status).toBe(404);

  // 11. Final state: 24 pinpoints (one renamed), no lists.
  const final = await api<Page<Pinpoint>>("GET", "/v3.0/pinpoints?limit=400");
  expect(final.body.next).toBeNull();
  expect(final.body.results.map((p) => p.id)).toEqual(created.slice(1).map((p) => p.id));
  expect(final.body.results.find((p) => p.id === evens[1]!.id)!.name).toBe("Renamed stop");
  expect(final.body.results.filter((p) => p.name.startsWith("Stop "))).toHaveLength(23);
  expect((await api("GET", "/v3.0/lists")).body).toEqual({ results: [], next: null, previous: null });
});
