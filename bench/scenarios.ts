/**
 * What is measured. Each group is a set of targets measured in turn, round
 * after round (A B A B ...), so every ratio compares numbers taken minutes
 * apart at most, on the same machine, under the same noise. The first target
 * of a group is its baseline.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LoadRequest } from "./load.ts";
import { orderGroup } from "./order.ts";
import { pageAt } from "./page-at.ts";
import { peopleGroups } from "./people.ts";
import { publicGroup, type FreshnessSetup } from "./public.ts";
import type { Runtime } from "./runtime.ts";
import type { Seeded } from "./seed.ts";
import { tokenFor } from "./setup.ts";

export type Target = {
  key: string;
  label: string;
  request: Omit<LoadRequest, "connections" | "seconds">;
  /** The status every response must have for the run to count. */
  status: number;
  /** The target its ratio is taken against, in the same round; the group's first by default. */
  versus?: string;
  /** A header every response must carry with this value for the run to count (e.g. a cache hit). */
  expect?: { header: string; value: string };
  /** Headers made just before each run, added to the request's: a credential that expires within a group. */
  headersNow?: () => Promise<Record<string, string>>;
};

/**
 * `freshness`: the group also measures write-to-visible latency after its rounds (bench/public.ts).
 * `alternate`: every other round runs the targets in reverse (A B, B A, ...), so neither pays for
 * always going second.
 */
export type Group = { name: string; targets: Target[]; freshness?: FreshnessSetup; alternate?: boolean };

/** A goal from the issue, checked against medians of per-round figures. */
export type Goal = {
  what: string;
  goal: string;
  /** Group, target, and what it is compared with; `kind` says which figure. */
  group: string;
  target: string;
  versus: string;
  kind: "rps-ratio" | "p50-multiple";
  limit: number;
};

export const GOALS: Goal[] = [
  {
    what: "GET /v3.0/pinpoints/{id} vs bare get-by-id",
    goal: ">= 0.8",
    group: "read",
    target: "get",
    versus: "bare-get",
    kind: "rps-ratio",
    limit: 0.8,
  },
  {
    what: "first page (limit=20) vs bare page of 20",
    goal: ">= 0.8",
    group: "pages",
    target: "first-page",
    versus: "bare-page",
    kind: "rps-ratio",
    limit: 0.8,
  },
  {
    what: "page past row 90,000 vs first page",
    goal: ">= 0.9",
    group: "pages",
    target: "deep-page",
    versus: "first-page",
    kind: "rps-ratio",
    limit: 0.9,
  },
  {
    what: "token issuance vs bare get-by-id",
    goal: ">= 0.7",
    group: "token",
    target: "token",
    versus: "bare-get",
    kind: "rps-ratio",
    limit: 0.7,
  },
  {
    what: "first page (limit=20) with a person's token vs a client's",
    goal: ">= 0.9",
    group: "people",
    target: "person-page",
    versus: "client-page",
    kind: "rps-ratio",
    limit: 0.9,
  },
  {
    what: "membership of 1,000 items: p50 as a multiple of GET by id's p50",
    goal: "< 10x",
    group: "membership",
    target: "membership",
    versus: "get",
    kind: "p50-multiple",
    limit: 10,
  },
  {
    what: "moving one member of a 10,000-member list: p50 as a multiple of a list write's",
    goal: "< 10x",
    group: "order",
    target: "move",
    versus: "list-write",
    kind: "p50-multiple",
    limit: 10,
  },
  {
    what: "a list's page in its order past member 9,000 vs its first page",
    goal: ">= 0.9",
    group: "order",
    target: "order-deep-page",
    versus: "order-first-page",
    kind: "rps-ratio",
    limit: 0.9,
  },
  {
    what: "public page from the cache (key, list page of 50) vs constant JSON",
    goal: ">= 0.8",
    group: "public",
    target: "public-hit",
    versus: "constant",
    kind: "rps-ratio",
    limit: 0.8,
  },
  {
    what: "public page, every request a miss, vs bare D1 list page of 50",
    goal: ">= 0.7",
    group: "public",
    target: "public-miss",
    versus: "bare-list-page-50",
    kind: "rps-ratio",
    limit: 0.7,
  },
];

/** A PNG signature followed by incompressible bytes: what the media checks accept as an image. */
export function fakePng(bytes: number): Uint8Array {
  const data = new Uint8Array(bytes);
  for (let at = 0; at < bytes; at += 65_536) crypto.getRandomValues(data.subarray(at, Math.min(bytes, at + 65_536)));
  data.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return data;
}

