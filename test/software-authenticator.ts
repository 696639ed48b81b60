/**
 * A passkey authenticator in software, for the tests: an ECDSA P-256 key
 * made with Web Crypto per passkey, and the bytes a browser and its
 * authenticator would send, built by hand (WebAuthn Level 3 §6.1
 * authenticator data, §6.5 attestation object in CBOR with the `none`
 * format, §5.8.1 client data), so a test can also send what a real one never
 * would: another origin or RP ID, no user verification, a counter gone back.
 */
import { base64urlDecode, base64urlEncode, utf8 } from "../src/core/crypto";

/** A small CBOR encoder (RFC 8949): unsigned and negative integers, byte and text strings, maps. */
export function cbor(value: number | string | Uint8Array | Map<number | string, unknown>): Uint8Array {
  const head = (major: number, n: number): number[] => {
    if (n < 24) return [(major << 5) | n];
    if (n < 0x100) return [(major << 5) | 24, n];
    if (n < 0x10000) return [(major << 5) | 25, n >> 8, n & 0xff];
    return [(major << 5) | 26, (n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  };
  if (typeof value === "number") return new Uint8Array(value >= 0 ? head(0, value) : head(1, -1 - value));
  if (typeof value === "string") {
    const bytes = utf8.encode(value);
    return concat(new Uint8Array(head(3, bytes.length)), bytes);
  }
  if (value instanceof Uint8Array) return concat(new Uint8Array(head(2, value.length)), value);
  const parts: Uint8Array[] = [new Uint8Array(head(5, value.size))];
  for (const [key, item] of value) parts.push(cbor(key), cbor(item as Parameters<typeof cbor>[0]));
  return concat(...parts);
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const sha256 = async (bytes: Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));

const uint32 = (n: number) => new Uint8Array([(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);

/** ASN.1 DER of an ECDSA signature (RFC 3279 §2.2.3), which WebAuthn asks for; Web Crypto gives r‖s. */
function derSignature(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0) start++;
    const trimmed = bytes.subarray(start);
    const body = trimmed[0]! & 0x80 ? concat(new Uint8Array([0]), trimmed) : trimmed;
    return concat(new Uint8Array([0x02, body.length]), body);
  };
  const sequence = concat(integer(raw.subarray(0, 32)), integer(raw.subarray(32)));
  return concat(new Uint8Array([0x30, sequence.length]), sequence);
}

/** Authenticator data flags (WebAuthn Level 3 §6.1). */
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

/** What one answer may get wrong on purpose; by default it is what a browser and authenticator send. */
export type Tampering = {
  /** The origin the browser reports; default: the one the authenticator was made for. */
  origin?: string;
  /** The RP ID whose hash the authenticator signs; default: the options' own. */
  rpId?: string;
  /** Default true; false leaves the UV flag out. */
  userVerified?: boolean;
  /** The signature counter to report; default: one more than the last (or 0 if it counts nothing). */
  counter?: number;
  /** The user handle to return; default: the passkey's own; null: none. */
  userHandle?: string | null;
  /** Signs with another key than the passkey's. */
  wrongKey?: boolean;
  /** The challenge to sign; default: the options'. */
  challenge?: string;
  /** The length of a new passkey's credential id, in bytes; default 16. */
  idLength?: number;
};

export type CreationOptions = {
  challenge: string;
  rp: { id: string; name: string };
  user: { id: string; name: string; displayName: string };
  excludeCredentials: { id: string }[];
};

export type RequestOptions = { challenge: string; rpId: string };

export type StoredPasskey = {
  id: string;
  keys: CryptoKeyPair;
  userHandle: string;
  rpId: string;
  /** Whether it counts signatures (a device-bound key) or always reports 0 (a synced passkey). */
  counts: boolean;
  counter: number;
};

/** One authenticator (a phone, a security key) in one browser at `origin`. */
export class SoftwareAuthenticator {
  readonly passkeys: StoredPasskey[] = [];

  constructor(
    readonly origin: string,
    private readonly counts = true,
  ) {}

  /** `navigator.credentials.create()`: a new passkey and the browser's answer, as `PublicKeyCredential.toJSON()`. */
  async create(options: CreationOptions, tampering: Tampering = {}) {
    const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const id = crypto.getRandomValues(new Uint8Array(tampering.idLength ?? 16));
    const jwk = (await crypto.subtle.exportKey("jwk", keys.publicKey)) as JsonWebKey;
    // COSE_Key (RFC 9052 §7, RFC 9053 §7.1.1): kty EC2, alg ES256, crv P-256, x, y.
    const coseKey = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, base64urlDecode(jwk.x!)!],
        [-3, base64urlDecode(jwk.y!)!],
      ]),
    );
    const rpId = tampering.rpId ?? options.rp.id;
    const flags = UP | AT | (tampering.userVerified === false ? 0 : UV);
    const authData = concat(
      await sha256(utf8.encode(rpId)),
      new Uint8Array([flags]),
      uint32(tampering.counter ?? 0),
      new Uint8Array(16), // AAGUID: none, as with attestation "none"
      new Uint8Array([id.length >> 8, id.length & 0xff]),
      id,
      coseKey,
    );
    const attestationObject = cbor(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    const clientData = this.clientData("webauthn.create", tampering.challenge ?? options.challenge, tampering);
    const credentialId = base64urlEncode(id);
    const passkey: StoredPasskey = {
      id: credentialId,
      keys,
      userHandle: options.user.id,
      rpId: options.rp.id,
      counts: this.counts,
      counter: tampering.counter ?? 0,
    };
    this.passkeys.push(passkey);
    return {
      passkey,
      response: {
        id: credentialId,
        rawId: credentialId,
        type: "public-key",
        authenticatorAttachment: "platform",
        clientExtensionResults: { credProps: { rk: true } },
        response: {
          clientDataJSON: base64urlEncode(clientData),
          attestationObject: base64urlEncode(attestationObject),
          transports: ["internal", "hybrid"],
        },
      },
    };
  }

  /** `navigator.credentials.get()` with `passkey`: the browser's answer, as `PublicKeyCredential.toJSON()`. */
  async get(passkey: StoredPasskey, options: RequestOptions, tampering: Tampering = {}) {
    const counter = tampering.counter ?? (passkey.counts ? passkey.counter + 1 : 0);
    if (tampering.counter === undefined) passkey.counter = counter;
    const flags = UP | (tampering.userVerified === false ? 0 : UV);
    const authData = concat(
      await sha256(utf8.encode(tampering.rpId ?? options.rpId)),
      new Uint8Array([flags]),
      uint32(counter),
    );
    const clientData = this.clientData("webauthn.get", tampering.challenge ?? options.challenge, tampering);
    const signingKey = tampering.wrongKey
      ? (
          (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
            "sign",
            "verify",
          ])) as CryptoKeyPair
        ).privateKey
      : passkey.keys.privateKey;
    const signed = concat(authData, await sha256(clientData));
    const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, signingKey, signed));
    const userHandle = tampering.userHandle === undefined ? passkey.userHandle : tampering.userHandle;
    return {
      id: passkey.id,
      rawId: passkey.id,
      type: "public-key",
      authenticatorAttachment: "platform",
      clientExtensionResults: {},
      response: {
        clientDataJSON: base64urlEncode(clientData),
        authenticatorData: base64urlEncode(authData),
        signature: base64urlEncode(derSignature(raw)),
        ...(userHandle === null ? {} : { userHandle }),
      },
    };
  }

  private clientData(type: string, challenge: string, tampering: Tampering): Uint8Array {
    return utf8.encode(
      JSON.stringify({ type, challenge, origin: tampering.origin ?? this.origin, crossOrigin: false }),
    );
  }
}
