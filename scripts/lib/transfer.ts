/**
 * What `npm run import` and `npm run export` share: where the service is and
 * how to get a token (the local one and its development client by default),
 * a progress display (a bar with count, rate and time left on a terminal,
 * plain lines otherwise), and the state file that makes a run resumable.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./wrangler.ts";

export const DEFAULT_BASE = "http://localhost:8787";

export type Service = { base: string; clientId: string; clientSecret: string };

/** The command-line options both commands take: where the service is, which client, and starting over. */
export const TRANSFER_OPTIONS = {
  base: { type: "string" },
  "client-id": { type: "string" },
  "client-secret": { type: "string" },
  restart: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export class UsageError extends Error {
  override name = "UsageError";
}

/** The service from options, else the environment, else the local one with .dev-client.json's client. */
export function serviceFrom(options: { base?: string; "client-id"?: string; "client-secret"?: string }): Service {
  const base = (options.base ?? process.env.POI_BASE_URL ?? DEFAULT_BASE).replace(/\/+$/, "");
  let clientId = options["client-id"] ?? process.env.POI_CLIENT_ID;
  let clientSecret = options["client-secret"] ?? process.env.POI_CLIENT_SECRET;
  if (clientId === undefined || clientSecret === undefined) {
    try {
      const saved = JSON.parse(readFileSync(join(ROOT, ".dev-client.json"), "utf8")) as Record<string, string>;
      clientId ??= saved.client_id;
      clientSecret ??= saved.client_secret;
    } catch {
      // No development client: the message below says what to give.
    }
  }
  if (!clientId || !clientSecret) {
    throw new UsageError("No client: give --client-id and --client-secret, or run `npm start` once for a local one.");
  }
  return { base, clientId, clientSecret };
}

/** A client-credentials token for the service. */
export async function tokenOf(service: Service): Promise<string> {
  const url = `${service.base}/v3.0/oauth2/token`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: service.clientId,
        client_secret: service.clientSecret,
      }),
    });
  } catch (error) {
    // fetch says only "fetch failed"; the cause (ECONNREFUSED, ENOTFOUND) and the URL are what a newcomer needs.
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
    throw new Error(
      `Could not reach the service at ${service.base}${cause}. ` +
        "Start it with `npm start`, or point at where it runs with --base URL or POI_BASE_URL " +
        `(npm start -- --port N serves http://localhost:N; the default is ${DEFAULT_BASE}).`,
    );
  }
  if (!response.ok)
    throw new Error(`Token request to ${service.base} failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

const formatCount = (n: number) => n.toLocaleString("en-US");

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
      : `${s}s`;
}

/** Progress of `done` out of `total` (unknown when null), redrawn in place on a terminal. */
export function progress(what: string, total: number | null, alreadyDone = 0) {
  const started = performance.now();
  const tty = process.stderr.isTTY === true;
  let lastLine = 0;
  const line = (done: number) => {
    const seconds = (performance.now() - started) / 1000;
    const rate = (done - alreadyDone) / Math.max(seconds, 0.001);
    const left = total === null ? "" : `, ${formatDuration((total - done) / rate)} left`;
    const count = total === null ? formatCount(done) : `${formatCount(done)}/${formatCount(total)}`;
    return { text: `${what} ${count} (${formatCount(Math.round(rate))}/s${left})`, rate, seconds };
  };
  return {
    update(done: number) {
      const { text } = line(done);
      if (tty) {
        const width = 30;
        const filled = total ? Math.round((done / total) * width) : 0;
        const bar = total ? `[${"#".repeat(filled)}${".".repeat(width - filled)}] ` : "";
        process.stderr.write(`\r${bar}${text}\x1b[K`);
      } else if (performance.now() - lastLine > 5000) {
        lastLine = performance.now();
        process.stderr.write(`${text}\n`);
      }
    },
    finish(done: number): { seconds: number; rate: number } {
      const { rate, seconds } = line(done);
      if (tty) process.stderr.write("\n");
      return { rate, seconds };
    },
  };
}

/** Reads a JSON state file, or null when there is none. */
export function readState<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return null;
  }
}

/** Writes a state file atomically (rename), so a kill never leaves half of one. */
export function writeState(path: string, state: unknown): void {
  writeFileSync(`${path}.tmp`, JSON.stringify(state));
  renameSync(`${path}.tmp`, path);
}

/** RFC 4180 CSV: one record per call with quotes, doubled quotes and line breaks inside quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') ((field += '"'), i++);
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ",") (row.push(field), (field = ""));
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      if (row.length > 1 || row[0] !== "") rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (field !== "" || row.length > 0) rows.push([...row, field]);
  return rows;
}

export function csvField(value: unknown): string {
  const text = value === null || value === undefined ? "" : Array.isArray(value) ? value.join(";") : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
