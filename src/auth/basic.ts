/** HTTP Basic client authentication at the token endpoint (RFC 6749 §2.3.1, RFC 7617). */

/** What an Authorization header held: nothing, something unparsable, or a client id and secret. */
type BasicCredentials =
  { kind: "none" } | { kind: "malformed" } | { kind: "credentials"; clientId: string; clientSecret: string };

/** RFC 6749 §2.3.1: Basic credentials are form-urlencoded before base64. */
export function parseBasicAuthorization(header: string | undefined): BasicCredentials {
  if (header === undefined) return { kind: "none" };
  const match = header.match(/^Basic +([A-Za-z0-9+/]+=*) *$/i);
  if (!match) return { kind: "malformed" };
  try {
    const decoded = atob(match[1]!);
    const colon = decoded.indexOf(":");
    if (colon < 0) return { kind: "malformed" };
    const formDecode = (s: string) => decodeURIComponent(s.replaceAll("+", " "));
    return {
      kind: "credentials",
      clientId: formDecode(decoded.slice(0, colon)),
      clientSecret: formDecode(decoded.slice(colon + 1)),
    };
  } catch {
    return { kind: "malformed" };
  }
}
