// Where a webhook may go (docs/operating/security.md, "Webhook destinations"). The service POSTs
// to a URL an issuer chose, from inside our network: without these rules an endpoint naming 127.0.0.1:5432 or the cloud
// metadata address turns the attempt records into a port scanner. Pure functions: the parsed
// URL's port and host are judged here, and so is every address a host name resolves to
// (core/webhooks/destination-guard.ts resolves, and the sender connects only to what passed).
//
// Every spelling of an address reaches these checks in one form: WHATWG URL parsing turns
// 127.1, 2130706433, 0x7f000001, 0177.0.0.1 and full-width digits into 127.0.0.1, and
// [::ffff:127.0.0.1] into [::ffff:7f00:1]; the resolver answers canonical text. IPv6 forms that
// carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by the address they carry.
import { isIPv4, isIPv6 } from 'node:net';

/**
 * Ports the fetch standard refuses ("bad ports": services where a stray HTTP request does harm,
 * e.g. SMTP 25, X11 6000, ManageSieve 4190). The sender no longer uses fetch, so the list is
 * enforced here, on saving and before every attempt; any other port is allowed, since
 * receivers commonly listen on 8080, 8443 and the like. (Port 0, which nothing can listen on,
 * is refused apart.)
 */
export const FETCH_BAD_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'unique_local'
  | 'link_local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

/**
 * What WEBHOOK_ALLOW_PRIVATE_DESTINATIONS opens, for receivers on a developer's machine or
 * network. Link-local stays closed even then: 169.254.169.254 is the cloud metadata service,
 * and nothing that receives webhooks lives there; nor can anything receive on the unspecified,
 * multicast, broadcast or reserved addresses.
 */
const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set(['loopback', 'private', 'shared', 'unique_local']);

const DESCRIPTIONS: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  shared: 'a carrier-grade NAT address (100.64.0.0/10)',
  unique_local: 'a unique-local address (fc00::/7)',
  link_local: 'a link-local address (169.254.0.0/16, fe80::/10: cloud metadata lives there)',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
};

/** The class of an IP address (IPv4 dotted, IPv6 with or without brackets); null when `text` is not one. */
export function classifyAddress(text: string): AddressClass | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv4(bare)) return classifyIPv4(ipv4Bytes(bare));
  const bytes = ipv6Bytes(bare);
  return bytes && classifyIPv6(bytes);
}

/** Why a webhook may not be sent to this address, or null when it may. */
export function addressRefusal(address: string, allowPrivate: boolean): string | null {
  const cls = classifyAddress(address);
  if (cls === null) return `${address} is not an IP address`;
  return refusalOf(cls, allowPrivate);
}

/**
 * Why a webhook may not be sent to this URL's port and host as written (before resolving), or
 * null. IP literals are judged here; names reserved for local use are refused by name, so they
 * are refused even where they do not resolve (the check runs again after resolving).
 */
export function urlDestinationRefusal(url: URL, allowPrivate: boolean): string | null {
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (port === 0) return 'port 0 cannot be connected to';
  if (FETCH_BAD_PORTS.has(port)) return `port ${port} is one that HTTP clients refuse (the fetch standard's bad ports)`;
  const host = url.hostname;
  const cls = classifyAddress(host);
  if (cls !== null) {
    const refusal = refusalOf(cls, allowPrivate);
    return refusal && `${host} is ${refusal}`;
  }
  const name = localName(host);
  if (name && !allowPrivate) return `${host} is ${name}`;
  return null;
}

function refusalOf(cls: AddressClass, allowPrivate: boolean): string | null {
  if (cls === 'public' || (allowPrivate && PRIVATE_CLASSES.has(cls))) return null;
  return DESCRIPTIONS[cls];
}

/**
 * Names that resolve only inside a network: reserved (RFC 6762 .local, RFC 8375 home.arpa,
 * ICANN's .internal) or customary and never delegated (.lan, .home, .corp, .localdomain).
 */
