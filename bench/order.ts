/**
 * The `order` group: the owner's order of a list of 10,000 places (docs/api.md, "The order of a list").
 * The list is made as a client makes one: the 10,000 members of the seeded list added in ten batches,
 * then put in a shuffled order whole (`{"ids": [...]}`), so its positions are those the API writes. Then,
 * against an ordinary write of the list (`PUT /v3.0/lists/{id}`, a new description):
 * - `move`: one member moved before another (or to the end), a different move each request, drawn from
 *   50,000 random moves: the goal is a p50 within ten of the ordinary write's;
 * - the list's first page in its order and a page past member 9,000 (`order=position`), whose ratio
 *   shows whether a page's cost grows with its depth.
 * A whole order of 10,000 ids rewrites every member's position: it is timed once, one request at a time
 * (printed with the group's setup), not under the group's load, where sixteen at once queue for seconds.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Runtime } from "./runtime.ts";
import { pageAt } from "./page-at.ts";
import type { Group, Target } from "./scenarios.ts";
import type { Seeded } from "./seed.ts";

/** The moves drawn from: enough that a run never sends the same sequence twice. */
const MOVES = 50_000;

/** A seeded pseudo-random generator (mulberry32): the same list and moves every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

async function call(url: URL, init: RequestInit, status: number): Promise<Response> {
  const response = await fetch(url, init);
  if (response.status !== status) {
    throw new Error(`${init.method ?? "GET"} ${url.pathname}: ${response.status} ${await response.text()}`);
  }
  return response;
}

/** The group, with its list made and ordered through the API. */
export async function orderGroup(rt: Runtime, seeded: Seeded, token: string, dir: string): Promise<Group> {
  const auth = { Authorization: `Bearer ${token}` };
  const json = { ...auth, "Content-Type": "application/json" };
  const members: number[] = [];
  for (let url: string | null = new URL(`/v3.0/pinpoints?list=${seeded.list}&limit=1000`, rt.api).href; url;) {
    const page = (await (await call(new URL(url), { headers: auth }, 200)).json()) as {
      results: { id: number }[];
      next: string | null;
    };
    members.push(...page.results.map((r) => r.id));
    // `next` is absolute on the Worker's own origin; keep talking to the socket measured.
    url = page.next && new URL(new URL(page.next).pathname + new URL(page.next).search, rt.api).href;
  }
  if (members.length !== 10_000) throw new Error(`the seeded list has ${members.length} members, not 10,000`);

  const created = await call(
    new URL("/v3.0/lists", rt.api),
    { method: "POST", headers: json, body: JSON.stringify({ name: "Walking tour of 10,000" }) },
    201,
  );
  const list = ((await created.json()) as { id: number }).id;
  const next = random(20261128);
  const order = shuffled(members, next);
  for (let at = 0; at < order.length; at += 1000) {
    const batch = order.slice(at, at + 1000).map((id) => ({ id }));
    await call(
      new URL(`/v3.0/lists/${list}/pinpoints`, rt.api),
      { method: "POST", headers: json, body: JSON.stringify(batch) },
      200,
    );
  }
  const orders = [shuffled(members, next), shuffled(members, next), shuffled(members, next)];
  const wholeOrderMs: number[] = [];
  for (const ids of orders) {
    const started = performance.now();
    await call(
      new URL(`/v3.0/lists/${list}/pinpoints/order`, rt.api),
      { method: "PUT", headers: json, body: JSON.stringify({ ids }) },
      200,
    );
    wholeOrderMs.push(performance.now() - started);
  }
  console.error(
    `[order] a whole order of 10,000 ids, one request at a time: ${wholeOrderMs.map((ms) => ms.toFixed(0)).join(", ")} ms`,
  );

  const moves = Array.from({ length: MOVES }, () => {
    const move = members[Math.floor(next() * members.length)]!;
    let before: number | null = members[Math.floor(next() * members.length)]!;
    if (before === move || next() < 0.05) before = null;
    return JSON.stringify({ move, before });
  });
  const movesFile = join(dir, "order-moves.jsonl");
  writeFileSync(movesFile, moves.join("\n"));
  const descriptionFile = join(dir, "order-list-write.json");
  writeFileSync(descriptionFile, JSON.stringify({ description: "<p>A walking tour, changed.</p>" }));

  const orderUrl = new URL(`/v3.0/lists/${list}/pinpoints/order`, rt.api).href;
  const firstPage = new URL(`/v3.0/pinpoints?list=${list}&order=position&limit=20`, rt.api);
  const deepPage = await pageAt(new URL(`/v3.0/pinpoints?list=${list}&order=position`, rt.api), 9_000, auth);
  const target = (key: string, label: string, request: Target["request"], versus?: string): Target => ({
    key,
    label,
    request,
    status: 200,
    ...(versus && { versus }),
  });
  return {
    name: "order",
    targets: [
      target("list-write", "PUT /v3.0/lists/{id} (a new description), list of 10,000", {
        method: "PUT",
        url: new URL(`/v3.0/lists/${list}`, rt.api).href,
        headers: json,
        bodyFile: descriptionFile,
      }),
      target("move", "PUT …/pinpoints/order, one member of 10,000 moved", {
        method: "PUT",
        url: orderUrl,
        headers: json,
        bodiesFile: movesFile,
      }),
      target("order-first-page", "GET ?list=ID&order=position, first page of 20", {
        method: "GET",
        url: firstPage.href,
        headers: auth,
      }),
      target(
        "order-deep-page",
        "GET ?list=ID&order=position, page of 20 past member 9,000 (cursor)",
        { method: "GET", url: deepPage.href, headers: auth },
        "order-first-page",
      ),
    ],
  };
}
