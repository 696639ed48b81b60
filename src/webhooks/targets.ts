/**
 * Where a webhook may deliver (SSRF): `https` only, never an address of a
 * private, loopback, link-local or otherwise non-public range, written as an
 * IP literal in any of its forms (the URL parser turns `2130706433`,
 * `0x7f.1` and `[::ffff:127.0.0.1]` into canonical literals first) or behind
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

/** Whether an IPv6 address is outside the public unicast space, embedded IPv4 addresses checked as IPv4. */
function isNonPublicV6(g: number[]): boolean {
  const v4 = (hi: number, lo: number) => [hi >> 8, hi & 255, lo >> 8, lo & 255];
  const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeros(8)) return true; // unspecified
  if (zeros(7) && g[7] === 1) return true; // loopback
  if (zeros(5) && g[5] === 0xffff) return isNonPublicV4(v4(g[6]!, g[7]!)); // IPv4-mapped
  if (zeros(6)) return true; // IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b) return isNonPublicV4(v4(g[6]!, g[7]!)); // NAT64
  if (g[0] === 0x2002) return isNonPublicV4(v4(g[1]!, g[2]!)); // 6to4
  const first = g[0]!;
  return (
    (first & 0xfe00) === 0xfc00 || // unique local
    (first & 0xffc0) === 0xfe80 || // link-local
    (first & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (first & 0xff00) === 0xff00 || // multicast
    (first === 0x2001 && g[1] === 0x0db8) || // documentation
    first === 0x0100 // discard-only
  );
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
