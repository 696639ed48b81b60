/**
 * The service's notion of "now", in milliseconds. Tests replace `clock.now`
 * to move time (token expiry, revocation cache) without waiting.
 */
export const clock = {
  now: (): number => Date.now(),
};
