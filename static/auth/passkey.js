// @ts-check
/**
 * The passkey page in the browser (static/auth/passkey.html), through the API
 * on this origin (docs/people-and-roles.md, "Signing in" and "Passkeys"):
 * signs a person in with their email and password, then the TOTP code when
 * it is on (so a person with a password only can register their first
 * passkey here), or with a passkey; lists, registers, renames and deletes the
 * passkeys of the person signed in, and signs out. The WebAuthn calls go
 * through SimpleWebAuthn's browser module, loaded beside this file as a
 * classic script (scripts/static-assets.ts), which turns the API's JSON
 * options into what `navigator.credentials` takes and its answers back.
 *
 * Writes with the session carry its CSRF token (GET /v3.0/auth/session).
 * Progress and success go to #status (role=status), failures to #error
 * (role=alert), so both are announced. For tests and for anyone debugging
 * from the console, the page says where it stands on
 * `document.body.dataset.state`: "loading", then "signed-out",
 * "second-factor" or "signed-in" once the session is read and whenever it
 * changes, "registered", "renamed" or "deleted" after those, "error" when
 * something failed.
 */

/** @type {typeof import("@simplewebauthn/browser")} */
const webauthn = /** @type {any} */ (globalThis).SimpleWebAuthnBrowser;

/**
 * What GET /v3.0/auth/session and the sign-ins tell of the session (the page reads no more of it).
 * @typedef {{
 *   person: { id: number, email: string, name: string } | null,
 *   session: { second_factor: "none" | "pending" | "done" },
 *   csrf_token: string,
 * }} Session
 */
/**
 * A passkey as GET /v3.0/auth/passkeys lists it.
 * @typedef {{ id: string, name: string, created_at: string, last_used_at: string | null }} Passkey
 */

/** @param {string} id */
const element = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
/** @param {string} id */
const form = (id) => /** @type {HTMLFormElement} */ (document.getElementById(id));

const status = element("status");
const error = element("error");
/**
 * The views, each an element shown alone, and where the focus goes when one is shown after a person's
 * action: what they do there first, or whom they are signed in as.
 */
const FOCUS = { "signed-out": "email", "second-factor": "code", "signed-in": "who" };
const passkeyItem = /** @type {HTMLTemplateElement} */ (document.getElementById("passkey-item"));

/**
 * @param {string} state
 * @param {string} message
 */
function show(state, message) {
  document.body.dataset.state = state;
  status.textContent = message;
  error.textContent = "";
}

/** @param {string} message */
function showError(message) {
  document.body.dataset.state = "error";
  status.textContent = "";
  error.textContent = message;
}

