CREATE TABLE `event_occurrences` (
	`event_id` integer NOT NULL,
	`account_id` integer NOT NULL,
	`start` integer NOT NULL,
	`end` integer NOT NULL,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `event_occurrences_start_idx` ON `event_occurrences` (`account_id`,`start`,`event_id`);--> statement-breakpoint
CREATE INDEX `event_occurrences_event_idx` ON `event_occurrences` (`event_id`,`start`);--> statement-breakpoint
CREATE INDEX `event_occurrences_length_idx` ON `event_occurrences` (`account_id`,"end" - "start");--> statement-breakpoint
ALTER TABLE `events` ADD `description_text` text;--> statement-breakpoint
ALTER TABLE `pinpoints` ADD `description_text` text;