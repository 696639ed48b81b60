-- The id ranges handed out (src/db/schema.ts `id_ranges`, src/db/id-ranges.ts): each claim is one row
-- of the directory, written by one statement, so no two shards (nor the directory's counter of category
-- ids) can be given the same range, even when two claims race. Every database gets this migration; only
-- the directory's table is read or written. Nothing is seeded: range 0, where every new database starts
-- allocating, is the directory's by construction (a claim never hands it out).
CREATE TABLE `id_ranges` (
	`start` integer PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`claimed_at` integer NOT NULL,
	`next_id` integer
);
