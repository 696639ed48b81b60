-- Text search in every script (docs/map-queries.md, "Text search in every script"). Chinese, Japanese,
-- Thai, Lao, Khmer and Burmese are written without spaces between words: the index stores them one
-- character a word (src/core/search-form.ts), and a query word in them is the phrase of its characters.
-- The app writes the stored form into the new `*_search` columns (null where it is the text itself) and
-- into `description_text`; the triggers index coalesce(search form, text).
--
-- The index also keeps marks (categories M*): unicode61 took them for separators, so a Thai, Lao,
-- Khmer, Burmese or Indic word was cut at each vowel sign and a word inside a name could not be found.
-- Both indexes are created anew, empty.
--
-- The rows already there get their forms and index entries from a data fill, in batches
-- (src/db/fills.ts, docs/operations.md "Data fills"), registered below when the table has rows: done
-- here, in one statement per column, it would take a database with a few hundred thousand such places
-- past D1's 30 seconds. Until the fill is done, searches with q= answer 503 text_index_filling. `data_fills`
-- is created here, as migrations/0019_data_fills.sql creates it for databases that applied this
-- migration when it still filled the rows itself (they have nothing to fill). Trigger bodies are one
-- line each (workers-sdk #4326).
ALTER TABLE `events` ADD `name_search` text;--> statement-breakpoint
ALTER TABLE `events` ADD `tags_search` text;--> statement-breakpoint
ALTER TABLE `pinpoints` ADD `name_search` text;--> statement-breakpoint
ALTER TABLE `pinpoints` ADD `address_search` text;--> statement-breakpoint
ALTER TABLE `pinpoints` ADD `tags_search` text;
--> statement-breakpoint
DROP TRIGGER `pinpoints_index_insert`;
--> statement-breakpoint
DROP TRIGGER `pinpoints_index_text`;
--> statement-breakpoint
DROP TRIGGER `events_index_insert`;
--> statement-breakpoint
DROP TRIGGER `events_index_text`;
--> statement-breakpoint
DROP TABLE `pinpoints_fts`;
--> statement-breakpoint
DROP TABLE `events_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `pinpoints_fts` USING fts5(`name`, `address`, `tags`, `description`, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2 categories ''L* N* Co M*''', prefix='2 3 4');
--> statement-breakpoint
CREATE VIRTUAL TABLE `events_fts` USING fts5(`name`, `tags`, `description`, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2 categories ''L* N* Co M*''', prefix='2 3 4');
--> statement-breakpoint
CREATE TRIGGER `pinpoints_index_insert` AFTER INSERT ON `pinpoints` BEGIN INSERT INTO `pinpoints_rtree` VALUES (new.`id`, new.`account_id` - 0.25, new.`account_id` + 0.25, new.`longitude`, new.`longitude`, new.`latitude`, new.`latitude`); INSERT INTO `pinpoints_fts` (`rowid`, `name`, `address`, `tags`, `description`) VALUES (new.`id`, coalesce(new.`name_search`, new.`name`), coalesce(new.`address_search`, new.`address`), coalesce(new.`tags_search`, new.`tags`), new.`description_text`); END;
--> statement-breakpoint
CREATE TRIGGER `pinpoints_index_text` AFTER UPDATE OF `name`, `address`, `tags`, `description_text`, `name_search`, `address_search`, `tags_search` ON `pinpoints` BEGIN DELETE FROM `pinpoints_fts` WHERE `rowid` = old.`id`; INSERT INTO `pinpoints_fts` (`rowid`, `name`, `address`, `tags`, `description`) VALUES (new.`id`, coalesce(new.`name_search`, new.`name`), coalesce(new.`address_search`, new.`address`), coalesce(new.`tags_search`, new.`tags`), new.`description_text`); END;
--> statement-breakpoint
CREATE TRIGGER `events_index_insert` AFTER INSERT ON `events` BEGIN INSERT INTO `event_occurrences` (`event_id`, `account_id`, `start`, `end`) SELECT new.`id`, new.`account_id`, json_extract(`value`, '$.start'), json_extract(`value`, '$.end') FROM json_each(new.`dates`); INSERT INTO `events_fts` (`rowid`, `name`, `tags`, `description`) VALUES (new.`id`, coalesce(new.`name_search`, new.`name`), coalesce(new.`tags_search`, new.`tags`), new.`description_text`); END;
--> statement-breakpoint
CREATE TRIGGER `events_index_text` AFTER UPDATE OF `name`, `tags`, `description_text`, `name_search`, `tags_search` ON `events` BEGIN DELETE FROM `events_fts` WHERE `rowid` = old.`id`; INSERT INTO `events_fts` (`rowid`, `name`, `tags`, `description`) VALUES (new.`id`, coalesce(new.`name_search`, new.`name`), coalesce(new.`tags_search`, new.`tags`), new.`description_text`); END;
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `data_fills` (
	`name` text PRIMARY KEY NOT NULL,
	`blocks` text,
	`cursor` integer DEFAULT 0 NOT NULL,
	`last` integer,
	`done_at` integer
);
--> statement-breakpoint
INSERT INTO `data_fills` (`name`, `blocks`) SELECT 'search_forms_pinpoints', 'text_search' WHERE EXISTS (SELECT 1 FROM `pinpoints`);
--> statement-breakpoint
INSERT INTO `data_fills` (`name`, `blocks`) SELECT 'search_forms_events', 'text_search' WHERE EXISTS (SELECT 1 FROM `events`);
