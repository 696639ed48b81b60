/**
 * Who the service is to a passkey (WebAuthn's "Relying Party"): its origin,
 * PUBLIC_ORIGIN when configured, else the origin the request came to; its RP
 * ID, that origin's host name, which every passkey is bound to for good; and
 * the user handle it gives each person's passkeys (docs/people-and-roles.md,
 * "Passkeys").
 */
import type { Context } from "hono";
import { utf8 } from "../core/crypto";
import type { AppEnv } from "../core/env";

export type RelyingParty = {
  /** The origin the browser must report in clientDataJSON (`https://api.example.com`). */
  origin: string;
  /** The RP ID: the origin's host name, whose SHA-256 the authenticator signs. */
  id: string;
  /** What the browser may show beside the passkey; the host name too, the one name the service has. */
  name: string;
};

export function relyingParty(c: Context<AppEnv>): RelyingParty {
  const origin = c.var.config.publicOrigin ?? new URL(c.req.url).origin;
  const { hostname } = new URL(origin);
  return { origin, id: hostname, name: hostname };
}

/**
 * The WebAuthn user handle of a person's passkeys: the same for all of them, so an authenticator keeps one
 * passkey per person and replaces it when registered again, and free of anything personal (WebAuthn Level 3
 * §14.6.1): the person's id, which says nothing outside this service.
 */
export function userHandleOf(personId: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(utf8.encode(`person:${personId}`));
}
