/**
 * What every request of the client goes through before it reaches `fetch`:
 * credentials (an access token fetched with the client credentials grant or
 * from a person's session and renewed before it expires, or a publishable
 * key), an `Idempotency-Key` on
 * each POST, and retries of 429 and 503 answers after their `Retry-After`.
 * Only web standards (fetch, URL, crypto.randomUUID), so it runs in Node 20+,
 * browsers and Workers alike.
 */

/** The fetch the client calls; openapi-fetch hands it a finished Request. */
export type Fetch = (request: Request) => Promise<Response>;

export type RetryOptions = {
  /** Retries after the first attempt (default 3); 0 turns retrying off. */
  retries?: number;
  /** The longest wait honoured (default 60 s, a rate limit's window); a longer `Retry-After` is answered as it is. */
  maxDelaySeconds?: number;
};

/** The token endpoint refused the client's credentials (an RFC 6749 error body). */
export class TokenError extends Error {
  override name = "TokenError";
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(`The token endpoint answered ${status} ${error}: ${description}`);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Retries a request answered 429 or 503 after the wait its `Retry-After` names
 * (without one: 1, 2, 4 seconds...), and a request that failed in the network
 * when repeating it is safe: any method but POST, and a POST that carries an
 * `Idempotency-Key` (the service answers a repeat with the first answer).
 */
export function retrying(fetch: Fetch, options: RetryOptions = {}): Fetch {
  const retries = options.retries ?? 3;
  const maxDelayMs = (options.maxDelaySeconds ?? 60) * 1000;
  return async (request) => {
    const repeatable = request.method !== "POST" || request.headers.has("Idempotency-Key");
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      const backoff = 1000 * 2 ** attempt;
      let response: Response;
      try {
        response = await fetch(last ? request : request.clone());
      } catch (error) {
        if (last || !repeatable || request.signal.aborted) throw error;
        await sleep(backoff);
        continue;
      }
      if (last || (response.status !== 429 && response.status !== 503)) return response;
      const wait = retryAfterMs(response.headers.get("Retry-After")) ?? backoff;
      if (wait > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(wait);
    }
  };
}

export type ClientCredentials = {
  clientId: string;
  clientSecret: string;
  /** Narrower scopes than the client's, e.g. "read". */
  scope?: string;
};

/** A token and its lifetime, as a token endpoint answers them. */
export type MintedToken = { token: string; expiresIn: number };

/** Fetches a new access token. */
export type Mint = () => Promise<MintedToken>;

/**
 * Access tokens from one source: fetched on first use, shared by concurrent
 * requests, and fetched again `renewBeforeSeconds` before the current one
 * expires (or half its lifetime, for short-lived tokens), so no request
 * leaves with a token about to lapse.
 */
export class TokenSource {
  private current: { token: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly mint: Mint,
    private readonly renewBeforeSeconds = 60,
  ) {}

