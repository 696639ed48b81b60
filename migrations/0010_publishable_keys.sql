CREATE TABLE `publishable_key_lists` (
	`key_id` integer NOT NULL,
	`list_id` integer NOT NULL,
	PRIMARY KEY(`key_id`, `list_id`),
	FOREIGN KEY (`key_id`) REFERENCES `publishable_keys`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`list_id`) REFERENCES `lists`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `publishable_key_lists_list_idx` ON `publishable_key_lists` (`list_id`);--> statement-breakpoint
CREATE TABLE `publishable_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`account_id` integer NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`every_list` integer NOT NULL,
	`origins` text,
	`expires_at` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `publishable_keys_key_hash_unique` ON `publishable_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `publishable_keys_account_idx` ON `publishable_keys` (`account_id`,`id`);