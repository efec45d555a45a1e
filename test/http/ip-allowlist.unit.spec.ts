import { expect } from 'chai';
import { ipAllowed } from '../../shared/auth/ip-allowlist.js';
import { clientIp, normaliseIp } from '../../shared/http/client-ip.js';

describe('API key IP allowlist', () => {
  it('matches IPv4 CIDR ranges and single addresses', () => {
    expect(ipAllowed('10.1.2.3', ['10.0.0.0/8'])).to.equal(true);
    expect(ipAllowed('11.1.2.3', ['10.0.0.0/8'])).to.equal(false);
    expect(ipAllowed('192.0.2.7', ['192.0.2.7'])).to.equal(true);
    expect(ipAllowed('192.0.2.8', ['192.0.2.7/32'])).to.equal(false);
  });

  it('treats an IPv4-mapped IPv6 client as IPv4, and matches IPv4 clients against mapped ranges', () => {
    expect(ipAllowed('::ffff:10.1.2.3', ['10.0.0.0/8'])).to.equal(true);
    expect(ipAllowed('10.1.2.3', ['::ffff:10.0.0.0/104'])).to.equal(true);
    expect(ipAllowed('11.1.2.3', ['::ffff:10.0.0.0/104'])).to.equal(false);
  });

  it('matches IPv6 ranges', () => {
    expect(ipAllowed('2001:db8::1', ['2001:db8::/32'])).to.equal(true);
    expect(ipAllowed('2001:db9::1', ['2001:db8::/32'])).to.equal(false);
    expect(ipAllowed('2001:db8::1', ['10.0.0.0/8'])).to.equal(false);
  });

  it('never matches an unparseable entry or client address', () => {
    expect(ipAllowed('10.1.2.3', ['not-an-ip', '10.0.0.0/99'])).to.equal(false);
    expect(ipAllowed('unknown', ['0.0.0.0/0'])).to.equal(false);
  });
});

describe('client address', () => {
  const ctx = (remoteAddress: string, forwarded = '') => ({
    get: (name: string) => (name.toLowerCase() === 'x-forwarded-for' ? forwarded : ''),
    req: { socket: { remoteAddress } },
  }) as unknown as Parameters<typeof clientIp>[0];

  it('is the socket peer, normalised from IPv4-mapped IPv6', () => {
    expect(clientIp(ctx('::ffff:127.0.0.1'), false)).to.equal('127.0.0.1');
    expect(normaliseIp('[::1]')).to.equal('::1');
  });

  it('ignores X-Forwarded-For unless the proxy is trusted', () => {
    expect(clientIp(ctx('127.0.0.1', '10.9.9.9'), false)).to.equal('127.0.0.1');
  });

  it('behind a trusted proxy takes the rightmost X-Forwarded-For entry (the one the proxy wrote)', () => {
    expect(clientIp(ctx('127.0.0.1', '6.6.6.6, 10.9.9.9'), true)).to.equal('10.9.9.9');
    expect(clientIp(ctx('127.0.0.1', 'garbage'), true)).to.equal('127.0.0.1');
  });
});
