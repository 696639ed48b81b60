-- Accounts spread over several D1 databases (docs/scaling.md, src/db/shards.ts). The directory's `accounts`
-- row names the account's shard; `publishable_key_lists` lives in the directory while lists live in shards,
-- so it loses its foreign key to `lists` (a child table rebuilt: nothing references it, nothing cascades).
-- `account_fences` lets a shard refuse every content write of an account being switched to another shard
-- or gone from it (its content, its webhooks and their delivery log): the triggers below abort such a
-- write inside its own transaction, so nothing of it is written and the Worker answers 503 with Retry-After. Categories are shared by every account and written to
-- every shard (src/db/client.ts), so they have no fence. `mover` lets the move's own batches through;
-- a pause with `until` ends by itself, so a crashed move cannot pause an account for good. Each trigger body is one line (workers-sdk #4326).
CREATE TABLE `account_fences` (
	`account_id` integer PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`until` integer
);
--> statement-breakpoint
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_publishable_key_lists` (
	`key_id` integer NOT NULL,
	`list_id` integer NOT NULL,
	PRIMARY KEY(`key_id`, `list_id`),
	FOREIGN KEY (`key_id`) REFERENCES `publishable_keys`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_publishable_key_lists`("key_id", "list_id") SELECT "key_id", "list_id" FROM `publishable_key_lists`;--> statement-breakpoint
DROP TABLE `publishable_key_lists`;--> statement-breakpoint
ALTER TABLE `__new_publishable_key_lists` RENAME TO `publishable_key_lists`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
CREATE INDEX `publishable_key_lists_list_idx` ON `publishable_key_lists` (`list_id`);--> statement-breakpoint
ALTER TABLE `accounts` ADD `shard` text DEFAULT 'DB' NOT NULL;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_fence_insert` BEFORE INSERT ON `pinpoints` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = new.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_fence_update` BEFORE UPDATE ON `pinpoints` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_fence_delete` BEFORE DELETE ON `pinpoints` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `lists_fence_insert` BEFORE INSERT ON `lists` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = new.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `lists_fence_update` BEFORE UPDATE ON `lists` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `lists_fence_delete` BEFORE DELETE ON `lists` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `events_fence_insert` BEFORE INSERT ON `events` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = new.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `events_fence_update` BEFORE UPDATE ON `events` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `events_fence_delete` BEFORE DELETE ON `events` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `idempotency_keys_fence_insert` BEFORE INSERT ON `idempotency_keys` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = new.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `idempotency_keys_fence_update` BEFORE UPDATE ON `idempotency_keys` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `list_pinpoints_fence_insert` BEFORE INSERT ON `list_pinpoints` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = (SELECT `account_id` FROM `lists` WHERE `id` = new.`list_id`) AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `list_pinpoints_fence_delete` BEFORE DELETE ON `list_pinpoints` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = (SELECT `account_id` FROM `lists` WHERE `id` = old.`list_id`) AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `webhooks_fence_insert` BEFORE INSERT ON `webhooks` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = new.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `webhooks_fence_update` BEFORE UPDATE ON `webhooks` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `webhooks_fence_delete` BEFORE DELETE ON `webhooks` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = old.`account_id` AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
CREATE TRIGGER `webhook_deliveries_fence_insert` BEFORE INSERT ON `webhook_deliveries` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = (SELECT `account_id` FROM `webhooks` WHERE `id` = new.`webhook_id`) AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
