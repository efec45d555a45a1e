import { expect } from 'chai';
import { rateLimitSource } from '../../shared/http/client-ip.js';

describe('rate limit source', () => {
  it('counts an IPv4 address on its own', () => {
    expect(rateLimitSource('203.0.113.7')).to.equal('203.0.113.7');
    expect(rateLimitSource('203.0.113.8')).not.to.equal(rateLimitSource('203.0.113.7'));
  });

  it('counts every address of one IPv6 /64 as one source, and other /64s apart', () => {
    const a = rateLimitSource('2001:db8:1:2::1');
    expect(a).to.equal('2001:db8:1:2::/64');
    expect(rateLimitSource('2001:db8:1:2:ffff:ffff:ffff:fffe')).to.equal(a);
    expect(rateLimitSource('2001:0DB8:0001:0002:0:0:0:9')).to.equal(a);
    expect(rateLimitSource('2001:db8:1:3::1')).not.to.equal(a);
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(rateLimitSource('::ffff:203.0.113.7')).to.equal('203.0.113.7');
  });
});
