/** The one mapping from stored webhooks and deliveries to their public JSON. */
import type { Webhook, WebhookDelivery } from "../db/schema";
import type { DeliveryJson, WebhookJson } from "./schemas";

export function webhookToJson(row: Webhook): WebhookJson {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.disabled_at === null,
    disabled_reason: row.disabled_reason,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    failing_since: row.failing_since?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function deliveryToJson(row: WebhookDelivery): DeliveryJson {
  return {
    id: row.id,
    message_id: row.message_id,
    event: row.event,
    object_id: row.object_id,
    position: row.seq,
    attempt: row.attempt,
    succeeded: row.succeeded,
    response_status: row.response_status,
    response_excerpt: row.response_excerpt,
    error: row.error,
    latency_ms: row.latency_ms,
    next_retry_at: row.next_retry_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}
