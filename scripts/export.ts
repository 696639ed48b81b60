/**
 * `npm run export -- FILE`: writes every pinpoint of the account to FILE, a
 * GeoJSON FeatureCollection (or CSV when FILE ends in .csv, the columns
 * `npm run import` reads), following the API's page links 1,000 at a time;
 * resumable (lib/export.ts).
 *
 *   npm run export -- FILE [--base URL] [--client-id ID --client-secret SECRET] [--restart]
 */
import { parseArgs } from "node:util";
import { exportFile } from "./lib/export.ts";
import { serviceFrom, TRANSFER_OPTIONS, UsageError } from "./lib/transfer.ts";

const USAGE = `Usage: npm run export -- FILE [options]

Writes every pinpoint of the account to FILE: a GeoJSON FeatureCollection, or
CSV when FILE ends in .csv.

Options:
  --base URL             The service (default $POI_BASE_URL or http://localhost:8787)
  --client-id ID         Client credentials (default $POI_CLIENT_ID/$POI_CLIENT_SECRET,
  --client-secret SECRET  else the development client of npm start)
  --restart              Forget an interrupted export to FILE and start over
  -h, --help             Show this help.`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: TRANSFER_OPTIONS,
  });
  if (values.help) return void console.log(USAGE);
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("Give one file to export to.");
  const { count, seconds, rate } = await exportFile(file, serviceFrom(values), { restart: values.restart });
  console.error(
    `Done: ${count.toLocaleString("en-US")} places written to ${file} in ${seconds.toFixed(1)} s ` +
      `(${Math.round(rate).toLocaleString("en-US")}/s).`,
  );
}

main().catch((error: unknown) => {
  console.error(
    error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error instanceof Error ? error.message : error,
  );
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
