/**
 * Where a webhook may deliver (SSRF): `https` only, never an address of a
 * private, loopback, link-local or otherwise non-public range, written as an
 * IP literal in any of its forms (the URL parser turns `2130706433`,
 * `0x7f.1` and `[::ffff:127.0.0.1]` into canonical literals first), an IPv6
 * address that stands for or tunnels to such an IPv4 address included
 * (mapped, translated, NAT64, 6to4, Teredo, ISATAP: isNonPublicV6), or behind
 * a host name that resolves to one (checked at every delivery over DNS over
 * HTTPS, since Workers have no DNS API). Names for the local machine or a
 * private network (`localhost`, `*.internal`, one label) are refused by name.
 *
 * The one exception is local development (WEBHOOKS_ALLOW_LOOPBACK):
 * `http://127.0.0.1`, `http://localhost` and `http://[::1]`, accepted only
 * while the API itself is reached on a loopback address, which a deployed
 * Worker never is (docs/webhooks.md).
 */

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Names that never lead to a public host. */
function isPrivateName(host: string): boolean {
  return (
    !host.includes(".") ||
    /(^|\.)(localhost|local|internal|intranet|lan|home\.arpa|localdomain)$/.test(host) ||
    host.endsWith(".")
  );
}

/** Four octets of a dotted IPv4 literal as the URL parser writes it; null if `host` is not one. */
function ipv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null;
  const octets = parts.map(Number);
  return octets.every((o) => o <= 255) ? octets : null;
}

/** Whether an IPv4 address is outside the public unicast space. */
function isNonPublicV4([a, b, c]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! < 128) || // shared address space (CGNAT)
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b! >= 16 && b! < 32) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) || // IETF protocol assignments, TEST-NET-1
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && c === 100) || // TEST-NET-2
    (a === 203 && b === 0 && c === 113) || // TEST-NET-3
    a! >= 224 // multicast, reserved, broadcast
  );
}

/**
 * The eight 16-bit groups of an IPv6 literal (without brackets) as the URL parser writes it (hex groups,
 * `::` at most once, no dotted tail); null for anything else, which callers treat as not public.
 */
function ipv6Groups(text: string): number[] | null {
  if (!/^[0-9a-f:]+$/i.test(text)) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").map((g) => (g.length <= 4 ? parseInt(g, 16) : NaN));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null;
  const groups = [...head, ...Array<number>(fill).fill(0), ...rest];
  return groups.every((g) => Number.isInteger(g)) ? groups : null;
}

/** The IPv4 address in two 16-bit groups. */
const v4 = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255];

/**
 * The IPv4 address an IPv6 address stands for: IPv4-mapped `::ffff:0:0/96`
 * (RFC 4291 §2.5.5.2), IPv4-translated `::ffff:0:0:0/96` (RFC 2765 §2.1),
 * NAT64's well-known prefix `64:ff9b::/96` (RFC 6052 §2.1); null for any
 * other address.
 */
function standsForV4(g: number[]): number[] | null {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const mapped = zeros(0, 5) && g[5] === 0xffff;
  const translated = zeros(0, 4) && g[4] === 0xffff && g[5] === 0;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6);
  return mapped || translated || nat64 ? v4(g[6]!, g[7]!) : null;
}

/**
 * The IPv4 addresses a global unicast address carries, whose networks its
 * packets are tunnelled to: 6to4 `2002::/16` (RFC 3056 §2), Teredo
 * `2001::/32` (RFC 4380 §4: the server's address, and the client's with every
 * bit inverted) and an ISATAP interface identifier, `…:0:5efe:a.b.c.d` or
 * `…:200:5efe:a.b.c.d` with the u and g bits either way (RFC 5214 §6.1).
 */
function tunnelledV4(g: number[]): number[][] {
  const found: number[][] = [];
  if (g[0] === 0x2002) found.push(v4(g[1]!, g[2]!));
  if (g[0] === 0x2001 && g[1] === 0) found.push(v4(g[2]!, g[3]!), v4(g[6]! ^ 0xffff, g[7]! ^ 0xffff));
  if ((g[4]! & 0xfcff) === 0 && g[5] === 0x5efe) found.push(v4(g[6]!, g[7]!));
  return found;
}