export function pinpointBody(media?: Uint8Array): string {
  return JSON.stringify({
    name: "Benchmark pinpoint",
    latitude: 48.8584,
    longitude: 2.2945,
    altitude: 35,
    category: 1,
    address: "Champ de Mars, 5 Avenue Anatole France, 75007 Paris",
    description: '<p>A <strong>benchmark</strong> pinpoint with a <a href="https://example.com/">link</a>.</p>',
    tags: ["bench", "paris", "tower"],
    ...(media && {
      media_file: { content: Buffer.from(media).toString("base64"), name: "bench.png", type: "image/png" },
    }),
  });
}

/** Every group, with URLs and bodies resolved against the running Workers and the seeded data. */
export async function buildGroups(rt: Runtime, seeded: Seeded, token: string, dir: string): Promise<Group[]> {
  const auth = { Authorization: `Bearer ${token}` };
  const json = { ...auth, "Content-Type": "application/json" };
  const file = (name: string, content: string | Uint8Array) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const ids = seeded.pinpointIds;
  const id = ids[Math.floor(ids.length / 2)]!;

  const firstPage = new URL("/v3.0/pinpoints?limit=20", rt.api);
  const deepPage = await pageAt(new URL("/v3.0/pinpoints", rt.api), 90_000, auth);
  const listDeep = await pageAt(new URL(`/v3.0/pinpoints?list=${seeded.list}`, rt.api), 9_000, auth);
  // The bare baselines start after the same ids the service's cursors name.
  const afterDeep = await firstIdBefore(deepPage, auth);
  const afterListDeep = await firstIdBefore(listDeep, auth);

  const bare = (path: string) => new URL(path, rt.bare).href;
  const target = (key: string, label: string, request: Target["request"], status = 200): Target => ({
    key,
    label,
    request,
    status,
  });
  const bareGet = target("bare-get", "bare D1 get-by-id", { method: "GET", url: bare(`/get?id=${id}`) });
  const get = target("get", "GET /v3.0/pinpoints/{id}", {
    method: "GET",
    url: new URL(`/v3.0/pinpoints/${id}`, rt.api).href,
    headers: auth,
  });
  const create = target(
    "create",
    "POST /v3.0/pinpoints",
    {
      method: "POST",
      url: new URL("/v3.0/pinpoints", rt.api).href,
      headers: json,
      bodyFile: file("create.json", pinpointBody()),
    },
    201,
  );
  // Account B's writes pay for a webhook subscribed to every event: the outbox row (the bare insert's
  // triggers write it too) and the queue message. Nothing consumes the queue in this runtime, so the
  // figure is the write's alone (bench/webhooks.ts measures delivery).
  const jsonB = {
    Authorization: `Bearer ${await tokenFor(rt.api, seeded.clientB)}`,
    "Content-Type": "application/json",
  };
  const hook = await fetch(new URL("/v3.0/webhooks", rt.api), {
    method: "POST",
    headers: jsonB,
    body: JSON.stringify({ url: "http://127.0.0.1:9/never-delivered", events: ["*"] }),
  });
  if (hook.status !== 201) throw new Error(`webhook: ${hook.status} ${await hook.text()}`);
  const mediaBody = file("create-media.json", pinpointBody(fakePng(1024 * 1024)));
  const membershipItems = ids.slice(0, 1000).map((pinpoint) => ({ id: pinpoint }));
  if (membershipItems.length !== 1000) throw new Error(`only ${membershipItems.length} pinpoints for the batch`);

  return [
    {
      name: "read",
      targets: [
        bareGet,
        target("constant", "constant JSON (runtime ceiling)", { method: "GET", url: rt.constant.href }),
        target("bare-get-no-session", "bare D1 get-by-id, no D1 session", {
          method: "GET",
          url: bare(`/get?id=${id}&session=none`),
        }),
        get,
      ],
    },
    {
      name: "token",
      targets: [
        bareGet,
        target("token", "POST /v3.0/oauth2/token", {
          method: "POST",
          url: new URL("/v3.0/oauth2/token", rt.api).href,
          headers: {
            Authorization: `Basic ${btoa(`${seeded.client.id}:${seeded.client.secret}`)}`,
            "Content-Type": "application/x-www-form-urlencoded",
          },
          bodyFile: file("token.form", "grant_type=client_credentials"),
        }),
      ],
    },
    {
      name: "pages",
      targets: [
        target("bare-page", "bare D1 page of 20", { method: "GET", url: bare(`/page?account=${seeded.accountA}`) }),
        target("bare-page-no-session", "bare D1 page of 20, no D1 session", {
          method: "GET",
          url: bare(`/page?account=${seeded.accountA}&session=none`),
        }),
        target("first-page", "GET /v3.0/pinpoints?limit=20", { method: "GET", url: firstPage.href, headers: auth }),
        target("bare-deep-page", "bare D1 page of 20 past row 90,000", {
          method: "GET",
          url: bare(`/page?account=${seeded.accountA}&after=${afterDeep}`),
        }),
        target("deep-page", "page of 20 past row 90,000 (cursor)", {
          method: "GET",
          url: deepPage.href,
          headers: auth,
        }),
      ],
    },
    {
      name: "list",
      targets: [
        target("bare-list-page", "bare D1 list page past member 9,000", {
          method: "GET",
          url: bare(`/list-page?list=${seeded.list}&after=${afterListDeep}`),
        }),
        target("list-page", "GET ?list=ID past member 9,000 (cursor)", {
          method: "GET",
          url: listDeep.href,
          headers: auth,
        }),
      ],
    },
    {
      name: "writes",
      targets: [
        target("bare-insert", "bare D1 insert", { method: "POST", url: bare(`/insert?account=${seeded.accountA}`) }),
        {
          ...target("bare-insert-webhook", "bare D1 insert, account with a webhook", {
            method: "POST",
            url: bare(`/insert?account=${seeded.accountB}`),
          }),
          versus: "bare-insert",
        },
        create,
        {
          ...target(
            "create-webhook",
            "POST /v3.0/pinpoints, account with a webhook",
            { ...create.request, headers: jsonB },
            201,
          ),
          versus: "create",
        },
      ],
    },
    {
      name: "membership",
      targets: [
        get,
        target("membership", "POST /v3.0/lists/{id}/pinpoints, 1,000 items", {
          method: "POST",
          url: new URL(`/v3.0/lists/${seeded.batchList}/pinpoints`, rt.api).href,
          headers: json,
          bodyFile: file("membership.json", JSON.stringify(membershipItems)),
        }),
      ],
    },
    {
      name: "media",
      targets: [
        target("bare-upload", "bare D1 + R2 create with a 1 MiB image", {
          method: "POST",
          url: bare(`/upload?account=${seeded.accountA}`),
          headers: { "Content-Type": "application/json" },
          bodyFile: mediaBody,
        }),
        target(
          "create-media",
          "POST /v3.0/pinpoints with a 1 MiB image",
          { method: "POST", url: new URL("/v3.0/pinpoints", rt.api).href, headers: json, bodyFile: mediaBody },
          201,
        ),
      ],
    },
    ...(await peopleGroups(rt, seeded, token, dir)),
    await orderGroup(rt, seeded, token, dir),
    await publicGroup(rt, seeded, token),
  ];
}

