-- Data fills (src/db/schema.ts `data_fills`, src/db/fills.ts): a migration that must compute values for
-- the rows already there registers a fill, which runs in batches after it, instead of running one
-- statement over every row (docs/development.md, "Writing migrations"). 0012 registers the first and
-- creates this table for it, so a database that applied 0012 since has it already.
--
-- A fill writes only columns no client sees (search forms, `description_text`), and must not look
-- like a change: the change-log triggers of pinpoints and events (0015, 0018) fire now only on an update of
-- a column a client sees, the columns their webhook payload shows. Their bodies are 0018's (each account's positions). Each
-- trigger body is one line (workers-sdk #4326).
CREATE TABLE IF NOT EXISTS `data_fills` (
	`name` text PRIMARY KEY NOT NULL,
	`blocks` text,
	`cursor` integer DEFAULT 0 NOT NULL,
	`last` integer,
	`done_at` integer
);
--> statement-breakpoint
DROP TRIGGER `pinpoints_log_update`;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_log_update` AFTER UPDATE OF `account_id`, `name`, `address`, `altitude`, `category_id`, `description`, `latitude`, `longitude`, `media_key`, `media_credits`, `tags`, `created_at`, `updated_at`, `version`, `id` ON `pinpoints` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`, `position`) VALUES (new.`account_id`, 'pinpoint', new.`id`, 'upsert', new.`version`, coalesce((SELECT coalesce(`position`, `seq`) FROM `changes` WHERE `account_id` = new.`account_id` ORDER BY `seq` DESC LIMIT 1), 0) + 1); INSERT INTO `webhook_outbox` (`account_id`, `type`, `object_id`, `op`, `event`, `version`, `seq`, `position`, `object`) SELECT new.`account_id`, 'pinpoint', new.`id`, 'upsert', e.`event`, new.`version`, (SELECT `seq` FROM `changes` WHERE `type` = 'pinpoint' AND `object_id` = new.`id`), (SELECT `position` FROM `changes` WHERE `type` = 'pinpoint' AND `object_id` = new.`id`), json_object('id', new.`id`, 'account_id', new.`account_id`, 'name', new.`name`, 'address', new.`address`, 'altitude', new.`altitude`, 'category_id', new.`category_id`, 'description', new.`description`, 'latitude', new.`latitude`, 'longitude', new.`longitude`, 'media_key', new.`media_key`, 'media_credits', new.`media_credits`, 'tags', new.`tags`, 'created_at', new.`created_at`, 'updated_at', new.`updated_at`, 'version', new.`version`) FROM (SELECT 'pinpoint.updated' AS `event`) e WHERE EXISTS (SELECT 1 FROM `webhooks` w, json_each(w.`events`) j WHERE w.`account_id` = new.`account_id` AND j.`value` IN ('*', e.`event`)); END;
--> statement-breakpoint
DROP TRIGGER `events_log_update`;
--> statement-breakpoint
CREATE TRIGGER `events_log_update` AFTER UPDATE OF `account_id`, `pinpoint_id`, `name`, `description`, `dates`, `media_key`, `media_credits`, `tags`, `created_at`, `updated_at`, `version`, `id` ON `events` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`, `position`) VALUES (new.`account_id`, 'event', new.`id`, 'upsert', new.`version`, coalesce((SELECT coalesce(`position`, `seq`) FROM `changes` WHERE `account_id` = new.`account_id` ORDER BY `seq` DESC LIMIT 1), 0) + 1); INSERT INTO `webhook_outbox` (`account_id`, `type`, `object_id`, `op`, `event`, `version`, `seq`, `position`, `object`) SELECT new.`account_id`, 'event', new.`id`, 'upsert', e.`event`, new.`version`, (SELECT `seq` FROM `changes` WHERE `type` = 'event' AND `object_id` = new.`id`), (SELECT `position` FROM `changes` WHERE `type` = 'event' AND `object_id` = new.`id`), json_object('id', new.`id`, 'account_id', new.`account_id`, 'pinpoint_id', new.`pinpoint_id`, 'name', new.`name`, 'description', new.`description`, 'dates', new.`dates`, 'media_key', new.`media_key`, 'media_credits', new.`media_credits`, 'tags', new.`tags`, 'created_at', new.`created_at`, 'updated_at', new.`updated_at`, 'version', new.`version`) FROM (SELECT 'event.updated' AS `event`) e WHERE EXISTS (SELECT 1 FROM `webhooks` w, json_each(w.`events`) j WHERE w.`account_id` = new.`account_id` AND j.`value` IN ('*', e.`event`)); END;
