// Server-side request forgery guard of the webhook URLs: a host that is, or resolves to, a
// loopback, private, link-local, multicast or otherwise non-public address is refused at creation and at each delivery.
// At delivery the check runs inside the connection's own DNS lookup, so the address checked is the address connected
// to (a DNS answer that changes between a check and the connection cannot slip through).
import dns from 'node:dns';
import net from 'node:net';

const BLOCKED = new net.BlockList();
for (const [a, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(a, bits, 'ipv4');
}
for (const [a, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 of any IPv4, private ones included
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10],
  ['ff00::', 8], // multicast
] as const) {
  BLOCKED.addSubnet(a, bits, 'ipv6');
}

/** Whether an IP address may not receive webhooks (IPv4-mapped IPv6 addresses are checked as IPv4). */
export function isForbiddenAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 0) return true;
  return BLOCKED.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's host without IPv6 brackets, lower case. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

export class ForbiddenAddressError extends Error {
  readonly code = 'EFORBIDDENADDRESS';
}

/**
 * Why a webhook host is refused (undefined: accepted). A literal address is checked as such; `localhost` and
 * `*.localhost` always resolve to loopback; a name is resolved and refused if ANY of its addresses is forbidden. A
 * name that does not resolve is accepted (DNS may be down at creation; its deliveries fail and retry).
 */
export async function hostProblem(host: string, allowed: readonly string[], lookup = dns.promises.lookup): Promise<string | undefined> {
  if (allowed.includes(host)) return undefined;
  if (net.isIP(host)) return isForbiddenAddress(host) ? `${host} is a loopback, private, link-local or multicast address` : undefined;
  if (host === 'localhost' || host.endsWith('.localhost')) return `${host} is a loopback name`;
  let addresses: dns.LookupAddress[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    return undefined;
  }
  const bad = addresses.find((a) => isForbiddenAddress(a.address));
  return bad ? `${host} resolves to ${bad.address}, a loopback, private, link-local or multicast address` : undefined;
}

/**
 * A `lookup` for https.request that resolves as usual and fails the connection (before any byte is sent) when an
 * address is forbidden, unless the host is allow-listed.
 */
export function guardedLookup(allowed: readonly string[]): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (err, addresses) => {
      if (err) return (callback as (e: Error) => void)(err);
      const list = addresses as dns.LookupAddress[];
      if (!allowed.includes(hostname.toLowerCase())) {
        const bad = list.find((a) => isForbiddenAddress(a.address));
        if (bad) return (callback as (e: Error) => void)(new ForbiddenAddressError(`${hostname} resolves to ${bad.address}, a forbidden address`));
      }
      if ((options as dns.LookupOptions).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      return callback(null, list[0].address, list[0].family);
    });
  };
}