/** The id just before the first row of a page (what its cursor continues after). */
async function firstIdBefore(url: URL, headers: Record<string, string>): Promise<number> {
  const response = await fetch(url, { headers });
  const page = (await response.json()) as { results: { id: number }[] };
  const first = page.results[0];
  if (!first) throw new Error(`${url.pathname}${url.search}: empty page`);
  return first.id - 1;
}

/** What the shards group requires of three shards against one database: req/s B ÷ A, per scenario. */
export const SHARDS_GOAL = 0.95;

/**
 * The shards group (docs/scaling.md): every scenario of the service (not the baselines) from
 * `single`, the Worker on one database, each in a group of its own with the same scenario from
 * `sharded`, the same Worker with three shards whose seeded accounts live on a shard other than
 * the directory. Both stacks are seeded alike.
 */
export function shardGroups(
  single: { rt: Runtime; groups: Group[] },
  sharded: { rt: Runtime; groups: Group[] },
  label = "three shards",
): Group[] {
  const service = ({ rt, groups }: { rt: Runtime; groups: Group[] }) => {
    const targets = new Map<string, Target>();
    for (const target of groups.flatMap((g) => g.targets)) {
      const service = new URL(target.request.url).origin === rt.api.origin;
      if (service) targets.set(target.key, target);
    }
    return targets;
  };
  const three = service(sharded);
  return [...service(single).values()].map((one) => {
    const other = three.get(one.key);
    if (!other) throw new Error(`the sharded stack has no ${one.key} scenario`);
    const { versus: _, ...a } = one;
    const { versus: __, ...b } = other;
    return {
      name: "shards",
      alternate: true,
      targets: [
        { ...a, label: `${one.label}, one database` },
        { ...b, key: `${one.key}-shards`, label: `${one.label}, ${label}` },
      ],
    };
  });
}