  /** A token valid for a while yet. */
  token(): Promise<string> {
    if (this.current !== undefined && Date.now() < this.current.renewAt) return Promise.resolve(this.current.token);
    this.pending ??= this.request().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** Forgets a token the service refused (revoked, rotated secret, ended session), so the next request fetches a new one. */
  discard(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async request(): Promise<string> {
    const { token, expiresIn } = await this.mint();
    const renewBefore = Math.min(this.renewBeforeSeconds, expiresIn / 2);
    this.current = { token, renewAt: Date.now() + (expiresIn - renewBefore) * 1000 };
    return token;
  }
}

/** The JSON body of a token endpoint's answer, or a TokenError naming what it refused. */
async function tokenAnswer(response: Response): Promise<Record<string, unknown> & MintedToken> {
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  if (!response.ok || typeof body.access_token !== "string" || typeof body.expires_in !== "number") {
    throw new TokenError(
      response.status,
      String(body.error ?? body.type ?? "invalid_response"),
      String(body.error_description ?? body.detail ?? "no access token in the answer"),
    );
  }
  return { ...body, token: body.access_token, expiresIn: body.expires_in };
}

/** Tokens of a registered client: the client credentials grant (RFC 6749 §4.4) at `/v3.0/oauth2/token`. */
export function clientCredentialsGrant(baseUrl: string, credentials: ClientCredentials, fetch: Fetch): Mint {
  return async () => {
    const form = new URLSearchParams({
      grant_type: "client_credentials",
      client_id: credentials.clientId,
      client_secret: credentials.clientSecret,
    });
    if (credentials.scope !== undefined) form.set("scope", credentials.scope);
    const response = await fetch(
      new Request(`${baseUrl}/v3.0/oauth2/token`, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
        body: form,
      }),
    );
    return tokenAnswer(response);
  };
}

export type PersonSession = {
  /** The account to act in (an id from `GET /v3.0/auth/session`); by default the session's own, or the person's only one. */
  account?: number;
};

/** Sends the page's cookies with the request (a browser's `credentials` option; Workers' types do not declare it). */
const WITH_COOKIES = { credentials: "include" } as const;

/**
 * Tokens of a signed-in person, minted from their session at `POST /v3.0/auth/token`. The session is the
 * service's cookie, which a browser sends by itself to the service's own origin (`credentials: "include"`);
 * elsewhere the given fetch adds it. A cookie-authenticated write needs the session's CSRF token, read once
 * from `GET /v3.0/auth/session` and kept from each token answer after.
 */
export function personSessionTokens(baseUrl: string, session: PersonSession, fetch: Fetch): Mint {
  let csrf: string | undefined;
  const readCsrf = async () => {
    const response = await fetch(
      new Request(`${baseUrl}/v3.0/auth/session`, { ...WITH_COOKIES, headers: { Accept: "application/json" } }),
    );
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof body.csrf_token !== "string") {
      throw new TokenError(response.status, String(body.type ?? "no_session"), String(body.detail ?? "not signed in"));
    }
    return body.csrf_token;
  };
  const post = async (token: string) =>
    fetch(
      new Request(`${baseUrl}/v3.0/auth/token`, {
        ...WITH_COOKIES,
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRF-Token": token },
        body: JSON.stringify(session.account === undefined ? {} : { account: session.account }),
      }),
    );
  return async () => {
    csrf ??= await readCsrf();
    let response = await post(csrf);
    // The session rotated meanwhile (a second factor, another account): its CSRF token changed with it.
    if (response.status === 403) {
      await response.body?.cancel();
      csrf = await readCsrf();
      response = await post(csrf);
    }
    const answer = await tokenAnswer(response);
    if (typeof answer.csrf_token === "string") csrf = answer.csrf_token;
    return answer;
  };
}

/** How requests prove who sends them. */
export type Credentials = { tokens: TokenSource } | { publishableKey: string } | { accessToken: string };

/**
 * Adds the credentials and, to a POST without one, a fresh `Idempotency-Key`
 * (kept across the retries below it, so a repeat is recognised). A token
 * refused as invalid (revoked or rotated meanwhile) is replaced once. A
 * publishable key goes into the query (`?key=`), which browsers send without
 * a CORS preflight, and `next` links keep it.
 */
export function authorizing(fetch: Fetch, credentials: Credentials, idempotencyKeys: boolean): Fetch {
  return async (input) => {
    let request = input;
    if (idempotencyKeys && request.method === "POST" && !request.headers.has("Idempotency-Key")) {
      request = new Request(request, { headers: withHeader(request.headers, "Idempotency-Key", crypto.randomUUID()) });
    }
    if ("publishableKey" in credentials) {
      const url = new URL(request.url);
      if (url.searchParams.has("key")) return fetch(request);
      url.searchParams.set("key", credentials.publishableKey);
      const body = request.method === "GET" || request.method === "HEAD" ? null : await request.arrayBuffer();
      return fetch(
        new Request(url, { method: request.method, headers: request.headers, body, signal: request.signal }),
      );
    }
    if (request.headers.has("Authorization")) return fetch(request);
    if ("accessToken" in credentials) return fetch(bearer(request, credentials.accessToken));
    const token = await credentials.tokens.token();
    const response = await fetch(bearer(request.clone(), token));
    if (response.status !== 401 || !response.headers.get("WWW-Authenticate")?.includes("invalid_token"))
      return response;
    credentials.tokens.discard(token);
    await response.body?.cancel();
    return fetch(bearer(request, await credentials.tokens.token()));
  };
}

function withHeader(headers: Headers, name: string, value: string): Headers {
  const copy = new Headers(headers);
  copy.set(name, value);
  return copy;
}

function bearer(request: Request, token: string): Request {
  return new Request(request, { headers: withHeader(request.headers, "Authorization", `Bearer ${token}`) });
}
