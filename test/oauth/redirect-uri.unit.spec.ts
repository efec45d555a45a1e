import { expect } from 'chai';
import { isLoopbackRedirectUri, matchRedirectUri, redirectUriProblem, withQueryParameters } from '../../shared/oauth/redirect-uri.js';

describe('redirect URIs', () => {
  describe('registration', () => {
    const good = [
      'https://app.example.com/callback',
      'https://app.example.com:8443/cb?tenant=7&x=%20y',
      'https://app.example.com',
      'https://[2001:db8::1]/cb',
      'http://127.0.0.1/cb',
      'http://127.0.0.1:49152/cb',
      'http://[::1]/cb',
      'http://[::1]:8080',
      'com.example.app:/oauth2redirect/example-provider',
      'com.example.app://callback',
    ];
    for (const uri of good) {
      it(`accepts ${uri}`, () => {
        expect(redirectUriProblem(uri)).to.equal(null);
      });
    }

    const bad: Array<[string, string, RegExp]> = [
      ['empty', '', /empty/],
      ['a fragment', 'https://app.example.com/cb#frag', /fragment/],
      ['an empty fragment', 'https://app.example.com/cb#', /fragment/],
      ['relative', '/callback', /absolute|https/],
      ['no scheme separator slashes', 'https:app.example.com/cb', /https/],
      ['userinfo', 'https://user:pw@app.example.com/cb', /host/],
      ['plain http to a host', 'http://app.example.com/cb', /https/],
      ['http localhost (RFC 8252 §8.3)', 'http://localhost:8080/cb', /https/],
      ['http to another loopback-looking host', 'http://127.0.0.2/cb', /https/],
      ['http loopback with port 0', 'http://127.0.0.1:0/cb', /port/],
      ['http loopback with port 65536', 'http://127.0.0.1:65536/cb', /port|absolute/],
      ['javascript:', 'javascript:alert(1)', /scheme/],
      ['data:', 'data:text/html,hi', /scheme/],
      ['file:', 'file:///etc/passwd', /scheme/],
      ['a single-word private scheme', 'myapp:/cb', /scheme/],
      ['a space', 'https://app.example.com/a b', /characters/],
      ['a backslash', 'https://app.example.com\\@evil.example/', /characters/],
      ['a bad percent-encoding', 'https://app.example.com/%zz', /characters/],
      ['a non-ASCII character', 'https://app.example.com/é', /characters/],
      ['a control character', 'https://app.example.com/\u0000', /characters/],
      ['an upper-case scheme', 'HTTPS://app.example.com/cb', /scheme|https/],
      ['over 2000 characters', `https://app.example.com/${'a'.repeat(2000)}`, /2000/],
    ];
    for (const [what, uri, message] of bad) {
      it(`refuses ${what}`, () => {
        expect(redirectUriProblem(uri)).to.match(message);
      });
    }
  });

  describe('matching (byte for byte)', () => {
    const registered = ['https://app.example.com/callback', 'https://app.example.com/cb?tenant=7', 'com.example.app:/oauth2redirect'];

    it('matches an identical URI', () => {
      for (const uri of registered) expect(matchRedirectUri(registered, uri)).to.equal(uri);
    });

    const near: Array<[string, string]> = [
      ['a trailing slash', 'https://app.example.com/callback/'],
      ['different case in the host', 'https://App.example.com/callback'],
      ['different case in the path', 'https://app.example.com/Callback'],
      ['an added query', 'https://app.example.com/callback?x=1'],
      ['a changed query', 'https://app.example.com/cb?tenant=8'],
      ['a fragment', 'https://app.example.com/callback#x'],
      ['an explicit default port', 'https://app.example.com:443/callback'],
      ['a percent-encoded letter', 'https://app.example.com/c%61llback'],
      ['a prefix', 'https://app.example.com/call'],
      ['an extension', 'https://app.example.com/callback/../evil'],
      ['another host sharing a prefix', 'https://app.example.com.evil.example/callback'],
      ['http instead of https', 'http://app.example.com/callback'],
      ['any port on a non-loopback URI', 'https://app.example.com:8443/callback'],
      ['empty', ''],
    ];
    for (const [what, uri] of near) {
      it(`does not match ${what}`, () => {
        expect(matchRedirectUri(registered, uri)).to.equal(null);
      });
    }

    describe('RFC 8252 §7.3 loopback: any port', () => {
      const loopback = ['http://127.0.0.1/native/cb', 'http://[::1]:8080/cb?x=1'];

      it('matches the registered URI with any port, or none', () => {
        expect(matchRedirectUri(loopback, 'http://127.0.0.1:51004/native/cb')).to.equal('http://127.0.0.1/native/cb');
        expect(matchRedirectUri(loopback, 'http://127.0.0.1:1/native/cb')).to.equal('http://127.0.0.1/native/cb');
        expect(matchRedirectUri(loopback, 'http://[::1]/cb?x=1')).to.equal('http://[::1]:8080/cb?x=1');
        expect(matchRedirectUri(loopback, 'http://[::1]:65535/cb?x=1')).to.equal('http://[::1]:8080/cb?x=1');
      });

      const misses: Array<[string, string]> = [
        ['another path', 'http://127.0.0.1:51004/native/cb2'],
        ['another query', 'http://[::1]:9000/cb?x=2'],
        ['the other loopback family', 'http://[::1]:51004/native/cb'],
        ['localhost', 'http://localhost:51004/native/cb'],
        ['https', 'https://127.0.0.1:51004/native/cb'],
        ['port 0', 'http://127.0.0.1:0/native/cb'],
        ['port 65536', 'http://127.0.0.1:65536/native/cb'],
        ['an empty port', 'http://127.0.0.1:/native/cb'],
        ['a userinfo trick', 'http://127.0.0.1:80@evil.example/native/cb'],
        ['a fragment', 'http://127.0.0.1:5000/native/cb#x'],
      ];
      for (const [what, uri] of misses) {
        it(`does not match ${what}`, () => {
          expect(matchRedirectUri(loopback, uri)).to.equal(null);
        });
      }

      it('does not give non-loopback registrations any port', () => {
        expect(matchRedirectUri(['https://127.0.0.1/cb'], 'https://127.0.0.1:444/cb')).to.equal(null);
      });

      it('recognises loopback URIs', () => {
        expect(isLoopbackRedirectUri('http://127.0.0.1:8/cb')).to.equal(true);
        expect(isLoopbackRedirectUri('https://127.0.0.1/cb')).to.equal(false);
      });
    });
  });

  describe('withQueryParameters', () => {
    it('starts a query, or extends the registered one without touching its bytes', () => {
      expect(withQueryParameters('https://a.example/cb', { code: 'abc', state: 'x y' })).to.equal('https://a.example/cb?code=abc&state=x%20y');
      expect(withQueryParameters('https://a.example/cb?t=%7e+1', { code: 'abc' })).to.equal('https://a.example/cb?t=%7e+1&code=abc');
      expect(withQueryParameters('https://a.example/cb?', { code: 'abc' })).to.equal('https://a.example/cb?code=abc');
      expect(withQueryParameters('com.example.app:/cb', { code: 'abc' })).to.equal('com.example.app:/cb?code=abc');
    });

    it('leaves out null and undefined values and encodes reserved characters', () => {
      expect(withQueryParameters('https://a.example/cb', { code: 'a&b=c', state: null, iss: undefined })).to.equal('https://a.example/cb?code=a%26b%3Dc');
      expect(withQueryParameters('https://a.example/cb', {})).to.equal('https://a.example/cb');
    });
  });
});
