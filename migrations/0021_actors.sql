ALTER TABLE `categories` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `categories` ADD `updated_by` text;--> statement-breakpoint
ALTER TABLE `events` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `events` ADD `updated_by` text;--> statement-breakpoint
ALTER TABLE `lists` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `lists` ADD `updated_by` text;--> statement-breakpoint
ALTER TABLE `pinpoints` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `pinpoints` ADD `updated_by` text;