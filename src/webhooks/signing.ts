/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): a secret
 * is `whsec_` and base64 of 32 random bytes; a message is signed as
 * HMAC-SHA256(secret bytes, `${id}.${timestamp}.${body}`), sent as
 * `webhook-signature: v1,<base64>`, one space-separated signature per valid
 * secret (the old one too, for a day after a rotation), which receivers'
 * libraries (`standardwebhooks` on npm and its ports) accept if any matches.
 */
import { utf8 } from "../core/crypto";

const SECRET_PREFIX = "whsec_";

/** A new signing secret: 256 random bits. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + crypto.getRandomValues(new Uint8Array(32)).toBase64();
}

async function sign(secret: string, content: string): Promise<string> {
  const raw = Uint8Array.fromBase64(secret.slice(SECRET_PREFIX.length));
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, utf8.encode(content))).toBase64();
}

/** The three Standard Webhooks headers of one message, signed with every secret given. */
export async function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  const content = `${id}.${timestampSeconds}.${body}`;
  const signatures = await Promise.all(secrets.map(async (secret) => `v1,${await sign(secret, content)}`));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatures.join(" "),
  };
}
