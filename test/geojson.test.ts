/**
 * GeoJSON output of pinpoints and events: negotiation (Accept, format),
 * Vary, the shapes (checked strictly, test/geojson-check.ts), coordinate
 * order, paging links, events at their pinpoints, errors unchanged.
 */
import { describe, expect, it } from "vitest";
import { caller, createPinpoint, json, type Caller } from "./helpers";
import { geojsonProblems } from "./geojson-check";

type Feature = {
  type: string;
  id: number;
  geometry: { type: string; coordinates: number[] } | null;
  properties: Record<string, unknown>;
  links?: { href: string; rel: string; type: string }[];
};
type Collection = { type: string; features: Feature[]; links: { href: string; rel: string; type: string }[] };

const GEO = { Accept: "application/geo+json" };

async function geo<T>(who: Caller, path: string, headers: Record<string, string> = GEO): Promise<T> {
  const response = await who.send("GET", path, undefined, headers);
  const body = await json<T>(response);
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(response.headers.get("Content-Type")).toBe("application/geo+json");
  expect(response.headers.get("Vary")).toMatch(/\bAccept\b/);
  expect(geojsonProblems(body)).toEqual([]);
  return body;
}

const createEvent = async (who: Caller, pinpoint: number) => {
  const response = await who.send("POST", "/v3.0/events", {
    name: "Concert",
    pinpoint,
    dates: [{ start: "2026-06-01T20:00:00Z", end: "2026-06-01T23:00:00Z" }],
  });
  expect(response.status).toBe(201);
  return json<{ id: number }>(response);
};

describe("GeoJSON pinpoints", () => {
  it("is a Feature with [longitude, latitude] (signs differ), altitude third, other fields in properties", async () => {
    const a = await caller();
    const p = await createPinpoint(a, { name: "Rio", latitude: -22.95, longitude: 43.21, altitude: 700, tags: ["x"] });
    const flat = await createPinpoint(a, { name: "Sea", latitude: 10.5, longitude: -20.25 });
    const feature = await geo<Feature>(a, `/v3.0/pinpoints/${p.id}`);
    expect(feature.type).toBe("Feature");
    expect(feature.id).toBe(p.id);
    expect(feature.geometry).toEqual({ type: "Point", coordinates: [43.21, -22.95, 700] });
    const { id, latitude, longitude, altitude, ...rest } = p;
    expect([id, latitude, longitude, altitude]).toEqual([p.id, -22.95, 43.21, 700]);
    expect(feature.properties).toEqual(rest);
    expect(feature.links).toContainEqual({
      href: expect.stringMatching(new RegExp(`/v3.0/pinpoints/${p.id}\\?format=geojson$`)),
      rel: "self",
      type: "application/geo+json",
    });
    const noAltitude = await geo<Feature>(a, `/v3.0/pinpoints/${flat.id}?format=geojson`, {});
    expect(noAltitude.geometry!.coordinates).toEqual([-20.25, 10.5]);
  });

  it("pages as FeatureCollections whose next links stay GeoJSON and reach every pinpoint once", async () => {
    const a = await caller();
    const created = [];
    for (let i = 1; i <= 5; i++) created.push(await createPinpoint(a, { name: `P${i}`, latitude: i, longitude: -i }));
    const seen: number[] = [];
    let url: string | undefined = "/v3.0/pinpoints?limit=2&format=geojson";
    let pages = 0;
    while (url) {
      const page: Collection = await geo<Collection>(a, url, {});
      expect(page.type).toBe("FeatureCollection");
      expect(page.features.length).toBeLessThanOrEqual(2);
      for (const f of page.features) {
        seen.push(f.id);
        const i = Number(String(f.properties.name).slice(1));
        expect(f.geometry!.coordinates).toEqual([-i, i]);
      }
      expect(page.links.find((l) => l.rel === "self")!.type).toBe("application/geo+json");
      if (pages > 0) expect(page.links.some((l) => l.rel === "prev")).toBe(true);
      url = page.links.find((l) => l.rel === "next")?.href;
      if (url) expect(new URL(url).searchParams.get("format")).toBe("geojson");
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(created.map((p) => p.id));
  });

  it("keeps JSON the default and unchanged, with Vary: Accept", async () => {
    const a = await caller();
    await createPinpoint(a);
    for (const accept of [undefined, "*/*", "application/json", "application/json, application/geo+json"]) {
      const response = await a.send("GET", "/v3.0/pinpoints", undefined, accept ? { Accept: accept } : {});
      expect(response.headers.get("Content-Type"), accept).toMatch(/^application\/json/);
      expect(response.headers.get("Vary")).toMatch(/\bAccept\b/);
      expect(Object.keys(await json(response)).sort()).toEqual(["next", "previous", "results"]);
    }
  });

  it("prefers GeoJSON by quality, and format= over Accept", async () => {
    const a = await caller();
    await createPinpoint(a);
    const type = async (query: string, accept?: string) =>
      (await a.send("GET", `/v3.0/pinpoints${query}`, undefined, accept ? { Accept: accept } : {})).headers.get(
        "Content-Type",
      );
    expect(await type("", "application/json;q=0.5, application/geo+json")).toBe("application/geo+json");
    expect(await type("", "application/geo+json, application/json")).toBe("application/geo+json");
    expect(await type("", "application/geo+json;q=0.1, */*")).toMatch(/^application\/json/);
    expect(await type("?format=json", "application/geo+json")).toMatch(/^application\/json/);
    const bad = await a.send("GET", "/v3.0/pinpoints?format=kml");
    expect(bad.status).toBe(400);
    expect((await json<{ errors: unknown[] }>(bad)).errors).toEqual([
      { parameter: "format", detail: "must be one of json, geojson" },
    ]);
  });

  it("leaves errors as problem details", async () => {
    const a = await caller();
    const response = await a.send("GET", "/v3.0/pinpoints/999999999", undefined, GEO);
    expect(response.status).toBe(404);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/problem\+json/);
  });
});

describe("GeoJSON events", () => {
  it("puts each event at its pinpoint, in pages and alone", async () => {
    const a = await caller();
    const here = await createPinpoint(a, { latitude: 51.5, longitude: -0.12 });
    const there = await createPinpoint(a, { latitude: -33.86, longitude: 151.2, altitude: 5 });
    const e1 = await createEvent(a, here.id);
    const e2 = await createEvent(a, there.id);
    const page = await geo<Collection>(a, "/v3.0/events");
    expect(page.features.map((f) => [f.id, f.geometry!.coordinates, f.properties.pinpoint])).toEqual([
      [e1.id, [-0.12, 51.5], here.id],
      [e2.id, [151.2, -33.86, 5], there.id],
    ]);
    expect(page.features[0]!.properties).toMatchObject({ name: "Concert", dates: expect.any(Array) });
    const one = await geo<Feature>(a, `/v3.0/events/${e2.id}?format=geojson`, {});
    expect(one.geometry!.coordinates).toEqual([151.2, -33.86, 5]);
    const filtered = await geo<Collection>(a, `/v3.0/events?pinpoint=${here.id}`);
    expect(filtered.features.map((f) => f.id)).toEqual([e1.id]);
  });
});
