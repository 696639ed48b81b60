-- The change log behind GET /v3.0/changes. Every insert, update and delete of a content
-- row replaces that object's one entry in `changes`, which takes a new sequence number. Triggers, not
-- application code, so nothing escapes the log: foreign key cascades fire them too (deleting a
-- pinpoint logs its events' tombstones and its lists' membership change), as does any other writer.
-- Built-in categories (no account) belong to no account's feed. Each trigger body is one line, so
-- `wrangler d1 migrations apply --remote` cannot split it (workers-sdk #4326).
CREATE TRIGGER `pinpoints_log_insert` AFTER INSERT ON `pinpoints` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'pinpoint', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_log_update` AFTER UPDATE ON `pinpoints` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'pinpoint', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_log_delete` AFTER DELETE ON `pinpoints` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (old.`account_id`, 'pinpoint', old.`id`, 'delete', old.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `lists_log_insert` AFTER INSERT ON `lists` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'list', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `lists_log_update` AFTER UPDATE ON `lists` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'list', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `lists_log_delete` AFTER DELETE ON `lists` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (old.`account_id`, 'list', old.`id`, 'delete', old.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `events_log_insert` AFTER INSERT ON `events` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'event', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `events_log_update` AFTER UPDATE ON `events` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'event', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `events_log_delete` AFTER DELETE ON `events` BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (old.`account_id`, 'event', old.`id`, 'delete', old.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `categories_log_insert` AFTER INSERT ON `categories` WHEN new.`account_id` IS NOT NULL BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'category', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `categories_log_update` AFTER UPDATE ON `categories` WHEN new.`account_id` IS NOT NULL BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (new.`account_id`, 'category', new.`id`, 'upsert', new.`version`); END;
--> statement-breakpoint
CREATE TRIGGER `categories_log_delete` AFTER DELETE ON `categories` WHEN old.`account_id` IS NOT NULL BEGIN INSERT OR REPLACE INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) VALUES (old.`account_id`, 'category', old.`id`, 'delete', old.`version`); END;
--> statement-breakpoint
-- A membership change is a change of the list: it bumps the list's version (its ETag), which the
-- lists trigger logs as an upsert. While a list itself is being deleted this update finds no row,
-- so its tombstone stands.
CREATE TRIGGER `list_pinpoints_log_insert` AFTER INSERT ON `list_pinpoints` BEGIN UPDATE `lists` SET `version` = `version` + 1 WHERE `id` = new.`list_id`; END;
--> statement-breakpoint
CREATE TRIGGER `list_pinpoints_log_delete` AFTER DELETE ON `list_pinpoints` BEGIN UPDATE `lists` SET `version` = `version` + 1 WHERE `id` = old.`list_id`; END;
--> statement-breakpoint
-- Objects that exist already enter the log once, oldest first.
INSERT INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) SELECT `account_id`, 'category', `id`, 'upsert', `version` FROM `categories` WHERE `account_id` IS NOT NULL ORDER BY `id`;
--> statement-breakpoint
INSERT INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) SELECT `account_id`, 'pinpoint', `id`, 'upsert', `version` FROM `pinpoints` ORDER BY `id`;
--> statement-breakpoint
INSERT INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) SELECT `account_id`, 'list', `id`, 'upsert', `version` FROM `lists` ORDER BY `id`;
--> statement-breakpoint
INSERT INTO `changes` (`account_id`, `type`, `object_id`, `op`, `version`) SELECT `account_id`, 'event', `id`, 'upsert', `version` FROM `events` ORDER BY `id`;
