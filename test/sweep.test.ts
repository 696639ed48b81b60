/**
 * The hourly job's sweeps. The media sweep deletes uploads older than an hour
 * that no pinpoint, event or category references; keeps referenced and fresh
 * ones; pages through the bucket. Time is injected (`now`, or the cron's
 * scheduledTime), since R2 sets an object's upload time itself. The sign-in
 * tickets' sweep deletes every expired ticket, whatever its kind, and keeps
 * the live ones, in bounded runs.
 */
import { createScheduledController } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { clock } from "../src/core/clock";
import worker from "../src/index";
import { SWEEP_MIN_AGE_MS, sweepMedia } from "../src/media/sweep";
import { issueChallenge } from "../src/people/passkeys-challenges";
import { issueResetTicket, RESET_TICKET_MS } from "../src/people/reset-tickets";
import { deleteExpiredTickets, ticketIdOf } from "../src/people/tickets";
import { caller, createPerson, createPinpoint, type Caller } from "./helpers";
import { exists, keyOf, mediaFile, samples } from "./media-fixtures";

const HOUR = SWEEP_MIN_AGE_MS;
let a: Caller;

beforeAll(async () => {
  a = await caller();
});

/** An object no row points to, as a crash between the R2 and D1 writes leaves. */
async function orphan(name = crypto.randomUUID().replaceAll("-", "")): Promise<{ key: string; uploaded: number }> {
  const key = `m/${name}.png`;
  const object = await env.MEDIA.put(key, samples["image/png"], { httpMetadata: { contentType: "image/png" } });
  return { key, uploaded: object.uploaded.getTime() };
}

/** Clears the bucket between tests so counts are exact (storage is per file, not per test). */
async function emptyBucket(): Promise<void> {
  for (;;) {
    const page = await env.MEDIA.list();
    if (page.objects.length === 0) return;
    await env.MEDIA.delete(page.objects.map((o) => o.key));
  }
}

describe("sweepMedia", () => {
  it("deletes an unreferenced old object and keeps referenced and fresh ones", async () => {
    await emptyBucket();
    const pinpoint = await createPinpoint(a, { media_file: mediaFile() });
    const event = await a.send("POST", "/v3.0/events", {
      name: "Show",
      pinpoint: pinpoint.id,
      dates: [{ start: "2026-11-21T18:30:00Z", end: "2026-11-21T20:00:00Z" }],
      media_file: mediaFile("image/jpeg"),
    });
    expect(event.status).toBe(201);
    const eventKey = keyOf((await event.json<{ media_url: string }>()).media_url);
    const category = await orphan();
    await env.DB.prepare("INSERT INTO categories (account_id, name, image_key) VALUES (?, ?, ?)")
      .bind(a.accountId, "Icon", category.key)
      .run();
    const old = await orphan();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const fresh = await orphan();
    expect(fresh.uploaded).toBeGreaterThan(old.uploaded + 1);

    // One millisecond past the hour for `old`; `fresh` is younger than an hour then.
    const result = await sweepMedia(env, { now: old.uploaded + HOUR + 1 });

    expect(result).toEqual({ listed: 5, deleted: 1 });
    expect(await exists(old.key)).toBe(false);
    for (const kept of [keyOf(pinpoint.media_url), eventKey, category.key, fresh.key]) {
      expect(await exists(kept), kept).toBe(true);
    }
  });

  it("keeps everything younger than an hour", async () => {
    await emptyBucket();
    const young = await orphan();
    expect(await sweepMedia(env, { now: young.uploaded + HOUR - 1 })).toEqual({ listed: 1, deleted: 0 });
    expect(await exists(young.key)).toBe(true);
  });

  it("pages through the bucket and checks each page's references in one batch", async () => {
    await emptyBucket();
    const orphans = await Promise.all(Array.from({ length: 7 }, (_, i) => orphan(`page-${i}`)));
    const referenced = await createPinpoint(a, { media_file: mediaFile() });
    const now = Math.max(...orphans.map((o) => o.uploaded)) + 2 * HOUR;
    expect(await sweepMedia(env, { now, pageSize: 3 })).toEqual({ listed: 8, deleted: 7 });
    for (const { key } of orphans) expect(await exists(key)).toBe(false);
    expect(await exists(keyOf(referenced.media_url))).toBe(true);
  });

  it("leaves objects outside the upload prefix alone", async () => {
    await emptyBucket();
    await env.MEDIA.put("other/readme.txt", "not an upload");
    expect(await sweepMedia(env, { now: Date.now() + 2 * HOUR })).toEqual({ listed: 0, deleted: 0 });
    expect(await exists("other/readme.txt")).toBe(true);
  });
});

/** Runs the Worker's scheduled handler as the cron trigger would, at `scheduledTime`. */
async function runCron(scheduledTime: number): Promise<void> {
  await worker.scheduled(createScheduledController({ scheduledTime, cron: "17 * * * *" }), env);
}

describe("the scheduled handler", () => {
  it("sweeps as of the cron's scheduled time", async () => {
    await emptyBucket();
    const old = await orphan();
    const referenced = await createPinpoint(a, { media_file: mediaFile() });
    await runCron(Date.now() + 2 * HOUR);
    expect(await exists(old.key)).toBe(false);
    expect(await exists(keyOf(referenced.media_url))).toBe(true);
  });

  it("deletes nothing when run at the current time", async () => {
    await emptyBucket();
    const young = await orphan();
    await runCron(Date.now());
    expect(await exists(young.key)).toBe(true);
  });
});

describe("the sign-in tickets' sweep", () => {
  const realNow = clock.now;
  afterEach(() => {
    clock.now = realNow;
  });

  /** Whether `auth_tickets` still holds the ticket of `secret`. */
  async function kept(secret: string): Promise<boolean> {
    const row = await env.DB.prepare("SELECT 1 FROM auth_tickets WHERE id = ?")
      .bind(await ticketIdOf(secret))
      .first();
    return row !== null;
  }

  it("deletes expired reset links and passkey challenges at the hourly job, and keeps a live link", async () => {
    const now = Date.now();
    clock.now = () => now - RESET_TICKET_MS - 1;
    const expired = await issueResetTicket(env.DB, (await createPerson()).personId);
    clock.now = realNow;
    const live = await issueResetTicket(env.DB, (await createPerson()).personId);
    const challenge = await issueChallenge(env.DB, { kind: "sign-in" }, now - RESET_TICKET_MS);
    expect([await kept(expired), await kept(live), await kept(challenge)]).toEqual([true, true, true]);

    await runCron(now);
    expect([await kept(expired), await kept(live), await kept(challenge)]).toEqual([false, true, false]);
  });

  it("deletes at most `limit` a run and says when more are left", async () => {
    const now = Date.now();
    await deleteExpiredTickets(env.DB, now);
    const secrets = Array.from({ length: 5 }, () => crypto.randomUUID());
    for (const secret of secrets) {
      await env.DB.prepare("INSERT INTO auth_tickets (id, kind, expires_at) VALUES (?, 'passkey', ?)")
        .bind(await ticketIdOf(secret), now - 1)
        .run();
    }
    expect(await deleteExpiredTickets(env.DB, now, 3)).toEqual({ deleted: 3, more: true });
    expect(await deleteExpiredTickets(env.DB, now, 3)).toEqual({ deleted: 2, more: false });
    for (const secret of secrets) expect(await kept(secret)).toBe(false);
  });
});
