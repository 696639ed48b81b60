/**
 * A person signing in from a script, as the browser app does
 * (docs/people-and-roles.md): POST /v3.0/auth/sign-in with the email and
 * password, keeping the cookies it sets, then POST /v3.0/auth/token with the
 * session cookie and its CSRF token for a bearer token. A script sends no
 * `Origin` or `Sec-Fetch-Site`, which the service takes for what it is: not a
 * browser's cross-site request. For the suites and the benchmarks that act
 * as a person.
 */

/**
 * A signed-in session: the cookies to send back and the CSRF token its writes need, both replaced when
 * the service rotates the session (a token for another account than the session's does).
 */
export type Session = { base: string; cookies: Map<string, string>; csrf: string };

/** Keeps the cookies `response` sets, by name. */
function keepCookies(cookies: Map<string, string>, response: Response): void {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(";")[0]!;
    const at = pair.indexOf("=");
    cookies.set(pair.slice(0, at), pair.slice(at + 1));
  }
}

/** The `Cookie` header that sends the session's cookies back. */
export const cookieHeader = (session: Session) =>
  [...session.cookies].map(([name, value]) => `${name}=${value}`).join("; ");

/** A refused sign-in or token request: the status and the problem's text. */
export class SignInError extends Error {
  override name = "SignInError";
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

/** Signs `email` in at the service at `base`; throws SignInError when the service refuses. */
export async function signIn(base: string, email: string, password: string): Promise<Session> {
  const response = await fetch(new URL("/v3.0/auth/sign-in", base), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new SignInError(`sign-in: ${response.status} ${text}`, response.status);
  const cookies = new Map<string, string>();
  keepCookies(cookies, response);
  return { base, cookies, csrf: (JSON.parse(text) as { csrf_token: string }).csrf_token };
}

/** A bearer token minted from the session, for `account` (an id) or the session's own account. */
export async function personToken(session: Session, account?: number): Promise<string> {
  const response = await fetch(new URL("/v3.0/auth/token", session.base), {
    method: "POST",
    headers: { "Content-Type": "application/json", Cookie: cookieHeader(session), "X-CSRF-Token": session.csrf },
    body: JSON.stringify(account === undefined ? {} : { account }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new SignInError(`token: ${response.status} ${text}`, response.status);
  keepCookies(session.cookies, response);
  const body = JSON.parse(text) as { access_token: string; csrf_token: string };
  session.csrf = body.csrf_token;
  return body.access_token;
}
