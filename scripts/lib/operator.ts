/**
 * The service's operator routes (src/operator/routes.ts) as the command line
 * calls them: where the service runs and its operator secret (locally `npm
 * start`'s, from .dev.vars; deployed, from the environment), requests that say
 * plainly when nothing answers or the secret is refused, and a move's NDJSON
 * lines as they arrive.
 */
import { readDevVar } from "./dev-vars.ts";

/** A running service and the secret its operator routes take. */
export type Service = { base: string; secret: string; remote: boolean };

/** What went wrong talking to the service, said so that the operator knows what to do (exit code 1). */
export class ServiceError extends Error {
  override name = "ServiceError";
}

export const LOCAL_BASE = "http://localhost:8787";

/**
 * The service to call: locally `base` (default LOCAL_BASE) with the secret `npm start` put in .dev.vars;
 * with `remote`, `base` or POI_BASE_URL with POI_OPERATOR_SECRET. POI_OPERATOR_SECRET also overrides
 * .dev.vars locally.
 */
export function serviceFrom(remote: boolean, base: string | undefined): Service {
  const secret = process.env.POI_OPERATOR_SECRET || (remote ? undefined : readDevVar("OPERATOR_SECRET"));
  if (remote) {
    const url = base ?? process.env.POI_BASE_URL;
    if (!url) throw new ServiceError("Name the deployed service: --base https://… or POI_BASE_URL.");
    if (!secret) {
      throw new ServiceError(
        "Set POI_OPERATOR_SECRET to the operator secret of the deployed Worker (the value given to " +
          "`npx wrangler secret put OPERATOR_SECRET`).",
      );
    }
    return { base: url.replace(/\/+$/, ""), secret, remote };
  }
  if (!secret) {
    throw new ServiceError(
      "There is no OPERATOR_SECRET in .dev.vars: start `npm start` (it adds one; restart it if it is running), " +
        "then run this again.",
    );
  }
  return { base: (base ?? LOCAL_BASE).replace(/\/+$/, ""), secret, remote };
}

/** A request to an operator route; a service that does not answer is a ServiceError that says how to start it. */
export async function operatorFetch(service: Service, path: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(`${service.base}${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${service.secret}`,
        ...(init.body === undefined ? {} : { "Content-Type": "application/json" }),
      },
    });
  } catch (error) {
    if (init.signal?.aborted) throw error;
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
    throw new ServiceError(
      service.remote
        ? `Nothing answers at ${service.base}${cause}: check --base or POI_BASE_URL.`
        : `Nothing answers at ${service.base}${cause}: the service is not running. Start it with \`npm start\` ` +
            `(in another terminal) and run this again, or name where it runs with --base http://localhost:PORT.`,
    );
  }
}

/** The problem details of a refused request, as one sentence. */
export async function refusal(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const problem = JSON.parse(text) as { detail?: string; title?: string };
    return `${response.status}: ${problem.detail ?? problem.title ?? text}`;
  } catch {
    return `${response.status}: ${text.slice(0, 200)}`;
  }
}

/**
 * The shards of the service, which also shows that its operator routes are on and take this secret:
 * a 404 means it has no OPERATOR_SECRET, a 401 that it has another one.
 */
export async function serviceShards(service: Service): Promise<{ directory: string; shards: string[] }> {
  const response = await operatorFetch(service, "/operator/shards");
  if (response.status === 404) {
    await response.body?.cancel();
    throw new ServiceError(
      service.remote
        ? `The service at ${service.base} takes no operator commands: it has no OPERATOR_SECRET. Set one with ` +
            "`npx wrangler secret put OPERATOR_SECRET` (at least 32 characters, e.g. `openssl rand -base64 48`) " +
            "and pass the same value in POI_OPERATOR_SECRET."
        : `The service at ${service.base} takes no operator commands: it was started without OPERATOR_SECRET. ` +
            "Stop `npm start` and start it again (it adds one to .dev.vars).",
    );
  }
  if (response.status === 401) {
    await response.body?.cancel();
    throw new ServiceError(
      service.remote
        ? `The service at ${service.base} refused the operator secret: POI_OPERATOR_SECRET must be the value ` +
            "given to `npx wrangler secret put OPERATOR_SECRET`."
        : `The service at ${service.base} refused the operator secret of .dev.vars: it was started with another ` +
            "one (or is another checkout's). Restart `npm start`, or name the right service with --base.",
    );
  }
  if (response.status !== 200) throw new ServiceError(`The service refused: ${await refusal(response)}`);
  return (await response.json()) as { directory: string; shards: string[] };
}

/** Each line of an NDJSON body, parsed, as it arrives. */
export async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<Record<string, unknown>> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { done, value } = await reader.read();
    buffered += decoder.decode(value, { stream: !done });
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, end).trim();
      buffered = buffered.slice(end + 1);
      if (line !== "") yield JSON.parse(line) as Record<string, unknown>;
    }
    if (done) return;
  }
}
