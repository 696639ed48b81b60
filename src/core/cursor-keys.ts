/**
 * The keys that encrypt cursors (src/http/cursor.ts): AES-256-GCM keys derived
 * from the signing secrets (derived-keys.ts), the current one encrypting and
 * both decrypting.
 */
import type { Bindings } from "./env";
import { derivedKeys, type DerivedKeys } from "./derived-keys";

export type CursorKeys = DerivedKeys;

/** The cursor keys of this Worker's secrets; throws, as signingKeys does, if the secret is missing or weak. */
export const cursorKeys = (env: Bindings): Promise<CursorKeys> =>
  derivedKeys(env, {
    info: "cursor encryption, AES-256-GCM, v1",
    algorithm: { name: "AES-GCM", length: 256 },
    usages: ["encrypt", "decrypt"],
  });
