-- Prefix indexes of 2, 3 and 4 characters in the full-text indexes. The last word of `q` matches as a
-- prefix (`tour eif`); without an index of its length FTS5 merges, before returning any row, the
-- document lists of every word it begins, so a page of a common prefix cost what the whole account's
-- matches do (4 ms for `cafe` at 1,000,000 pinpoints, 0.05 ms with the index). Words of 5 characters or
-- more are rarer prefixes and still merge. The triggers of 0004 name the tables, which are rebuilt here.
DROP TABLE `pinpoints_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `pinpoints_fts` USING fts5(`name`, `address`, `tags`, `description`, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3 4');
--> statement-breakpoint
INSERT INTO `pinpoints_fts` (`rowid`, `name`, `address`, `tags`, `description`) SELECT `id`, `name`, `address`, `tags`, `description_text` FROM `pinpoints`;
--> statement-breakpoint
DROP TABLE `events_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `events_fts` USING fts5(`name`, `tags`, `description`, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2', prefix='2 3 4');
--> statement-breakpoint
INSERT INTO `events_fts` (`rowid`, `name`, `tags`, `description`) SELECT `id`, `name`, `tags`, `description_text` FROM `events`;
