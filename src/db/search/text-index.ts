/**
 * Whether the full-text index of the request's database answers for every
 * row: not while a data fill that builds it is running (src/db/fills.ts; the
 * fill of migrations/0012_search_forms.sql creates both indexes anew and adds
 * the rows already there in batches). A search over a half-filled index would
 * miss rows without saying so; it answers 503 `text_index_filling` instead,
 * and every other read and write goes on.
 *
 * An isolate remembers a database it found complete for a minute, so a text
 * search costs no extra query then; a fill registered by a later migration is
 * noticed within that minute.
 */
import { ApiError } from "../../core/problem";
import { contentDatabase } from "../client";

const REMEMBER_MS = 60_000;
/** Seconds a client is asked to wait: the fill's batches run for minutes (docs/operations.md, "Data fills"). */
const RETRY_AFTER_SECONDS = 60;

const completeSince = new WeakMap<D1Database, number>();

/** Throws `text_index_filling` while a fill that blocks text search is not done on the request's database. */
export async function assertTextIndexComplete(d1: D1Database, now = Date.now()): Promise<void> {
  const database = contentDatabase(d1);
  const since = completeSince.get(database);
  if (since !== undefined && now - since < REMEMBER_MS) return;
  const filling = await d1
    .prepare("SELECT 1 AS filling FROM data_fills WHERE blocks = 'text_search' AND done_at IS NULL LIMIT 1")
    .first();
  if (!filling) {
    completeSince.set(database, now);
    return;
  }
  completeSince.delete(database);
  throw new ApiError(
    "text_index_filling",
    "Text search on this database is being rebuilt after an update; searches with q= answer again once it is " +
      "done. Every other request works meanwhile.",
    { headers: { "Retry-After": String(RETRY_AFTER_SECONDS) } },
  );
}
