// @ts-check
/**
 * The passkey page in the browser (static/auth/passkey.html): signs in with a
 * passkey, and registers one for the person signed in, through the API on
 * this origin (docs/people-and-roles.md, "Passkeys"). The WebAuthn calls go
 * through SimpleWebAuthn's browser module, loaded beside this file as a
 * classic script (scripts/static-assets.ts), which turns the API's JSON
 * options into what `navigator.credentials` takes and its answers back.
 *
 * For tests and for anyone debugging from the console, the page says where
 * it stands on `document.body.dataset.state`: "loading", then "signed-out" or
 * "signed-in" once the session is read, "registered" once a passkey was
 * added, "error" when something failed; #status says it in a sentence.
 */

/** @type {typeof import("@simplewebauthn/browser")} */
const webauthn = /** @type {any} */ (globalThis).SimpleWebAuthnBrowser;

/**
 * What GET /v3.0/auth/session and a sign-in tell of the session (the page reads no more of it).
 * @typedef {{ person: { id: number, email: string, name: string } | null, csrf_token: string }} Session
 */

const status = /** @type {HTMLElement} */ (document.getElementById("status"));
const nameInput = /** @type {HTMLInputElement} */ (document.getElementById("name"));

/**
 * @param {string} state
 * @param {string} message
 */
function show(state, message) {
  document.body.dataset.state = state;
  status.textContent = message;
}

/**
 * What went wrong, in the API's words: a problem's `detail` (docs/errors.md), else the status.
 * @param {Response} response
 */
async function failure(response) {
  const body = await response.json().catch(() => null);
  return new Error(typeof body?.detail === "string" ? body.detail : `The service answered ${response.status}.`);
}

/**
 * A call to the API with the session cookie; writes carry the session's CSRF token.
 * @param {string} path
 * @param {{ method?: string, body?: unknown, csrf?: string }} [options]
 */
async function api(path, { method = "GET", body, csrf } = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (csrf !== undefined) headers["X-CSRF-Token"] = csrf;
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** The signed-in session, or null. @returns {Promise<Session | null>} */
async function session() {
  const response = await fetch("/v3.0/auth/session", { credentials: "same-origin" });
  if (response.status === 401) return null;
  if (!response.ok) throw await failure(response);
  return response.json();
}

/** @param {Session | null} current */
function showSession(current) {
  if (current?.person) show("signed-in", `Signed in as ${current.person.name} (${current.person.email}).`);
  else show("signed-out", "Not signed in.");
}

async function signIn() {
  const options = await api("/v3.0/auth/passkeys/sign-in/options", { method: "POST" });
  const response = await webauthn.startAuthentication({ optionsJSON: options });
  // The answer is the new session's, as a password sign-in's is.
  showSession(await api("/v3.0/auth/passkeys/sign-in", { method: "POST", body: { response } }));
}

async function register() {
  const current = await session();
  if (!current) throw new Error("Sign in first: a passkey is added to the person signed in.");
  const csrf = current.csrf_token;
  const options = await api("/v3.0/auth/passkeys/registration/options", { method: "POST", csrf });
  const response = await webauthn.startRegistration({ optionsJSON: options });
  const name = nameInput.value.trim() || "Passkey";
  const passkey = await api("/v3.0/auth/passkeys", { method: "POST", csrf, body: { name, response } });
  show("registered", `Passkey “${passkey.name}” registered.`);
}

/**
 * Runs `action` from a button, showing its failure instead of throwing it.
 * @param {string} id
 * @param {() => Promise<void>} action
 */
function onClick(id, action) {
  document.getElementById(id)?.addEventListener("click", () => {
    show("loading", "Waiting for your passkey…");
    action().catch((/** @type {unknown} */ error) =>
      show("error", error instanceof Error ? error.message : String(error)),
    );
  });
}

onClick("sign-in", signIn);
onClick("register", register);
if (!webauthn.browserSupportsWebAuthn()) show("error", "This browser does not support passkeys.");
else
  await session()
    .then(showSession)
    .catch((/** @type {unknown} */ error) => show("error", String(error)));