/** A refusal of the API, with its HTTP status beside its words. */
class ApiFailure extends Error {
  /**
   * @param {string} message
   * @param {number} status
   */
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

/**
 * What went wrong, in the API's words: a problem's `detail` (docs/errors.md), else the status.
 * @param {Response} response
 */
async function failure(response) {
  const body = await response.json().catch(() => null);
  const detail = typeof body?.detail === "string" ? body.detail : `The service answered ${response.status}.`;
  return new ApiFailure(detail, response.status);
}

/**
 * A call to the API with the session cookie. A write with the session (`csrf`) carries its CSRF token, read
 * just before: the session may have been replaced since the page showed it, and its token with it (a token
 * for another account minted in another tab starts a new session).
 * @param {string} path
 * @param {{ method?: string, body?: unknown, csrf?: boolean }} [options]
 */
async function api(path, { method = "GET", body, csrf = false } = {}) {
  /** @type {Record<string, string>} */
  const headers = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (csrf) {
    const current = await session();
    if (!current) throw new ApiFailure("The session has ended; sign in again.", 401);
    headers["X-CSRF-Token"] = current.csrf_token;
  }
  const response = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** The session this browser has, or null. @returns {Promise<Session | null>} */
async function session() {
  const response = await fetch("/v3.0/auth/session", { credentials: "same-origin" });
  if (response.status === 401) return null;
  if (!response.ok) throw await failure(response);
  return response.json();
}

/**
 * Shows what goes with `current`: the sign-in forms, the second factor's, or the signed-in person's passkeys.
 * @param {Session | null} current
 * @param {{ focus?: boolean }} [options] move the focus into the view shown (after a person's action)
 */
async function showSession(current, { focus = false } = {}) {
  const view = !current ? "signed-out" : current.session.second_factor === "pending" ? "second-factor" : "signed-in";
  if (view === "signed-in") await listPasskeys();
  for (const id of Object.keys(FOCUS)) element(id).hidden = id !== view;
  if (current?.person) element("who").textContent = `Signed in as ${current.person.name} (${current.person.email}).`;
  // What the view shows says where the person stands; the focus, moved there, reads it to them.
  show(view, view === "signed-out" ? "Not signed in." : "");
  if (focus) element(FOCUS[view]).focus();
}

/** @param {string} iso */
const date = (iso) => new Date(iso).toLocaleString();

/** Lists the person's passkeys, each a group with its own rename form and delete button. */
async function listPasskeys() {
  const { results } = /** @type {{ results: Passkey[] }} */ (await api("/v3.0/auth/passkeys"));
  const items = results.map((passkey) => {
    const item = /** @type {DocumentFragment} */ (passkeyItem.content.cloneNode(true));
    const part = (/** @type {string} */ selector) => /** @type {HTMLElement} */ (item.querySelector(selector));
    part("legend").textContent = passkey.name;
    const used = passkey.last_used_at ? `last used ${date(passkey.last_used_at)}` : "never used to sign in";
    part(".details").textContent = `Added ${date(passkey.created_at)}, ${used}.`;
    const name = /** @type {HTMLInputElement} */ (part("input"));
    name.value = passkey.name;
    onSubmit(/** @type {HTMLFormElement} */ (part("form")), "Renaming…", () => rename(passkey, name.value));
    onAction(part(".delete"), "Deleting…", () => remove(passkey));
    return item;
  });
  element("passkeys").replaceChildren(...items);
  element("no-passkeys").hidden = results.length > 0;
}

async function signInWithPassword() {
  const email = input("email").value;
  await answer(input("password"), (password) =>
    api("/v3.0/auth/sign-in", { method: "POST", body: { email, password } }),
  );
}

async function passSecondFactor() {
  await answer(input("code"), (code) => {
    const typed = code.replace(/\s/g, "");
    // Six digits are the authenticator app's code; anything else is taken for a recovery code (xxxxx-xxxxx).
    const body = /^\d{6}$/.test(typed) ? { code: typed } : { recovery_code: typed };
    return api("/v3.0/auth/second-factor", { method: "POST", body, csrf: true });
  });
}

/**
 * Sends the secret typed in `field` (a password or a code) with `send`, whose answer is a session, and
 * shows that session. The secret is not kept on the page, right or wrong; when it is refused, the focus
 * goes back to its field, for the person to type it again.
 * @param {HTMLInputElement} field
 * @param {(secret: string) => Promise<Session>} send
 */
async function answer(field, send) {
  const secret = field.value;
  field.value = "";
  try {
    await showSession(await send(secret), { focus: true });
  } catch (failed) {
    field.focus();
    throw failed;
  }
}

async function signInWithPasskey() {
  const options = await api("/v3.0/auth/passkeys/sign-in/options", { method: "POST" });
  const response = await webauthn.startAuthentication({ optionsJSON: options });
  // The answer is the new session's, as a password sign-in's is.
  await showSession(await api("/v3.0/auth/passkeys/sign-in", { method: "POST", body: { response } }), {
    focus: true,
  });
}

async function register() {
  const options = await api("/v3.0/auth/passkeys/registration/options", { method: "POST", csrf: true });
  const response = await webauthn.startRegistration({ optionsJSON: options });
  const name = input("name").value.trim() || "Passkey";
  const passkey = await api("/v3.0/auth/passkeys", { method: "POST", body: { name, response }, csrf: true });
  form("register-form").reset();
  await listPasskeys();
  show("registered", `Passkey “${passkey.name}” registered.`);
}

/**
 * @param {Passkey} passkey
 * @param {string} name
 */
async function rename(passkey, name) {
  const path = `/v3.0/auth/passkeys/${encodeURIComponent(passkey.id)}`;
  const renamed = await api(path, { method: "PATCH", body: { name }, csrf: true });
  await listPasskeys();
  show("renamed", `Passkey “${passkey.name}” renamed “${renamed.name}”.`);
}

/** @param {Passkey} passkey */
async function remove(passkey) {
  const question =
    `Delete the passkey “${passkey.name}”? It will no longer sign you in here; ` +
    "remove it from your authenticator too.";
  if (!confirm(question)) return show("signed-in", "Nothing deleted.");
  await api(`/v3.0/auth/passkeys/${encodeURIComponent(passkey.id)}`, { method: "DELETE", csrf: true });
  await listPasskeys();
  show("deleted", `Passkey “${passkey.name}” deleted.`);
}

async function signOut() {
  await api("/v3.0/auth/sign-out", { method: "POST", csrf: true });
  await showSession(null, { focus: true });
}

/**
 * Runs `action`, saying `busy` meanwhile, and shows its failure instead of throwing it. A session that has
 * ended (401) shows the sign-in forms again, with the reason.
 * @param {string} busy
 * @param {() => Promise<unknown>} action
 */
async function run(busy, action) {
  show("loading", busy);
  try {
    await action();
  } catch (/** @type {unknown} */ failed) {
    if (failed instanceof ApiFailure && failed.status === 401) await showSession(null);
    showError(failed instanceof Error ? failed.message : String(failed));
  }
}

/**
 * @param {HTMLElement} button
 * @param {string} busy
 * @param {() => Promise<unknown>} action
 */
function onAction(button, busy, action) {
  button.addEventListener("click", () => run(busy, action));
}

/**
 * Handles a form's submission in the page (the policy's form-action 'none' refuses any other).
 * @param {HTMLFormElement} target
 * @param {string} busy
 * @param {() => Promise<unknown>} action
 */
function onSubmit(target, busy, action) {
  target.addEventListener("submit", (event) => {
    event.preventDefault();
    run(busy, action);
  });
}

onSubmit(form("password-form"), "Signing in…", signInWithPassword);
onSubmit(form("code-form"), "Checking the code…", passSecondFactor);
onAction(element("passkey-sign-in"), "Waiting for your passkey…", signInWithPasskey);
onSubmit(form("register-form"), "Waiting for your passkey…", register);
/** @param {string} selector */
const buttons = (selector) => /** @type {NodeListOf<HTMLButtonElement>} */ (document.querySelectorAll(selector));
for (const button of buttons(".sign-out")) onAction(button, "Signing out…", signOut);

await run("Loading…", async () => {
  await showSession(await session());
  if (!webauthn.browserSupportsWebAuthn()) {
    for (const button of buttons(".needs-webauthn")) button.disabled = true;
    showError("This browser does not support passkeys; you can still sign in with your password.");
  }
});
