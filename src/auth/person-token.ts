/**
 * A person's access token: the same signed token as a client's
 * (./tokens.ts), minted from their session for the account they act in, with
 * `sub` = `person:<id>` and `sid` naming the session. Its `ver` is 0: a
 * person's standing is read at every request (./person-status.ts).
 */
import { clock } from "../core/clock";
import type { SigningKey } from "../core/signing";
import { signToken } from "./tokens";

const PERSON_SUBJECT = /^person:([1-9][0-9]{0,15})$/;

/** Seconds a person's token lives: the browser mints a new one from its session well before. */
export const PERSON_TOKEN_TTL_SECONDS = 300;

export const personSubject = (personId: number) => `person:${personId}`;

/** The person a token's `sub` names, or null when it names none. */
export function personIdOf(subject: string): number | null {
  const id = subject.match(PERSON_SUBJECT)?.[1];
  return id === undefined ? null : Number(id);
}

/** A token for `personId` in `accountId` from session `sessionId`, with `scope` ("read" or "read write"). */
export async function mintPersonToken(
  key: SigningKey,
  grant: { personId: number; sessionId: string; accountId: number; scope: string },
): Promise<{ token: string; expiresIn: number }> {
  const iat = Math.floor(clock.now() / 1000);
  const token = await signToken(
    {
      sub: personSubject(grant.personId),
      acc: grant.accountId,
      scope: grant.scope,
      ver: 0,
      sid: grant.sessionId,
      iat,
      exp: iat + PERSON_TOKEN_TTL_SECONDS,
    },
    key,
  );
  return { token, expiresIn: PERSON_TOKEN_TTL_SECONDS };
}
