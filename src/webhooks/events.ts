/**
 * Webhook event types. Which one a write is, the change-log triggers decide as
 * they write its outbox row (migrations/0015_webhook_outbox.sql): an insert is
 * `.created`, a delete `.deleted`, an update `.updated`, except an update of a
 * list that changed none of its own fields: `list.membership_changed`.
 */
export const OBJECT_TYPES = ["pinpoint", "list", "category", "event"] as const;
const ACTIONS = ["created", "updated", "deleted"] as const;

export const EVENT_TYPES = [
  ...OBJECT_TYPES.flatMap((type) => ACTIONS.map((action) => `${type}.${action}` as const)),
  "list.membership_changed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Subscribes to every event type, including any added later. */
export const ALL_EVENTS = "*";

/** Whether a webhook subscribed to `events` is sent `event`. */
export function subscribes(events: readonly string[], event: EventType): boolean {
  return events.includes(ALL_EVENTS) || events.includes(event);
}
