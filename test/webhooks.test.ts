/**
 * Webhooks: CRUD and validation, SSRF targets, and delivery to a real
 * receiver (test/webhook-receiver.ts, a Node server on 127.0.0.1) whose every
 * request is verified with the `standardwebhooks` library. Delivery passes are
 * run by calling the Worker's queue handler with a message, as the queue
 * does, so each test decides when they happen; the queue itself runs too
 * (writes send it messages): the webhook's lease keeps the two from sending
 * one write twice. The outbox (src/webhooks/outbox.ts) is checked by counting
 * its rows in D1.
 */
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { clock } from "../src/core/clock";
import worker from "../src/index";
import { backoffSeconds, DEAD_LETTER_QUEUE, DISABLE_AFTER_MS } from "../src/webhooks/deliver";
import { base64urlEncode } from "../src/core/crypto";
import { sealedPrefix, sealingKeys } from "../src/core/sealed";
import { openSecret } from "../src/webhooks/sealed-secrets";
import { isNonPublicAddress } from "../src/webhooks/targets";
import {
  caller,
  contentDb,
  createList,
  createPinpoint,
  databaseHolding,
  deliverWebhook,
  fetchWith,
  json,
  received,
  receiverUrl,
  settleWebhook,
  type Caller,
} from "./helpers";

/** The API reached on a loopback origin, as under wrangler dev: WEBHOOKS_ALLOW_LOOPBACK applies there. */
const LOCAL = "http://127.0.0.1:8787";
const QUEUE = "poi-webhooks";

type Payload = {
  type: string;
  timestamp: string;
  data: {
    type: string;
    id: number;
    version: number;
    deleted: boolean;
    position: number;
    object: Record<string, unknown> | null;
  };
};
type WebhookJson = {
  id: number;
  url: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
};

const realNow = clock.now;
afterEach(() => {
  clock.now = realNow;
});

/** Moves the service's clock `ms` ahead of now. */
function advance(ms: number): void {
  const base = clock.now();
  const offset = base - Date.now() + ms;
  clock.now = () => Date.now() + offset;
}

async function setStatus(name: string, status: number): Promise<void> {
  await fetch(`http://127.0.0.1:${inject("receiverPort")}/status/${name}/${status}`, { method: "PUT" });
}

/** Verifies every request with the webhook's secret(s) and returns the payloads in arrival order. */
async function verified(name: string, secret: string): Promise<Payload[]> {
  const verifier = new Webhook(secret);
  return (await received(name)).map(({ headers, body }) => verifier.verify(body, headers) as Payload);
}

