// The headless browser other suites drive the sign-in with: its cookie jar must follow Set-Cookie
// as a browser does, or every test built on it would be testing the helper.
import { expect } from 'chai';
import { CookieJar, csrfTokenOf, inputValue, parseSetCookie } from './support/browser.js';

function headers(...setCookies: string[]): Headers {
  const h = new Headers();
  for (const c of setCookies) h.append('Set-Cookie', c);
  return h;
}

describe('test support: headless browser', () => {
  it('parses a Set-Cookie header: name, value, flags and attributes', () => {
    expect(parseSetCookie('__Host-gp_session=abc.def; Path=/; Max-Age=60; HttpOnly; Secure; SameSite=Lax')).to.deep.equal({
      name: '__Host-gp_session',
      value: 'abc.def',
      attributes: { path: '/', 'max-age': '60', httponly: true, secure: true, samesite: 'Lax' },
    });
  });

  it('stores cookies in order, deletes on Max-Age=0 or an empty value, and sends them back', () => {
    const jar = new CookieJar();
    jar.store(headers('a=1; Path=/', 'b=2; Path=/'));
    expect(jar.header()).to.equal('a=1; b=2');
    jar.store(headers('a=3; Path=/', 'b=; Max-Age=0'));
    expect(jar.header()).to.equal('a=3');
    jar.store(headers('a=4; Max-Age=0'));
    expect(jar.header()).to.equal(null);
  });

  it('finds a cookie with or without its __Host- prefix', () => {
    const jar = new CookieJar();
    jar.store(headers('__Host-gp_csrf=x; Path=/; Secure'));
    expect(jar.get('gp_csrf')).to.equal('x');
    jar.delete('gp_csrf');
    expect(jar.get('gp_csrf')).to.equal(undefined);
  });

  it('reads form fields and the CSRF token of a page, unescaping entities', () => {
    const page = '<meta name="csrf-token" content="m&amp;1"><form><input type="hidden" name="csrf" value="f&quot;2"><input id="e" name="email" value="a&lt;b"></form>';
    expect(csrfTokenOf(page)).to.equal('f"2');
    expect(csrfTokenOf('<meta name="csrf-token" content="m&amp;1">')).to.equal('m&1');
    expect(inputValue(page, 'email')).to.equal('a<b');
    expect(inputValue(page, 'missing')).to.equal(null);
    expect(() => csrfTokenOf('<p>no token</p>')).to.throw(/no CSRF token/);
  });
});
