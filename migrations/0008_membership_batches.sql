CREATE TABLE `list_batches` (
	`list_id` integer PRIMARY KEY NOT NULL,
	`changed` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
-- A membership batch bumps its list's version, and so rewrites the list's change-log row, once instead
-- of once per member row (src/lists/membership.ts): the batch adds its list to `list_batches` before
-- writing and deletes it after. Meanwhile the membership triggers only note that something changed;
-- the deletion then bumps the version if it did. Without that row (a pinpoint's deletion cascading to
-- its memberships, any other writer) each membership row still bumps its list. The bump now runs in a
-- statement of its own, so the change-log trigger's INSERT OR REPLACE holds: run inside the batch's
-- INSERT OR IGNORE, it took that statement's conflict policy and left the log's row unchanged.
-- Each trigger body is one line (workers-sdk #4326).
DROP TRIGGER `list_pinpoints_log_insert`;
--> statement-breakpoint
DROP TRIGGER `list_pinpoints_log_delete`;
--> statement-breakpoint
CREATE TRIGGER `list_pinpoints_log_insert` AFTER INSERT ON `list_pinpoints` BEGIN UPDATE `lists` SET `version` = `version` + 1 WHERE `id` = new.`list_id` AND NOT EXISTS (SELECT 1 FROM `list_batches` WHERE `list_id` = new.`list_id`); UPDATE `list_batches` SET `changed` = 1 WHERE `list_id` = new.`list_id` AND `changed` = 0; END;
--> statement-breakpoint
CREATE TRIGGER `list_pinpoints_log_delete` AFTER DELETE ON `list_pinpoints` BEGIN UPDATE `lists` SET `version` = `version` + 1 WHERE `id` = old.`list_id` AND NOT EXISTS (SELECT 1 FROM `list_batches` WHERE `list_id` = old.`list_id`); UPDATE `list_batches` SET `changed` = 1 WHERE `list_id` = old.`list_id` AND `changed` = 0; END;
--> statement-breakpoint
CREATE TRIGGER `list_batches_done` AFTER DELETE ON `list_batches` WHEN old.`changed` = 1 BEGIN UPDATE `lists` SET `version` = `version` + 1 WHERE `id` = old.`list_id`; END;
