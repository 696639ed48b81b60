/**
 * The keys that encrypt cursors (src/http/cursor.ts): AES-256-GCM keys
 * derived from the signing secrets under their own label (derived-keys.ts).
 * The previous secret's key still decrypts, so a key rotation does not break
 * the links clients hold.
 */
import { derivedKeys, type DerivedKeys } from "./derived-keys";
import type { Bindings } from "./env";

export type CursorKeys = DerivedKeys;

const INFO = "cursor encryption, AES-256-GCM, v1";

/** The cursor keys of this Worker's secrets; throws, as signingKeys does, if the secret is missing or weak. */
export function cursorKeys(env: Bindings): Promise<CursorKeys> {
  return derivedKeys(env, INFO);
}
