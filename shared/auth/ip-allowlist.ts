// Source-IP allowlists of API keys: entries are CIDR ranges or single addresses, IPv4 or IPv6.
// An IPv4 client matches IPv4 ranges and IPv4-mapped IPv6 ranges (`::ffff:10.0.0.0/104`).
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

function parseEntry(entry: string): Range | null {
  const text = entry.trim();
  try {
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const addr = ipaddr.parse(text);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

/** True when `ip` lies in one of the entries. Unparseable entries never match. */
export function ipAllowed(ip: string, entries: readonly string[]): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const addr = ipaddr.process(ip);
  for (const entry of entries) {
    const range = parseEntry(entry);
    if (!range) continue;
    const [network] = range;
    if (addr.kind() === network.kind()) {
      if (addr.match(range)) return true;
    } else if (addr.kind() === 'ipv4' && network.kind() === 'ipv6') {
      if ((addr as ipaddr.IPv4).toIPv4MappedAddress().match(range)) return true;
    }
  }
  return false;
}

/** True when every entry parses; for validating allowlists at key creation. */
export function isValidAllowlistEntry(entry: string): boolean {
  return parseEntry(entry) !== null;
}
