/** Request and response shapes of webhooks and their deliveries, derived from the `webhooks` tables. */
import { createSelectSchema } from "drizzle-zod";
import * as z from "zod";
import { webhookDeliveries, webhooks } from "../db/schema";
import { ALL_EVENTS, EVENT_TYPES } from "./events";

export const MAX_URL_LENGTH = 2_000;
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 1_000;

const EXAMPLE_EVENTS = ["pinpoint.created", "pinpoint.updated", "pinpoint.deleted"];

const url = z
  .string()
  .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`)
  .refine((value) => URL.canParse(value), "must be an absolute https URL")
  .meta({
    description: "Where the events are POSTed: https, on a public host",
    example: "https://hooks.example.com/poi",
  });
const events = z
  .array(z.enum([...EVENT_TYPES, ALL_EVENTS]))
  .min(1, "must name at least one event type, or `*` for all")
  .max(EVENT_TYPES.length + 1)
  .transform((values) => [...new Set(values)])
  .meta({ description: "The event types sent; `*`: all, including any added later", example: EXAMPLE_EVENTS });
const description = z
  .string()
  .max(MAX_WEBHOOK_DESCRIPTION_LENGTH, `must be at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters`)
  .nullable()
  .meta({ description: "For people: what the webhook is for" });
const enabled = z
  .boolean()
  .meta({ description: "`true` (re-)enables a webhook: deliveries resume where they stopped; `false` pauses it" });

/** POST body. */
export const webhookCreate = z
  .object({ url, events, description: description.default(null), enabled: enabled.default(true) })
  .meta({ id: "WebhookCreate" });
export type WebhookCreate = z.output<typeof webhookCreate>;

/** PUT body: as every resource's PUT, only the fields sent change (`description: null` clears it). */
export const webhookUpdate = z
  .object({
    url: url.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: enabled.optional(),
  })
  .meta({ id: "WebhookUpdate" });
export type WebhookUpdate = z.output<typeof webhookUpdate>;

/** A webhook as the API returns it; `secret` only when created or rotated. */
export const webhookJson = createSelectSchema(webhooks)
  .pick({ id: true, url: true, description: true, disabled_reason: true })
  .extend({
    events: z.array(z.string()),
    enabled: z.boolean(),
    disabled_reason: z
      .string()
      .nullable()
      .meta({ description: "Why deliveries stopped: disabled after a day of failures; null while enabled" }),
    disabled_at: z.iso.datetime().nullable(),
    failing_since: z.iso
      .datetime()
      .nullable()
      .meta({ description: "Since when deliveries fail (they are retried); null when the last one succeeded" }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "Webhook" });
export type WebhookJson = z.output<typeof webhookJson>;

const secretField = z.string().meta({
  description:
    "The signing secret (Standard Webhooks, `whsec_` and base64): shown only now; verify each delivery with it",
  example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
});

export const createdWebhookJson = webhookJson.extend({ secret: secretField }).meta({ id: "CreatedWebhook" });

export const rotatedSecretJson = z
  .object({
    secret: secretField,
    previous_secret_expires_at: z.iso
      .datetime()
      .meta({ description: "Until then deliveries are signed with the old secret too" }),
  })
  .meta({ id: "RotatedWebhookSecret" });

/** One delivery attempt. */
export const deliveryJson = createSelectSchema(webhookDeliveries)
  .pick({
    id: true,
    message_id: true,
    event: true,
    object_id: true,
    attempt: true,
    succeeded: true,
    response_status: true,
    response_excerpt: true,
    error: true,
    latency_ms: true,
  })
  .extend({
    message_id: z.string().meta({ description: "The `webhook-id` header: the same for every attempt of a message" }),
    position: z.int().meta({
      description:
        "The write's position among your account's changes (1, 2, 3…, one per change), as its payload shows it",
    }),
    response_status: z.int().nullable().meta({ description: "The receiver's status code; null if it did not answer" }),
    response_excerpt: z
      .string()
      .nullable()
      .meta({ description: "The start of the receiver's answer (200 characters)" }),
    error: z.string().nullable().meta({ description: "Why the attempt failed, when the status does not say" }),
    next_retry_at: z.iso.datetime().nullable().meta({ description: "When a failed attempt is retried" }),
    created_at: z.iso.datetime(),
  })
  .meta({ id: "WebhookDelivery" });
export type DeliveryJson = z.output<typeof deliveryJson>;
