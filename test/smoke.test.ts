import { describe, expect, it } from "vitest";
import { caller, json } from "./helpers";

describe("smoke", () => {
  it("creates and reads a pinpoint", async () => {
    const a = await caller();
    const res = await a.send("POST", "/v3.0/pinpoints", {
      name: "Eiffel",
      latitude: 48.8584,
      longitude: 2.2945,
      description: "<p onclick=x>Hi<script>alert(1)</script></p>",
    });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.description).toBe("<p>Hi</p>");
    const got = await a.get(`/v3.0/pinpoints/${body.id}`);
    expect(got.status).toBe(200);
  });
});