async function createWebhook(who: Caller, fields: Record<string, unknown> = {}) {
  const name = crypto.randomUUID();
  const response = await who.send("POST", `${LOCAL}/v3.0/webhooks`, {
    url: receiverUrl(name),
    events: ["*"],
    ...fields,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  const hook = await json<WebhookJson & { secret: string }>(response);
  return { ...hook, name };
}

/** The account a webhook belongs to. */
async function accountOf(id: number): Promise<number> {
  const db = await databaseHolding("webhooks", id);
  const row = await db.prepare("SELECT account_id FROM webhooks WHERE id = ?").bind(id).first<{ account_id: number }>();
  return row!.account_id;
}

/**
 * One delivery pass for the webhook, as a queue message would run it (with `bindings` replaced, as a
 * Worker configured so would run it); returns the message's outcome.
 */
async function deliver(id: number, queue = QUEUE, attempts = 1, bindings: Partial<Cloudflare.Env> = {}) {
  return deliverWebhook(id, await accountOf(id), { queue, attempts, bindings });
}

/** Delivers every write committed so far, whichever pass (the test's or the queue's) sends it. */
async function settle(id: number): Promise<void> {
  await settleWebhook(id, await accountOf(id));
}

/**
 * Seconds from now (the service's clock) to the webhook's next attempt, which the message's retry delay
 * is (getQueueResult does not report retry delays).
 */
async function retryDelay(id: number): Promise<number> {
  const row = await (
    await databaseHolding("webhooks", id)
  )
    .prepare("SELECT next_attempt_at FROM webhooks WHERE id = ?")
    .bind(id)
    .first<{ next_attempt_at: number }>();
  return Math.round((row!.next_attempt_at - clock.now()) / 1000);
}

/** Reads until `done` holds, for what the queue delivers in its own time. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("timed out waiting for deliveries");
}

async function outboxRows(accountId: number): Promise<number> {
  const row = await (
    await contentDb(accountId)
  )
    .prepare("SELECT count(*) AS n FROM webhook_outbox WHERE account_id = ?")
    .bind(accountId)
    .first<{ n: number }>();
  return row!.n;
}

let a: Caller;
let b: Caller;

beforeAll(async () => {
  [a, b] = await Promise.all([caller(), caller()]);
});

describe("webhook management", () => {
  it("creates with a secret shown once, reads, lists, changes and deletes", async () => {
    const hook = await createWebhook(a, {
      events: ["pinpoint.created", "pinpoint.created", "list.updated"],
      description: "CMS",
    });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(hook).toMatchObject({ events: ["pinpoint.created", "list.updated"], enabled: true, description: "CMS" });
    const got = await json<Record<string, unknown>>(await a.get(`/v3.0/webhooks/${hook.id}`));
    expect(got).not.toHaveProperty("secret");
    expect(got).toMatchObject({ id: hook.id, url: hook.url });
    const page = await json<{ results: { id: number }[] }>(await a.get("/v3.0/webhooks"));
    expect(page.results.map((w) => w.id)).toContain(hook.id);
    expect(page.results.every((w) => !("secret" in w))).toBe(true);

    // Only the fields sent change.
    const put = await a.send("PUT", `/v3.0/webhooks/${hook.id}`, { events: ["*"], enabled: false });
    expect(put.status).toBe(200);
    expect(await json(put)).toMatchObject({ url: hook.url, events: ["*"], description: "CMS", enabled: false });
    const disabled = await json<WebhookJson>(await a.get(`/v3.0/webhooks/${hook.id}`));
    expect(disabled.disabled_reason).toMatch(/owner/);
    const cleared = await a.send("PUT", `/v3.0/webhooks/${hook.id}`, {
      description: null,
      url: "https://hooks.example.com/new",
    });
    expect(await json(cleared)).toMatchObject({
      url: "https://hooks.example.com/new",
      description: null,
      enabled: false,
    });
    const refused = await a.send("PUT", `/v3.0/webhooks/${hook.id}`, { url: "https://10.0.0.1/x", events: [] });
    expect(refused.status).toBe(400);
    expect((await json<WebhookJson>(await a.get(`/v3.0/webhooks/${hook.id}`))).url).toBe(
      "https://hooks.example.com/new",
    );

    expect((await a.send("DELETE", `/v3.0/webhooks/${hook.id}`)).status).toBe(204);
    expect((await a.get(`/v3.0/webhooks/${hook.id}`)).status).toBe(404);
  });

  it("refuses bad bodies with a problem naming the field", async () => {
    const cases: [unknown, string][] = [
      [{ events: ["*"] }, "/url"],
      [{ url: "not a url", events: ["*"] }, "/url"],
      [{ url: "https://hooks.example.com/x", events: [] }, "/events"],
      [{ url: "https://hooks.example.com/x", events: ["pinpoint.exploded"] }, "/events/0"],
      [{ url: "https://hooks.example.com/x" }, "/events"],
      [{ url: `https://hooks.example.com/${"x".repeat(2_000)}`, events: ["*"] }, "/url"],
      [{ url: "https://hooks.example.com/x", events: ["*"], description: "d".repeat(1_001) }, "/description"],
      [{ url: "https://hooks.example.com/x", events: ["*"], enabled: "yes" }, "/enabled"],
    ];
    for (const [body, pointer] of cases) {
      const response = await a.send("POST", "/v3.0/webhooks", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      const problem = await json<{ errors: { pointer: string }[] }>(response);
      expect(
        problem.errors.map((e) => e.pointer),
        JSON.stringify(body),
      ).toContain(pointer);
    }
    expect((await a.get("/v3.0/webhooks")).status).toBe(200);
  });

  it("keeps another account's webhook out of reach: 403, and 404 for none", async () => {
    const hook = await createWebhook(a);
    const body = { url: "https://hooks.example.com/b", events: ["*"] };
    const requests: [string, string, unknown?][] = [
      ["GET", `/v3.0/webhooks/${hook.id}`],
      ["PUT", `/v3.0/webhooks/${hook.id}`, body],
      ["DELETE", `/v3.0/webhooks/${hook.id}`],
      ["POST", `/v3.0/webhooks/${hook.id}/rotate`],
      ["GET", `/v3.0/webhooks/${hook.id}/deliveries`],
    ];
    for (const [method, path, payload] of requests) {
      expect((await b.send(method, path, payload)).status, `${method} ${path}`).toBe(403);
      expect((await b.send(method, path.replace(String(hook.id), "999999"), payload)).status).toBe(404);
    }
    const listed = await json<{ results: { id: number }[] }>(await b.get("/v3.0/webhooks"));
    expect(listed.results.map((w) => w.id)).not.toContain(hook.id);
    expect((await a.get(`/v3.0/webhooks/${hook.id}`)).status).toBe(200);
  });

  it("needs the write scope to create", async () => {
    const reader = await caller("read", a.accountId);
    const response = await reader.send("POST", "/v3.0/webhooks", { url: "https://hooks.example.com/r", events: ["*"] });
    expect(response.status).toBe(403);
  });
});

describe("webhook targets (SSRF)", () => {
  const refused = [
    "http://hooks.example.com/x",
    "ftp://hooks.example.com/x",
    "https://user:secret@hooks.example.com/x",
    "https://localhost/x",
    "https://api.localhost/x",
    "https://metadata.internal/x",
    "https://printer.local/x",
    "https://intranet/x",
    "https://127.0.0.1/x",
    "https://127.1/x",
    "https://2130706433/x",
    "https://0x7f000001/x",
    "https://0.0.0.0/x",
    "https://10.1.2.3/x",
    "https://172.16.0.1/x",
    "https://172.31.255.255/x",
    "https://192.168.1.1/x",
    "https://169.254.169.254/latest/meta-data",
    "https://100.64.0.1/x",
    "https://224.0.0.1/x",
    "https://255.255.255.255/x",
    "https://[::1]/x",
    "https://[::]/x",
    "https://[fd00::1]/x",
    "https://[fc12:3456::1]/x",
    "https://[fe80::1]/x",
    "https://[fec0::1]/x",
    "https://[ff02::1]/x",
    "https://[100::1]/x",
    "https://[5f00::1]/x",
    "https://[2001:db8::1]/x",
    "https://[3fff::1]/x",
    // IPv4-mapped (RFC 4291 §2.5.5.2), in every spelling the URL parser takes.
    "https://[::ffff:127.0.0.1]/x",
    "https://[::ffff:7f00:1]/x",
    "https://[::FFFF:7F00:0001]/x",
    "https://[0:0:0:0:0:ffff:127.0.0.1]/x",
    "https://[0000:0000:0000:0000:0000:ffff:7f00:0001]/x",
    "https://[::ffff:169.254.169.254]/x",
    "https://[::ffff:10.0.0.1]/x",
    "https://[::ffff:192.168.1.1]/x",
    "https://[::ffff:0.0.0.0]/x",
    // IPv4-translated (RFC 2765 §2.1, RFC 6052's ::ffff:0:0:0/96).
    "https://[::ffff:0:7f00:1]/x",
    "https://[::ffff:0:127.0.0.1]/x",
    "https://[0:0:0:0:ffff:0:a00:1]/x",
    "https://[::ffff:0:a9fe:a9fe]/x",
    // IPv4-compatible (deprecated, RFC 4291 §2.5.5.1): refused whatever it carries.
    "https://[::127.0.0.1]/x",
    "https://[::7f00:1]/x",
    "https://[::5db8:d70e]/x",
    // NAT64: the well-known prefix with a non-public address, and the local-use prefix (RFC 8215).
    "https://[64:ff9b::10.0.0.1]/x",
    "https://[64:ff9b::7f00:1]/x",
    "https://[64:ff9b::a9fe:a9fe]/x",
    "https://[64:ff9b:0:0:0:0:192.168.0.1]/x",
    "https://[64:ff9b:1::a00:1]/x",
    "https://[64:ff9b:1:5db8:d70e::]/x",
    "https://[64:ff9b:0:1::5db8:d70e]/x",
    // 6to4 (RFC 3056 §2).
    "https://[2002:c0a8:101::1]/x",
    "https://[2002:7f00:1::]/x",
    "https://[2002:a00:1:1::1]/x",
    "https://[2002:a9fe:a9fe::]/x",
    "https://[2002:6440:1::1]/x",
    // Teredo (RFC 4380 §4): the server's address as is, the client's with every bit inverted.
    "https://[2001:0:7f00:1::]/x",
    "https://[2001:0:a00:1:0:0:5db8:d70e]/x",
    "https://[2001:0:5db8:d70e::80ff:fffe]/x",
    "https://[2001:0:5db8:d70e:8000:f227:f5ff:fffe]/x",
    "https://[2001:0:5db8:d70e:0:0:3f57:fefe]/x",
    "https://[2001:0000:5db8:d70e:0000:0000:5601:56fe]/x",
    // ISATAP interface identifiers (RFC 5214 §6.1), with the u and g bits either way.
    "https://[2606:4700::5efe:a00:1]/x",
    "https://[2606:4700::200:5efe:7f00:1]/x",
    "https://[2606:4700:0:0:100:5efe:192.168.1.1]/x",
    "https://[2606:4700::300:5efe:a9fe:a9fe]/x",
    "https://[fe80::5efe:5db8:d70e]/x",
  ];

  it.each(refused)("refuses %s", async (url) => {
    const response = await a.send("POST", "/v3.0/webhooks", { url, events: ["*"] });
    expect(response.status).toBe(400);
    const problem = await json<{ errors: { pointer: string; detail: string }[] }>(response);
    expect(problem.errors[0]!.pointer).toBe("/url");
  });

  it("accepts public https hosts and addresses", async () => {
    // An account with no content, so nothing is ever delivered: the tests send nothing past this machine.
    const owner = await caller();
    const accepted = [
      "https://hooks.example.com/x",
      "https://93.184.215.14:8443/x",
      "https://[2606:4700::1111]/x",
      // IPv4 forms of a public address: mapped, translated, NAT64, 6to4, Teredo (server and client), ISATAP.
      "https://[::ffff:93.184.215.14]/x",
      "https://[::ffff:0:5db8:d70e]/x",
      "https://[64:ff9b::93.184.215.14]/x",
      "https://[2002:5db8:d70e::1]/x",
      "https://[2001:0:5db8:d70e::fefe:fefe]/x",
      "https://[2606:4700::200:5efe:5db8:d70e]/x",
    ];
    for (const url of accepted) {
      const response = await owner.send("POST", "/v3.0/webhooks", { url, events: ["*"] });
      expect(response.status, url).toBe(201);
      const { id } = await json<{ id: number }>(response);
      expect((await owner.send("DELETE", `/v3.0/webhooks/${id}`)).status).toBe(204);
    }
  });

  it("allows http://127.0.0.1 only while the API itself runs on a loopback origin", async () => {
    const body = { url: receiverUrl("local"), events: ["*"] };
    // The setting is on in the tests, but this request reached the API at a public name, as a deployed Worker is.
    const deployed = await a.send("POST", "/v3.0/webhooks", body);
    expect(deployed.status).toBe(400);
    expect((await a.send("POST", `${LOCAL}/v3.0/webhooks`, body)).status).toBe(201);
    expect((await a.send("POST", `${LOCAL}/v3.0/webhooks`, { ...body, url: "http://10.0.0.1/x" })).status).toBe(400);
  });

  it("classifies addresses as the URL parser and DNS write them", () => {
    for (const address of [
      "127.0.0.1",
      "10.0.0.1",
      "::1",
      "::ffff:7f00:1",
      "fe80::1",
      "fd00::",
      "64:ff9b::a00:1",
      "::ffff:0:7f00:1",
      "64:ff9b:1::5db8:d70e",
      "2002:a00:1::",
      "2001:0:7f00:1::",
      "2001:0:5db8:d70e::80ff:fffe",
      "2001:db8:1::5efe:a00:1",
      "2a00:1450::5efe:c0a8:101",
      "3fff:1::1",
      "not-an-ip",
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
    for (const address of [
      "93.184.215.14",
      "1.1.1.1",
      "2606:4700::1111",
      "::ffff:5db8:d70e",
      "::ffff:0:5db8:d70e",
      "64:ff9b::5db8:d70e",
      "2002:5db8:d70e::",
      "2001:0:5db8:d70e::fefe:fefe",
      "2a00:1450::5efe:5db8:d70e",
    ]) {
      expect(isNonPublicAddress(address), address).toBe(false);
    }
  });
});

describe("delivery", () => {
  it("retries a message alone when its account's writes are paused by a move, then delivers", async () => {
    const who = await caller();
    const hook = await createWebhook(who);
    const place = await createPinpoint(who);
    const db = await contentDb(who.accountId);
    await db.prepare("INSERT INTO account_fences (account_id, state) VALUES (?, 'paused')").bind(who.accountId).run();
    const paused = await deliver(hook.id);
    expect(paused.retryMessages).toHaveLength(1);
    expect(paused.explicitAcks).toEqual([]);
    expect(await received(hook.name)).toEqual([]);
    await db.prepare("DELETE FROM account_fences WHERE account_id = ?").bind(who.accountId).run();
    expect((await deliver(hook.id)).retryMessages).toEqual([]);
    expect((await verified(hook.name, hook.secret)).map((p) => p.data.id)).toEqual([place.id]);
  });

  it("delivers every acknowledged write, signed, in commit order per object, with its state", async () => {
    const hook = await createWebhook(a);
    const created = await Promise.all(Array.from({ length: 30 }, (_, i) => createPinpoint(a, { name: `P${i}` })));
    await settle(hook.id);
    // Writes in rounds, delivered between rounds, so objects arrive in several versions.
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(
        created
          .slice(0, 20)
          .map((p) =>
            a.send("PUT", `/v3.0/pinpoints/${p.id}`, { name: `P${p.id} r${round}`, latitude: 48, longitude: 2 }),
          ),
      );
      expect(responses.every((r) => r.status === 200)).toBe(true);
      await settle(hook.id);
    }
    const deleted = created.slice(20, 25);
    await Promise.all(deleted.map((p) => a.send("DELETE", `/v3.0/pinpoints/${p.id}`)));
    await settle(hook.id);

    const payloads = await verified(hook.name, hook.secret);
    const byObject = new Map<number, Payload[]>();
    for (const p of payloads) byObject.set(p.data.id, [...(byObject.get(p.data.id) ?? []), p]);
    expect([...byObject.keys()].sort((x, y) => x - y)).toEqual(created.map((p) => p.id).sort((x, y) => x - y));
    for (const p of created) {
      const events = byObject.get(p.id)!;
      // Commit order per object: positions and versions never go back (a repeat is at least once).
      for (let i = 1; i < events.length; i++) {
        expect(events[i]!.data.position).toBeGreaterThanOrEqual(events[i - 1]!.data.position);
        expect(events[i]!.data.version).toBeGreaterThanOrEqual(events[i - 1]!.data.version);
      }
      expect(events[0]!.type).toBe("pinpoint.created");
      const last = events.at(-1)!;
      if (deleted.includes(p)) {
        expect(last).toMatchObject({ type: "pinpoint.deleted", data: { deleted: true, object: null } });
      } else {
        // The state after the last write, as GET shows it (the media origin aside, none here).
        const current = await json(await a.get(`/v3.0/pinpoints/${p.id}`));
        expect(last.data.object).toEqual(current);
        expect(last.type).toBe(last.data.version === 1 ? "pinpoint.created" : "pinpoint.updated");
      }
    }
    // The rounds of updates each arrived: every updated pinpoint was seen in its versions 2, 3 and 4.
    for (const p of created.slice(0, 20)) {
      expect(new Set(byObject.get(p.id)!.map((e) => e.data.version))).toEqual(new Set([1, 2, 3, 4]));
    }
    const headers = (await received(hook.name))[0]!.headers;
    expect(headers["webhook-id"]).toMatch(new RegExp(`^msg_${hook.id}_p\\d+$`));
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it("sends only the events subscribed to, list membership included", async () => {
    const hook = await createWebhook(a, { events: ["list.membership_changed", "list.created"] });
    const list = await createList(a);
    const pinpoint = await createPinpoint(a);
    await settle(hook.id);
    // Right after the list's own fields changed, a membership change is told apart from an update.
    const added = await a.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: pinpoint.id }]);
    expect(added.status, await added.clone().text()).toBeLessThan(300);
    await settle(hook.id);
    const types = (await verified(hook.name, hook.secret)).map((p) => `${p.type}:${p.data.id}`);
    expect(types).toEqual([`list.created:${list.id}`, `list.membership_changed:${list.id}`]);
  });

  it("never sends another account's changes", async () => {
    const hook = await createWebhook(a);
    const [mine, theirs] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => createPinpoint(a))),
      Promise.all(Array.from({ length: 5 }, () => createPinpoint(b))),
    ]);
    const theirList = await createList(b);
    await settle(hook.id);
    const ids = (await verified(hook.name, hook.secret)).map((p) => p.data.id);
    expect(ids.sort((x, y) => x - y)).toEqual(mine.map((p) => p.id).sort((x, y) => x - y));
    for (const other of [...theirs.map((p) => p.id), theirList.id]) expect(ids).not.toContain(other);
  });

  it("holds changes while the receiver is down and delivers all of them, in order, when it is back", async () => {
    const hook = await createWebhook(a);
    await setStatus(hook.name, 503);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createPinpoint(a, { name: `Down ${i}` }));
    const first = await deliver(hook.id);
    expect(first.retryMessages).toHaveLength(1);
    expect(await retryDelay(hook.id)).toBe(backoffSeconds(1));
    // Only the first change was tried; the rest wait behind it.
    expect(await received(hook.name)).toHaveLength(1);
    const deliveries = await json<{ results: Record<string, unknown>[] }>(
      await a.get(`/v3.0/webhooks/${hook.id}/deliveries`),
    );
    expect(deliveries.results[0]).toMatchObject({
      succeeded: false,
      response_status: 503,
      attempt: 1,
      object_id: made[0]!.id,
    });
    expect((deliveries.results[0]!.response_excerpt as string).length).toBe(200);
    expect(Date.parse(deliveries.results[0]!.next_retry_at as string)).toBeGreaterThan(Date.now());
    expect((await json<WebhookJson>(await a.get(`/v3.0/webhooks/${hook.id}`))).failing_since).not.toBeNull();

    // Before the retry is due, a message changes nothing.
    await deliver(hook.id);
    expect(await received(hook.name)).toHaveLength(1);

    await setStatus(hook.name, 200);
    advance(backoffSeconds(1) * 1000);
    expect((await deliver(hook.id)).retryMessages).toEqual([]);
    const payloads = await verified(hook.name, hook.secret);
    const delivered = payloads.slice(1).map((p) => p.data.id);
    expect(delivered).toEqual(made.map((p) => p.id));
    const after = await json<WebhookJson>(await a.get(`/v3.0/webhooks/${hook.id}`));
    expect(after).toMatchObject({ enabled: true, failing_since: null });
    const latest = await json<{ results: Record<string, unknown>[] }>(
      await a.get(`/v3.0/webhooks/${hook.id}/deliveries?limit=1`),
    );
    expect(latest.results[0]).toMatchObject({ succeeded: true, response_status: 200 });
  });

  it("retries a receiver answering 500 with growing delays, then disables the webhook and says why", async () => {
    const hook = await createWebhook(a);
    await setStatus(hook.name, 500);
    await createPinpoint(a);
    const delays: number[] = [];
    let elapsed = 0;
    for (let attempt = 1; attempt < 100; attempt++) {
      const result = await deliver(hook.id, QUEUE, attempt);
      if (result.retryMessages.length === 0) break;
      const delay = await retryDelay(hook.id);
      delays.push(delay);
      elapsed += delay * 1000;
      advance(delay * 1000);
    }
    expect(delays.slice(0, 4)).toEqual([30, 60, 120, 240]);
    expect(Math.max(...delays)).toBe(3600);
    // About a day of retries, then no more.
    expect(elapsed).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);
    expect(elapsed).toBeLessThan(DISABLE_AFTER_MS + 2 * 3600 * 1000);
    // A new token: the first one expired during the day.
    const owner = await caller("read write", a.accountId);
    const after = await json<WebhookJson>(await owner.get(`/v3.0/webhooks/${hook.id}`));
    expect(after.enabled).toBe(false);
    expect(after.disabled_reason).toMatch(/failed for a day.*HTTP 500/);
    expect((await received(hook.name)).length).toBe(delays.length + 1);

    // Re-enabled, it resumes where it stopped.
    await setStatus(hook.name, 200);
    const put = await owner.send("PUT", `/v3.0/webhooks/${hook.id}`, { enabled: true });
    expect(await json(put)).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    await deliver(hook.id);
    const deliveries = await json<{ results: Record<string, unknown>[] }>(
      await owner.get(`/v3.0/webhooks/${hook.id}/deliveries?limit=1`),
    );
    expect(deliveries.results[0]).toMatchObject({ succeeded: true });
  });

  it("disables a failing webhook whose message was dead-lettered", async () => {
    const hook = await createWebhook(a);
    await setStatus(hook.name, 500);
    await createPinpoint(a);
    expect((await deliver(hook.id)).retryMessages).toHaveLength(1);
    await deliver(hook.id, DEAD_LETTER_QUEUE, 31);
    const after = await json<WebhookJson>(await a.get(`/v3.0/webhooks/${hook.id}`));
    expect(after.enabled).toBe(false);
    expect(after.disabled_reason).toMatch(/dead-lettered.*HTTP 500/);

    // A healthy webhook's dead-lettered message (a consumer fault, not the receiver) leaves it enabled.
    const healthy = await createWebhook(a);
    await deliver(healthy.id, DEAD_LETTER_QUEUE, 31);
    expect((await json<WebhookJson>(await a.get(`/v3.0/webhooks/${healthy.id}`))).enabled).toBe(true);
  });

  it("signs with the old secret as well for a day after a rotation", async () => {
    const hook = await createWebhook(a);
    const rotated = await a.send("POST", `/v3.0/webhooks/${hook.id}/rotate`);
    expect(rotated.status).toBe(200);
    const { secret, previous_secret_expires_at } = await json<{ secret: string; previous_secret_expires_at: string }>(
      rotated,
    );
    expect(secret).not.toBe(hook.secret);
    expect(Date.parse(previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    await createPinpoint(a);
    await deliver(hook.id);
    // Either secret verifies the message: receivers switch whenever they like.
    expect(await verified(hook.name, secret)).toHaveLength(1);
    expect(await verified(hook.name, hook.secret)).toHaveLength(1);
    expect((await received(hook.name))[0]!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);

    advance(25 * 3600 * 1000);
    // A new token: the first one expired in the meantime.
    await createPinpoint(await caller("read write", a.accountId));
    await deliver(hook.id);
    const [, later] = await received(hook.name);
    expect(later!.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect(() =>
      new Webhook(hook.secret).verify(later!.body, {
        ...later!.headers,
        "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
      }),
    ).toThrow();
  });
});

describe("delivery through the queue", () => {
  it("names the queues wrangler.toml configures: its consumer's dead letters go where the code looks", () => {
    const consumers = new Map(env.TEST_QUEUE_CONSUMERS.map((consumer) => [consumer.queue, consumer]));
    expect(consumers.get(QUEUE)?.dead_letter_queue).toBe(DEAD_LETTER_QUEUE);
    expect(consumers.has(DEAD_LETTER_QUEUE)).toBe(true);
  });

  it("delivers a write through the queue with no other help", async () => {
    const hook = await createWebhook(a);
    const pinpoints = await Promise.all(Array.from({ length: 10 }, () => createPinpoint(a)));
    const payloads = await until(
      () => verified(hook.name, hook.secret),
      (list) => new Set(list.map((p) => p.data.id)).size >= pinpoints.length,
    );
    expect(new Set(payloads.map((p) => p.data.id))).toEqual(new Set(pinpoints.map((p) => p.id)));
  });

  it("recovers changes whose message was lost, from the cron", async () => {
    const hook = await createWebhook(a);
    // Written behind the API's back: no message was sent for it, as if it had been lost.
    const row = await (
      await contentDb(a.accountId)
    )
      .prepare("INSERT INTO pinpoints (account_id, name, latitude, longitude) VALUES (?, 'Lost', 1, 2) RETURNING id")
      .bind(a.accountId)
      .first<{ id: number }>();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), env);
    const payloads = await until(
      () => verified(hook.name, hook.secret),
      (list) => list.length > 0,
    );
    expect(payloads.map((p) => p.data.id)).toEqual([row!.id]);
  });
});

describe("every acknowledged write, through the outbox", () => {
  type Expected = { key: string; event: string; version: number; object: unknown };

  /** The deliveries as the receiver verified them, once per `webhook-id`, with how many times each came. */
  async function deliveredOnce(name: string, secret: string): Promise<{ payloads: Payload[]; repeats: number }> {
    const verifier = new Webhook(secret);
    const seen = new Map<string, Payload>();
    let repeats = 0;
    for (const { headers, body } of await received(name)) {
      const payload = verifier.verify(body, headers) as Payload;
      if (seen.has(headers["webhook-id"]!)) repeats++;
      else seen.set(headers["webhook-id"]!, payload);
    }
    return { payloads: [...seen.values()], repeats };
  }

  /** What arrived for each object (`type:id`), in arrival order, as the shape the writes were recorded in. */
  function perObject(payloads: Payload[]): Map<string, Expected[]> {
    const byObject = new Map<string, Expected[]>();
    for (const p of payloads) {
      const key = `${p.data.type}:${p.data.id}`;
      byObject.set(key, [
        ...(byObject.get(key) ?? []),
        { key, event: p.type, version: p.data.version, object: p.data.object },
      ]);
    }
    return byObject;
  }

  it("delivers one message per acknowledged write, with that write's state, in order per object", async () => {
    const [owner, other] = await Promise.all([caller(), caller()]);
    // Both accounts have a webhook, so both write outbox rows; only the owner's may reach the owner's.
    const [hook] = await Promise.all([createWebhook(owner), createWebhook(other)]);
    const acknowledged: Expected[] = [];
    const record = (type: string, id: number, event: string, version: number, object: unknown) =>
      acknowledged.push({ key: `${type}:${id}`, event, version, object });

    const places = await Promise.all(Array.from({ length: 8 }, (_, i) => createPinpoint(owner, { name: `O${i}` })));
    for (const p of places) record("pinpoint", p.id, "pinpoint.created", 1, p);
    // Per object a chain of successive updates; the chains run in parallel, with another account writing
    // too, and nothing is delivered in between: every version must still arrive on its own.
    const noise = Promise.all(Array.from({ length: 8 }, () => createPinpoint(other)));
    await Promise.all(
      places.map(async (p, i) => {
        const first = (await owner.get(`/v3.0/pinpoints/${p.id}`)).headers.get("ETag")!;
        for (let version = 2; version <= 5; version++) {
          const response = await owner.send("PUT", `/v3.0/pinpoints/${p.id}`, {
            name: `O${i} v${version}`,
            tags: [`v${version}`],
          });
          expect(response.status).toBe(200);
          record("pinpoint", p.id, "pinpoint.updated", version, await json(response));
        }
        // Refused writes are not acknowledged, and not delivered.
        expect(
          (await owner.send("PUT", `/v3.0/pinpoints/${p.id}`, { name: "never" }, { "If-Match": first })).status,
        ).toBe(412);
      }),
    );
    expect((await owner.send("POST", "/v3.0/pinpoints", { name: "bad", latitude: 95, longitude: 0 })).status).toBe(400);
    await noise;

    const list = await createList(owner, { name: "Outbox list" });
    record("list", list.id, "list.created", 1, list);
    const added = await owner.send("POST", `/v3.0/lists/${list.id}/pinpoints`, [{ id: places[0]!.id }]);
    expect(added.status).toBeLessThan(300);
    record("list", list.id, "list.membership_changed", 2, await json(await owner.get(`/v3.0/lists/${list.id}`)));
    const renamed = await owner.send("PUT", `/v3.0/lists/${list.id}`, { name: "Renamed" });
    record("list", list.id, "list.updated", 3, await json(renamed));
    for (const p of places.slice(6)) {
      expect((await owner.send("DELETE", `/v3.0/pinpoints/${p.id}`)).status).toBe(204);
      record("pinpoint", p.id, "pinpoint.deleted", 5, null);
    }

    await settle(hook.id);
    const { payloads, repeats } = await until(
      () => deliveredOnce(hook.name, hook.secret),
      ({ payloads }) => payloads.length >= acknowledged.length,
    );
    // Whatever the queue still had in flight has nothing left to send.
    await settle(hook.id);
    expect((await deliveredOnce(hook.name, hook.secret)).payloads).toHaveLength(acknowledged.length);
    expect(repeats).toBe(0);

    const expected = perObject([]);
    for (const write of acknowledged) expected.set(write.key, [...(expected.get(write.key) ?? []), write]);
    for (const writes of expected.values()) writes.sort((x, y) => x.version - y.version);
    expect(perObject(payloads)).toEqual(expected);
    // Every delivered write was the owner's; its outbox rows are gone once delivered.
    expect(payloads.every((p) => p.data.position > 0)).toBe(true);
    expect(await outboxRows(owner.accountId)).toBe(0);
  });

  it("holds every version while the receiver is down and delivers each one, in order, when it is back", async () => {
    const owner = await caller();
    const hook = await createWebhook(owner);
    await setStatus(hook.name, 503);
    const place = await createPinpoint(owner, { name: "v1" });
    const states: unknown[] = [place];
    for (let version = 2; version <= 6; version++) {
      states.push(await json(await owner.send("PUT", `/v3.0/pinpoints/${place.id}`, { name: `v${version}` })));
    }
    expect((await deliver(hook.id)).retryMessages).toHaveLength(1);
    expect(await outboxRows(owner.accountId)).toBe(6);

    await setStatus(hook.name, 200);
    advance(backoffSeconds(1) * 1000);
    await deliver(hook.id);
    const { payloads } = await until(
      () => deliveredOnce(hook.name, hook.secret),
      ({ payloads }) => payloads.length >= states.length,
    );
    expect(payloads.map((p) => p.data.object)).toEqual(states);
    expect(payloads.map((p) => p.data.version)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await outboxRows(owner.accountId)).toBe(0);
  });

  it("writes no outbox rows for an account without webhooks, nor for events no webhook subscribes to", async () => {
    const [plain, picky] = await Promise.all([caller(), caller()]);
    await createWebhook(picky, { events: ["list.created"] });
    await Promise.all(
      [plain, picky].map(async (who) => {
        const places = await Promise.all(Array.from({ length: 6 }, () => createPinpoint(who)));
        await Promise.all(places.map((p) => who.send("PUT", `/v3.0/pinpoints/${p.id}`, { name: "changed" })));
        await who.send("POST", "/v3.0/events", {
          name: "E",
          pinpoint: places[0]!.id,
          dates: [{ start: "2026-05-01T10:00:00Z", end: "2026-05-01T11:00:00Z" }],
        });
        await who.send("DELETE", `/v3.0/pinpoints/${places[0]!.id}`);
      }),
    );
    expect(await outboxRows(plain.accountId)).toBe(0);
    expect(await outboxRows(picky.accountId)).toBe(0);
    // The change log still has every object: only the outbox is skipped.
    const logged = await (
      await contentDb(plain.accountId)
    )
      .prepare("SELECT count(*) AS n FROM changes WHERE account_id = ?")
      .bind(plain.accountId)
      .first<{ n: number }>();
    expect(logged!.n).toBe(7);
    await createList(picky);
    expect(await outboxRows(picky.accountId)).toBe(1);
  });

  it("keeps a disabled webhook's rows for the retention window, and none after its deletion", async () => {
    const owner = await caller();
    const hook = await createWebhook(owner, { enabled: false });
    await Promise.all(Array.from({ length: 3 }, () => createPinpoint(owner)));
    expect(await outboxRows(owner.accountId)).toBe(3);
    const cron = (at: number) =>
      worker.scheduled(createScheduledController({ scheduledTime: at, cron: "17 * * * *" }), env);
    await cron(Date.now());
    expect(await outboxRows(owner.accountId)).toBe(3);
    // Past the change feed's retention window (30 days by default, plus the day of grace of src/index.ts).
    await cron(Date.now() + 32 * 24 * 3600 * 1000);
    expect(await outboxRows(owner.accountId)).toBe(0);

    await createPinpoint(owner);
    expect(await outboxRows(owner.accountId)).toBe(1);
    expect((await owner.send("DELETE", `/v3.0/webhooks/${hook.id}`)).status).toBe(204);
    expect(await outboxRows(owner.accountId)).toBe(0);
    await createPinpoint(owner);
    expect(await outboxRows(owner.accountId)).toBe(0);
  });
});

