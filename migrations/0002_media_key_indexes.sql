CREATE INDEX `categories_image_idx` ON `categories` (`image_key`) WHERE "categories"."image_key" is not null;--> statement-breakpoint
CREATE INDEX `events_media_idx` ON `events` (`media_key`) WHERE "events"."media_key" is not null;--> statement-breakpoint
CREATE INDEX `pinpoints_media_idx` ON `pinpoints` (`media_key`) WHERE "pinpoints"."media_key" is not null;