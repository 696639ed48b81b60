/**
 * Password storage (OWASP Password Storage Cheat Sheet), on what Workers
 * offer: PBKDF2-HMAC-SHA-256 from Web Crypto, 100,000 iterations, a 16-byte
 * random salt and a 32-byte hash. 100,000 is the most the Workers runtime
 * computes (deployed Workers refuse more; `wrangler dev` does not, so a test
 * holds the number to it); OWASP asks 600,000 for PBKDF2-HMAC-SHA-256. Argon2id
 * in WebAssembly, OWASP's first choice, was measured and not taken
 * (docs/people-and-roles.md, "Passwords", says why and what each costs).
 *
 * A stored hash says how it was made, in the PHC string format:
 * `$pbkdf2-sha256$i=100000$<salt>$<hash>` (base64 without padding), so a hash
 * made with other parameters still verifies, and sign-in replaces it with one
 * made with the current parameters (`rehash`).
 *
 * Passwords are compared as NFKC (NIST SP 800-63B §5.1.1.2), so the same
 * password typed on another keyboard, composed or not, still matches.
 */
import { timingSafeEqual, utf8 } from "../core/crypto";

const ALGORITHM = "pbkdf2-sha256";
/** The Workers runtime's ceiling for PBKDF2 iterations, and what every new hash uses. */
export const PBKDF2_ITERATIONS = 100_000;
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const B64 = { omitPadding: true } as const;

type Parameters = { iterations: number; salt: Uint8Array; hash: Uint8Array };

async function derive(password: string, salt: Uint8Array, iterations: number, bytes: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", utf8.encode(password.normalize("NFKC")), "PBKDF2", false, [
    "deriveBits",
  ]);
  const bits = await crypto.subtle.deriveBits({ name: "PBKDF2", hash: "SHA-256", salt, iterations }, key, bytes * 8);
  return new Uint8Array(bits);
}

function decode(text: string): Uint8Array | null {
  try {
    return Uint8Array.fromBase64(text);
  } catch {
    return null;
  }
}

/** The parameters of a stored hash; null for anything this module did not write or could not compute. */
function parse(stored: string): Parameters | null {
  const [empty, algorithm, cost, saltText, hashText, ...rest] = stored.split("$");
  const iterations = Number(/^i=([1-9][0-9]{0,8})$/.exec(cost ?? "")?.[1]);
  const salt = saltText === undefined ? null : decode(saltText);
  const hash = hashText === undefined ? null : decode(hashText);
  if (empty !== "" || algorithm !== ALGORITHM || rest.length > 0 || !salt || !hash || hash.byteLength < 16) return null;
  // More iterations than the runtime computes would fail at every sign-in: such a hash matches nothing.
  if (!(iterations <= PBKDF2_ITERATIONS)) return null;
  return { iterations, salt, hash };
}

/** A new hash of `password`, as stored in `people.password_hash`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, PBKDF2_ITERATIONS, HASH_BYTES);
  return `$${ALGORITHM}$i=${PBKDF2_ITERATIONS}$${salt.toBase64(B64)}$${hash.toBase64(B64)}`;
}

/** The salt of the stand-in hash: fixed, since what it derives is never compared with anything stored. */
const STAND_IN_SALT = new Uint8Array(SALT_BYTES);

/**
 * Whether `password` matches `stored`, and whether the stored hash should be replaced by one made with the
 * current parameters. Without a usable stored hash (no such person, a person without a password) it does
 * the same work, so how long it takes tells nothing about whether an email exists.
 */
export async function verifyPassword(
  password: string,
  stored: string | null,
): Promise<{ matches: boolean; rehash: boolean }> {
  const parameters = stored === null ? null : parse(stored);
  if (!parameters) {
    await derive(password, STAND_IN_SALT, PBKDF2_ITERATIONS, HASH_BYTES);
    return { matches: false, rehash: false };
  }
  const { iterations, salt, hash } = parameters;
  const derived = await derive(password, salt, iterations, hash.byteLength);
  const matches = timingSafeEqual(derived, hash);
  return { matches, rehash: matches && (iterations !== PBKDF2_ITERATIONS || salt.byteLength < SALT_BYTES) };
}
