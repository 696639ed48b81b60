/**
 * `npm run import -- FILE`: creates a pinpoint for each place of a GeoJSON
 * FeatureCollection (Point features) or a CSV file (`name,latitude,longitude`
 * columns, then any of address, altitude, category, description,
 * media_credits, tags separated by `;`), in batches of 1,000 through the
 * API's bulk import (all or nothing per batch); resumable (lib/import.ts).
 *
 *   npm run import -- FILE [--base URL] [--client-id ID --client-secret SECRET] [--restart]
 */
import { parseArgs } from "node:util";
import { importFile } from "./lib/import.ts";
import { serviceFrom, TRANSFER_OPTIONS, UsageError } from "./lib/transfer.ts";

const USAGE = `Usage: npm run import -- FILE [options]

Creates a pinpoint for each place of FILE: a GeoJSON FeatureCollection of
Point features (.geojson/.json), or a CSV file (.csv) with a header line
naming at least name, latitude, longitude (also: address, altitude, category,
description, media_credits, tags separated by ";").

Options:
  --base URL             The service (default $POI_BASE_URL or http://localhost:8787)
  --client-id ID         Client credentials (default $POI_CLIENT_ID/$POI_CLIENT_SECRET,
  --client-secret SECRET  else the development client of npm start)
  --restart              Forget an interrupted run of this file and start over
  -h, --help             Show this help.`;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: TRANSFER_OPTIONS,
  });
  if (values.help) return void console.log(USAGE);
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError("Give one file to import.");
  const { imported, resumed, seconds, rate } = await importFile(file, serviceFrom(values), {
    restart: values.restart,
  });
  console.error(
    `Done: ${imported.toLocaleString("en-US")} places imported in ${seconds.toFixed(1)} s ` +
      `(${Math.round(rate).toLocaleString("en-US")}/s)${resumed ? `, ${resumed.toLocaleString("en-US")} before the interruption` : ""}.`,
  );
}

main().catch((error: unknown) => {
  console.error(
    error instanceof UsageError ? `${error.message}\n\n${USAGE}` : error instanceof Error ? error.message : error,
  );
  process.exitCode = error instanceof UsageError ? 2 : 1;
});
