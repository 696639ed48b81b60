-- The owner's order of a list (src/db/list-positions.ts, docs/api.md "The order of a list"): a position
-- per membership, and the index that reads a list in its order, `(position, pinpoint_id)`. Adding a
-- column with a constant default writes no row, so the memberships already there all take the default
-- and keep, by pinpoint id, the order the API gave them; no statement grows with the rows but the
-- index's. Each trigger body is one line, as in the earlier migrations.
ALTER TABLE `list_pinpoints` ADD `position` integer DEFAULT 4503599627370496 NOT NULL;--> statement-breakpoint
CREATE INDEX `list_pinpoints_order_idx` ON `list_pinpoints` (`list_id`,`position`,`pinpoint_id`);--> statement-breakpoint
-- A membership's new position is a write of the account, refused on a shard the account is being switched
-- away from or has left, as its insert and delete are (0014_shards.sql).
CREATE TRIGGER `list_pinpoints_fence_update` BEFORE UPDATE ON `list_pinpoints` BEGIN SELECT RAISE(ABORT, 'account_fenced') WHERE EXISTS (SELECT 1 FROM `account_fences` WHERE `account_id` = (SELECT `account_id` FROM `lists` WHERE `id` = old.`list_id`) AND (`state` = 'gone' OR (`state` = 'paused' AND coalesce(`until` > cast(unixepoch('subsec') * 1000 as integer), 1)))); END;
--> statement-breakpoint
-- A changed position changes the list, as a membership added or removed does (0008_membership_batches.sql):
-- inside a batch of src/lists/ it marks the batch, whose end then moves the list's version once; outside
-- one it moves the version itself. The version's move writes the change log and the webhook outbox
-- (0022_change_actors.sql), as `list.membership_changed`: the list's own fields did not change.
CREATE TRIGGER `list_pinpoints_log_position` AFTER UPDATE OF `position` ON `list_pinpoints` WHEN old.`position` IS NOT new.`position` BEGIN UPDATE `lists` SET `version` = `version` + 1 WHERE `id` = new.`list_id` AND NOT EXISTS (SELECT 1 FROM `list_batches` WHERE `list_id` = new.`list_id`); UPDATE `list_batches` SET `changed` = 1 WHERE `list_id` = new.`list_id` AND `changed` = 0; END;
