/**
 * Webhook event types, and which one a change-log entry is. The log keeps one
 * entry per object, its latest change (src/db/schema.ts, `changes`), so an
 * entry says what the object is now: a tombstone is `.deleted`; version 1,
 * never changed since it was made, is `.created`; a list whose fields are
 * older than its entry only changed its members, `list.membership_changed`
 * (a field change and a membership change within a second of each other are
 * one `list.updated`); anything else is `.updated`.
 */
import type { Change } from "../db/changes";
import type { List } from "../db/schema";

export const OBJECT_TYPES = ["pinpoint", "list", "category", "event"] as const;
const ACTIONS = ["created", "updated", "deleted"] as const;

export const EVENT_TYPES = [
  ...OBJECT_TYPES.flatMap((type) => ACTIONS.map((action) => `${type}.${action}` as const)),
  "list.membership_changed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Subscribes to every event type, including any added later. */
export const ALL_EVENTS = "*";

/** How long after a list's own fields changed its entry still counts as that change. */
const SAME_CHANGE_MS = 1_000;

/** The event an entry of the log is; `list` is the list row an upsert of a list shows. */
export function eventOf(entry: Change, list?: List): EventType {
  if (entry.op === "delete") return `${entry.type}.deleted`;
  if (entry.version === 1) return `${entry.type}.created`;
  if (entry.type === "list" && list && entry.changed_at.getTime() - list.updated_at.getTime() > SAME_CHANGE_MS) {
    return "list.membership_changed";
  }
  return `${entry.type}.updated`;
}

/** Whether a webhook subscribed to `events` is sent `event`. */
export function subscribes(events: readonly string[], event: EventType): boolean {
  return events.includes(ALL_EVENTS) || events.includes(event);
}
