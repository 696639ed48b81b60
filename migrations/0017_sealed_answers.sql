-- The idempotency records whose answer was stored plain, before answers were sealed (src/core/sealed.ts):
-- the scheduled job finds them here and seals them (src/db/idempotency.ts `sealStoredAnswers`). New
-- answers are stored sealed, so the index empties at the job's first run and then costs nothing. No table rebuilt.
CREATE INDEX `idempotency_keys_plain_idx` ON `idempotency_keys` (`account_id`,`key`) WHERE substr("idempotency_keys"."body", 1, 10) <> 'sealed:v1:';