describe("signing secrets at rest", () => {
  /** The run of the cron that seals secrets, as a Worker with `bindings` replaced runs it. */
  const runJob = (bindings: Partial<Cloudflare.Env> = {}) =>
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), {
      ...env,
      ...bindings,
    });

  type Stored = { id: number; account_id: number; secret: string; previous_secret: string | null };
  const storedSecrets = async (accountId: number) =>
    (
      await (
        await contentDb(accountId)
      )
        .prepare("SELECT id, account_id, secret, previous_secret FROM webhooks WHERE account_id = ? ORDER BY id")
        .bind(accountId)
        .all<Stored>()
    ).results;

  it("stores a secret sealed under the signing key, never as it is, and opens it to sign", async () => {
    const owner = await caller();
    const hook = await createWebhook(owner);
    const rotated = await json<{ secret: string }>(await owner.send("POST", `/v3.0/webhooks/${hook.id}/rotate`));
    const [row] = await storedSecrets(owner.accountId);
    const prefix = sealedPrefix((await sealingKeys(env)).current);
    for (const value of [row!.secret, row!.previous_secret!]) {
      expect(value.startsWith(prefix), value).toBe(true);
      for (const secret of [hook.secret, rotated.secret]) {
        expect(value).not.toContain(secret.slice("whsec_".length, 20));
      }
    }
    const keys = await sealingKeys(env);
    expect(await openSecret(keys, owner.accountId, row!.secret)).toBe(rotated.secret);
    expect(await openSecret(keys, owner.accountId, row!.previous_secret!)).toBe(hook.secret);
    // Sealed for its account: copied to another account's webhook, it opens to nothing.
    expect(await openSecret(keys, owner.accountId + 1, row!.secret)).toBeNull();
    await createPinpoint(owner);
    await deliver(hook.id);
    expect(await verified(hook.name, rotated.secret)).toHaveLength(1);
    expect(await verified(hook.name, hook.secret)).toHaveLength(1);
  });

  it("signs with secrets stored plain before sealing, and the cron seals every one of them, in batches", async () => {
    const owner = await caller();
    const db = await contentDb(owner.accountId);
    // Webhooks written before secrets were sealed: three delivering ones (one rotated)...
    const hooks = await Promise.all([createWebhook(owner), createWebhook(owner), createWebhook(owner)]);
    const rotated = await json<{ secret: string }>(await owner.send("POST", `/v3.0/webhooks/${hooks[2]!.id}/rotate`));
    const plain = new Map<number, [string, string | null]>(hooks.map((hook) => [hook.id, [hook.secret, null]]));
    plain.set(hooks[2]!.id, [rotated.secret, hooks[2]!.secret]);
    for (const [id, [secret, previous]] of plain) {
      await db
        .prepare("UPDATE webhooks SET secret = ?, previous_secret = ? WHERE id = ?")
        .bind(secret, previous, id)
        .run();
    }
    // ...and more than a batch of others, of an account with nothing to deliver.
    const idle = await caller();
    const idleDb = await contentDb(idle.accountId);
    const many = Array.from({ length: 230 }, (_, i) => ({
      secret: `whsec_${btoa(`legacy secret number ${String(i).padStart(11, "0")}`)}`,
      previous: i % 3 === 0 ? `whsec_${btoa(`legacy previous secret ${String(i).padStart(10, "0")}`)}` : null,
    }));
    const { results: inserted } = await idleDb
      .prepare(
        `INSERT INTO webhooks (account_id, url, events, secret, previous_secret, previous_secret_expires_at, position, api_origin)
          SELECT ?1, 'https://hooks.example.com/idle', '["*"]', value ->> 'secret', value ->> 'previous', ?2, 0, ?3
          FROM json_each(?4) RETURNING id, secret, previous_secret`,
      )
      .bind(idle.accountId, Date.now() + 3600_000, LOCAL, JSON.stringify(many))
      .all<{ id: number; secret: string; previous_secret: string | null }>();
    expect(inserted).toHaveLength(many.length);
    for (const row of inserted) plain.set(row.id, [row.secret, row.previous_secret]);

    // Plain, they sign as they are.
    await createPinpoint(owner);
    for (const hook of hooks) await deliver(hook.id);
    for (const hook of hooks) expect(await verified(hook.name, plain.get(hook.id)![0])).toHaveLength(1);

    await runJob();
    const keys = await sealingKeys(env);
    const prefix = sealedPrefix(keys.current);
    const rows = [...(await storedSecrets(owner.accountId)), ...(await storedSecrets(idle.accountId))];
    expect(rows.map((row) => row.id).sort((x, y) => x - y)).toEqual([...plain.keys()].sort((x, y) => x - y));
    for (const row of rows) {
      const [secret, previous] = plain.get(row.id)!;
      expect(row.secret.startsWith(prefix), row.secret).toBe(true);
      expect(await openSecret(keys, row.account_id, row.secret)).toBe(secret);
      if (previous === null) expect(row.previous_secret).toBeNull();
      else {
        expect(row.previous_secret!.startsWith(prefix)).toBe(true);
        expect(await openSecret(keys, row.account_id, row.previous_secret!)).toBe(previous);
      }
    }

    // Sealed, they still sign what the receiver verifies: the rotated one with both secrets.
    const place = await createPinpoint(owner);
    for (const hook of hooks) await deliver(hook.id);
    for (const hook of hooks) {
      const payloads = await verified(hook.name, plain.get(hook.id)![0]);
      expect(payloads.map((p) => p.data.id)).toContain(place.id);
    }
    expect((await verified(hooks[2]!.name, hooks[2]!.secret)).map((p) => p.data.id)).toContain(place.id);
    // A second run finds nothing left to seal.
    const before = await storedSecrets(idle.accountId);
    await runJob();
    expect(await storedSecrets(idle.accountId)).toEqual(before);
  });

  it("through a signing key rotation: the cron seals secrets again under the new key before the old one goes", async () => {
    // The webhook's secret is sealed under an older key; the tests' own key is the new one, which the
    // queue's consumer runs with: without the older one it cannot read the secret.
    const current = env.TOKEN_SIGNING_KEY!;
    const older = base64urlEncode(crypto.getRandomValues(new Uint8Array(48)));
    const before = { TOKEN_SIGNING_KEY: older, TOKEN_SIGNING_KEY_PREVIOUS: current };
    const during = { TOKEN_SIGNING_KEY: current, TOKEN_SIGNING_KEY_PREVIOUS: older };
    const owner = await caller();
    const name = crypto.randomUUID();
    const response = await fetchWith(before, `${LOCAL}/v3.0/webhooks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${owner.token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ url: receiverUrl(name), events: ["*"] }),
    });
    expect(response.status).toBe(201);
    const hook = await json<{ id: number; secret: string }>(response);
    const olderPrefix = sealedPrefix((await sealingKeys({ ...env, ...before })).current);
    expect((await storedSecrets(owner.accountId))[0]!.secret.startsWith(olderPrefix)).toBe(true);

    // Once the older key is gone (the queue's consumer), a delivery fails and says why; nothing is sent.
    const first = await createPinpoint(owner);
    const failed = await until(
      async () =>
        json<{ results: { error: string | null }[] }>(await owner.get(`/v3.0/webhooks/${hook.id}/deliveries`)),
      (page) => page.results.length > 0,
    );
    expect(failed.results[0]!.error).toMatch(/signing secret cannot be read.*rotate/i);
    expect(await received(name)).toEqual([]);

    // While it is the previous key, the secret opens and signs.
    advance(backoffSeconds(1) * 1000 + 1000);
    await deliver(hook.id, QUEUE, 1, during);
    expect((await verified(name, hook.secret)).map((p) => p.data.id)).toEqual([first.id]);

    // The cron, run while both keys are set, seals it again under the new key; then the new key alone
    // reads it, as the queue's consumer shows.
    await runJob(during);
    const currentPrefix = sealedPrefix((await sealingKeys(env)).current);
    expect((await storedSecrets(owner.accountId))[0]!.secret.startsWith(currentPrefix)).toBe(true);
    const second = await createPinpoint(owner);
    const payloads = await until(
      () => verified(name, hook.secret),
      (list) => list.some((p) => p.data.id === second.id),
    );
    expect(payloads.map((p) => p.data.id)).toEqual([first.id, second.id]);
  });
});
