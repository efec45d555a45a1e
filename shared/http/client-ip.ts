// The source address of a request, normalised (IPv4-mapped IPv6 becomes IPv4).
//
// Without trustProxy the socket peer is the client. With trustProxy the service sits behind
// exactly one reverse proxy that appends the address it saw to X-Forwarded-For, so the
// RIGHTMOST entry is the one we can trust: entries to its left were written by the client and
// are not evidence of anything.
import ipaddr from 'ipaddr.js';
import type { HttpContext } from './http-state.js';

export function normaliseIp(text: string): string | null {
  const trimmed = text.trim().replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(trimmed)) return null;
  return ipaddr.process(trimmed).toString();
}

export function clientIp(ctx: Pick<HttpContext, 'get' | 'req'>, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = ctx.get('x-forwarded-for');
    const last = forwarded.split(',').at(-1);
    const ip = last ? normaliseIp(last) : null;
    if (ip) return ip;
  }
  const peer = ctx.req.socket.remoteAddress;
  return (peer && normaliseIp(peer)) || 'unknown';
}

/**
 * The source a rate limit counts: the address for IPv4, its /64 for IPv6. One subscriber is
 * given a whole /64 (RFC 6177), so counting IPv6 per address would hand an attacker 2^64 buckets.
 */
export function rateLimitSource(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() !== 'ipv6') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
