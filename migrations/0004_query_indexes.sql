-- Search indexes for the query parameters of GET /pinpoints and /events.
-- Drizzle cannot declare virtual tables, so they live here, kept in step with their base rows by
-- triggers: every write path (API, seeds, restores) indexes alike. Each trigger body is one line,
-- so `wrangler d1 migrations apply --remote` cannot split it (workers-sdk #4326).
--
-- Where pinpoints are: an R*Tree over (account, longitude, latitude), so a box query reads only the
-- caller's points. R*Tree stores 32-bit floats rounded outward: a candidate filter, re-checked
-- against the exact columns.
CREATE VIRTUAL TABLE `pinpoints_rtree` USING rtree(`id`, `min_account`, `max_account`, `min_lon`, `max_lon`, `min_lat`, `max_lat`);
--> statement-breakpoint
-- Full text: contentless (the text stays in the base rows), deletable, folding case and accents.
CREATE VIRTUAL TABLE `pinpoints_fts` USING fts5(`name`, `address`, `tags`, `description`, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
CREATE VIRTUAL TABLE `events_fts` USING fts5(`name`, `tags`, `description`, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
--> statement-breakpoint
-- Descriptions written before this migration: their text without tags and the common entities
-- (new writes get it from src/fields/plain-text.ts, which decodes every entity).
WITH RECURSIVE `strip`(`id`, `rest`, `done`) AS (SELECT `id`, `description`, '' FROM `pinpoints` WHERE `description` IS NOT NULL UNION ALL SELECT `id`, CASE WHEN instr(`rest`, '<') = 0 OR instr(substr(`rest`, instr(`rest`, '<')), '>') = 0 THEN '' ELSE substr(`rest`, instr(`rest`, '<') + instr(substr(`rest`, instr(`rest`, '<')), '>')) END, `done` || CASE WHEN instr(`rest`, '<') = 0 THEN `rest` ELSE substr(`rest`, 1, instr(`rest`, '<') - 1) || ' ' END FROM `strip` WHERE `rest` <> '') UPDATE `pinpoints` SET `description_text` = trim(replace(replace(replace(replace(replace(`s`.`done`, '&lt;', '<'), '&gt;', '>'), '&quot;', '"'), '&nbsp;', ' '), '&amp;', '&')) FROM (SELECT `id`, `done` FROM `strip` WHERE `rest` = '') AS `s` WHERE `s`.`id` = `pinpoints`.`id`;
--> statement-breakpoint
WITH RECURSIVE `strip`(`id`, `rest`, `done`) AS (SELECT `id`, `description`, '' FROM `events` WHERE `description` IS NOT NULL UNION ALL SELECT `id`, CASE WHEN instr(`rest`, '<') = 0 OR instr(substr(`rest`, instr(`rest`, '<')), '>') = 0 THEN '' ELSE substr(`rest`, instr(`rest`, '<') + instr(substr(`rest`, instr(`rest`, '<')), '>')) END, `done` || CASE WHEN instr(`rest`, '<') = 0 THEN `rest` ELSE substr(`rest`, 1, instr(`rest`, '<') - 1) || ' ' END FROM `strip` WHERE `rest` <> '') UPDATE `events` SET `description_text` = trim(replace(replace(replace(replace(replace(`s`.`done`, '&lt;', '<'), '&gt;', '>'), '&quot;', '"'), '&nbsp;', ' '), '&amp;', '&')) FROM (SELECT `id`, `done` FROM `strip` WHERE `rest` = '') AS `s` WHERE `s`.`id` = `events`.`id`;
--> statement-breakpoint
INSERT INTO `pinpoints_rtree` SELECT `id`, `account_id`, `account_id`, `longitude`, `longitude`, `latitude`, `latitude` FROM `pinpoints`;
--> statement-breakpoint
INSERT INTO `pinpoints_fts` (`rowid`, `name`, `address`, `tags`, `description`) SELECT `id`, `name`, `address`, `tags`, `description_text` FROM `pinpoints`;
--> statement-breakpoint
INSERT INTO `events_fts` (`rowid`, `name`, `tags`, `description`) SELECT `id`, `name`, `tags`, `description_text` FROM `events`;
--> statement-breakpoint
INSERT INTO `event_occurrences` (`event_id`, `account_id`, `start`, `end`) SELECT `events`.`id`, `events`.`account_id`, json_extract(`value`, '$.start'), json_extract(`value`, '$.end') FROM `events`, json_each(`events`.`dates`);
--> statement-breakpoint
CREATE TRIGGER `pinpoints_index_insert` AFTER INSERT ON `pinpoints` BEGIN INSERT INTO `pinpoints_rtree` VALUES (new.`id`, new.`account_id`, new.`account_id`, new.`longitude`, new.`longitude`, new.`latitude`, new.`latitude`); INSERT INTO `pinpoints_fts` (`rowid`, `name`, `address`, `tags`, `description`) VALUES (new.`id`, new.`name`, new.`address`, new.`tags`, new.`description_text`); END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_index_move` AFTER UPDATE OF `latitude`, `longitude` ON `pinpoints` BEGIN UPDATE `pinpoints_rtree` SET `min_lon` = new.`longitude`, `max_lon` = new.`longitude`, `min_lat` = new.`latitude`, `max_lat` = new.`latitude` WHERE `id` = new.`id`; END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_index_text` AFTER UPDATE OF `name`, `address`, `tags`, `description_text` ON `pinpoints` BEGIN DELETE FROM `pinpoints_fts` WHERE `rowid` = old.`id`; INSERT INTO `pinpoints_fts` (`rowid`, `name`, `address`, `tags`, `description`) VALUES (new.`id`, new.`name`, new.`address`, new.`tags`, new.`description_text`); END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_index_delete` AFTER DELETE ON `pinpoints` BEGIN DELETE FROM `pinpoints_rtree` WHERE `id` = old.`id`; DELETE FROM `pinpoints_fts` WHERE `rowid` = old.`id`; END;
--> statement-breakpoint
CREATE TRIGGER `events_index_insert` AFTER INSERT ON `events` BEGIN INSERT INTO `event_occurrences` (`event_id`, `account_id`, `start`, `end`) SELECT new.`id`, new.`account_id`, json_extract(`value`, '$.start'), json_extract(`value`, '$.end') FROM json_each(new.`dates`); INSERT INTO `events_fts` (`rowid`, `name`, `tags`, `description`) VALUES (new.`id`, new.`name`, new.`tags`, new.`description_text`); END;
--> statement-breakpoint
CREATE TRIGGER `events_index_dates` AFTER UPDATE OF `dates` ON `events` BEGIN DELETE FROM `event_occurrences` WHERE `event_id` = old.`id`; INSERT INTO `event_occurrences` (`event_id`, `account_id`, `start`, `end`) SELECT new.`id`, new.`account_id`, json_extract(`value`, '$.start'), json_extract(`value`, '$.end') FROM json_each(new.`dates`); END;
--> statement-breakpoint
CREATE TRIGGER `events_index_text` AFTER UPDATE OF `name`, `tags`, `description_text` ON `events` BEGIN DELETE FROM `events_fts` WHERE `rowid` = old.`id`; INSERT INTO `events_fts` (`rowid`, `name`, `tags`, `description`) VALUES (new.`id`, new.`name`, new.`tags`, new.`description_text`); END;
--> statement-breakpoint
-- Occurrences go with their event by foreign key cascade; the text index needs a trigger.
CREATE TRIGGER `events_index_delete` AFTER DELETE ON `events` BEGIN DELETE FROM `events_fts` WHERE `rowid` = old.`id`; END;