/**
 * Whether an IPv6 address is outside the public unicast space. An address
 * that stands for an IPv4 address is as public as that one. Any other outside
 * global unicast `2000::/3` (RFC 4291 §2.4) is not: loopback, unspecified,
 * IPv4-compatible (deprecated), unique local, link-local, multicast,
 * discard-only, NAT64's local-use `64:ff9b:1::/48` (RFC 8215)... Inside it,
 * the documentation ranges (`2001:db8::/32`, `3fff::/20`) are not, nor an
 * address that tunnels to a non-public IPv4 address.
 */
function isNonPublicV6(g: number[]): boolean {
  const standIn = standsForV4(g);
  if (standIn) return isNonPublicV4(standIn);
  const first = g[0]!;
  if ((first & 0xe000) !== 0x2000) return true;
  if ((first === 0x2001 && g[1] === 0x0db8) || (first & 0xfff0) === 0x3ff0) return true;
  return tunnelledV4(g).some(isNonPublicV4);
}

/** Whether an address (IPv4 dotted, or IPv6 with or without brackets) is not a public unicast one. */
export function isNonPublicAddress(address: string): boolean {
  const v4 = ipv4(address);
  if (v4) return isNonPublicV4(v4);
  const groups = ipv6Groups(address.replace(/^\[|\]$/g, ""));
  return groups === null || isNonPublicV6(groups);
}

/** Whether the URL's host is an IP literal (the parser writes IPv6 in brackets, IPv4 dotted). */
function isAddressLiteral(host: string): boolean {
  return host.startsWith("[") || ipv4(host) !== null;
}

/** Whether `origin` (an API origin) is on this machine: local development, never a deployed Worker. */
export function isLoopbackOrigin(origin: string): boolean {
  return URL.canParse(origin) && LOOPBACK_NAMES.has(new URL(origin).hostname);
}

/**
 * Why `url` may not be a webhook's target, or null if it may. `allowLoopback`:
 * WEBHOOKS_ALLOW_LOOPBACK is on and the API runs on a loopback origin.
 */
export function targetProblem(url: string, allowLoopback: boolean): string | null {
  if (!URL.canParse(url)) return "must be an absolute URL";
  const parsed = new URL(url);
  if (parsed.username || parsed.password) return "must not carry a user name or password";
  const host = parsed.hostname;
  if (allowLoopback && LOOPBACK_NAMES.has(host) && (parsed.protocol === "http:" || parsed.protocol === "https:")) {
    return null;
  }
  if (parsed.protocol !== "https:") return "must be an https URL";
  if (isAddressLiteral(host)) {
    return isNonPublicAddress(host) ? "must not name a private, loopback or link-local address" : null;
  }
  return isPrivateName(host) ? "must name a public host, not a local or private name" : null;
}

type DohAnswer = { Answer?: { type: number; data: string }[]; Status: number };

/**
 * Resolves a host name over DNS over HTTPS (Cloudflare's resolver) and says
 * why it may not be delivered to: an A or AAAA record of a non-public
 * address, or no answer at all. A name that changes between this lookup and
 * the delivery's own (DNS rebinding) is not caught here; Cloudflare's edge,
 * which makes a deployed Worker's requests, does not reach private networks.
 */
export async function resolvedTargetProblem(host: string): Promise<string | null> {
  if (isAddressLiteral(host) || LOOPBACK_NAMES.has(host)) return null;
  const addresses: string[] = [];
  for (const type of ["A", "AAAA"]) {
    const url = `https://cloudflare-dns.com/dns-query?name=${encodeURIComponent(host)}&type=${type}`;
    const response = await fetch(url, {
      headers: { Accept: "application/dns-json" },
      signal: AbortSignal.timeout(5_000),
    });
    if (!response.ok) return `could not resolve ${host} (DNS over HTTPS answered ${response.status})`;
    const answer = await response.json<DohAnswer>();
    for (const record of answer.Answer ?? []) if (record.type === 1 || record.type === 28) addresses.push(record.data);
  }
  if (addresses.length === 0) return `${host} has no address`;
  const bad = addresses.find(isNonPublicAddress);
  return bad ? `${host} resolves to ${bad}, a private, loopback or link-local address` : null;
}