const LOCAL_SUFFIXES = ['local', 'internal', 'home.arpa', 'localdomain', 'lan', 'home', 'corp', 'intranet'];

function localName(hostname: string): string | null {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'a loopback name';
  if (!name.includes('.')) return 'a single-label name, resolved inside the local network';
  if (LOCAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`)))
    return 'a name reserved for local networks';
  return null;
}

function classifyIPv4([a, b, c, d]: number[]): AddressClass {
  if (a === 0) return 'unspecified'; // 0.0.0.0/8 "this network": Linux connects 0.0.0.0 to the local host
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'shared';
  if (a === 169 && b === 254) return 'link_local';
  if (a === 192 && b === 0 && c === 0) return 'reserved'; // IETF protocol assignments
  if (a === 198 && (b === 18 || b === 19)) return 'reserved'; // benchmarking, often used inside networks
  if (a >= 224 && a <= 239) return 'multicast';
  if (a === 255 && b === 255 && c === 255 && d === 255) return 'broadcast';
  if (a >= 240) return 'reserved';
  return 'public';
}

function classifyIPv6(bytes: Uint8Array): AddressClass {
  const zeroUpTo = (n: number) => bytes.subarray(0, n).every((x) => x === 0);
  const embedded = (from: number) => classifyIPv4([...bytes.subarray(from, from + 4)]);
  const word = (i: number) => (bytes[2 * i] << 8) | bytes[2 * i + 1];
  if (zeroUpTo(16)) return 'unspecified';
  if (zeroUpTo(15) && bytes[15] === 1) return 'loopback';
  if (zeroUpTo(10) && word(5) === 0xffff) return embedded(12); // IPv4-mapped ::ffff:a.b.c.d
  if (zeroUpTo(12)) {
    // IPv4-compatible ::a.b.c.d, deprecated (RFC 4291): nothing legitimate uses it.
    const cls = embedded(12);
    return cls === 'public' ? 'reserved' : cls;
  }
  if (word(0) === 0x64 && word(1) === 0xff9b && word(2) === 0 && word(3) === 0 && word(4) === 0 && word(5) === 0)
    return embedded(12); // NAT64 64:ff9b::/96
  if (word(0) === 0x64 && word(1) === 0xff9b && word(2) === 1) return 'reserved'; // local-use NAT64 64:ff9b:1::/48
  if (word(0) === 0x2002) return embedded(2); // 6to4 2002:a.b.c.d::/48
  if (word(0) === 0x2001 && word(1) === 0) return 'reserved'; // Teredo: the IPv4 address is hidden
  if (word(0) === 0x2001 && word(1) === 0x0db8) return 'reserved'; // documentation
  if (word(0) === 0x0100 && word(1) === 0 && word(2) === 0 && word(3) === 0) return 'reserved'; // discard-only 100::/64
  if ((bytes[0] & 0xfe) === 0xfc) return 'unique_local';
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0x80) return 'link_local';
  if (bytes[0] === 0xfe && (bytes[1] & 0xc0) === 0xc0) return 'reserved'; // site-local fec0::/10, deprecated
  if (bytes[0] === 0xff) return 'multicast';
  return 'public';
}

function ipv4Bytes(text: string): number[] {
  return text.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address (a zone id is ignored); null when `text` is not one. */
export function ipv6Bytes(text: string): Uint8Array | null {
  const address = text.split('%')[0];
  if (!isIPv6(address)) return null;
  // A dotted IPv4 tail (::ffff:127.0.0.1) becomes two 16-bit groups.
  const lastColon = address.lastIndexOf(':');
  const tail = address.slice(lastColon + 1);
  let groupsText = address;
  if (tail.includes('.')) {
    const [a, b, c, d] = ipv4Bytes(tail);
    groupsText = `${address.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = groupsText.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = 8 - headGroups.length - restGroups.length;
  const groups = [...headGroups, ...Array<string>(rest === undefined ? 0 : missing).fill('0'), ...restGroups];
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    const value = parseInt(group, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}
