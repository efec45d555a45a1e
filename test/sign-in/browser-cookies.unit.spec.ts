import { expect } from 'chai';
import { SIGN_IN_COOKIES, clearCookieHeader, cookieName, setCookieHeader } from '../../shared/sign-in/browser-cookies.js';
import { parseSetCookie } from './support/browser.js';

describe('sign-in cookie headers', () => {
  it('sets the session cookie HttpOnly, Secure, SameSite=Lax, path / with its lifetime', () => {
    const header = setCookieHeader(SIGN_IN_COOKIES.session, 'abc_DEF-123', false);
    const cookie = parseSetCookie(header);
    expect(cookie.name).to.equal('gp_session');
    expect(cookie.value).to.equal('abc_DEF-123');
    expect(cookie.attributes).to.deep.equal({ path: '/', 'max-age': String(12 * 60 * 60), httponly: true, secure: true, samesite: 'Lax' });
  });

  it('marks the second-factor and enrolment cookies SameSite=Strict and short-lived', () => {
    expect(parseSetCookie(setCookieHeader(SIGN_IN_COOKIES.secondFactor, 'v', false)).attributes).to.include({ samesite: 'Strict', 'max-age': '300' });
    expect(parseSetCookie(setCookieHeader(SIGN_IN_COOKIES.totpEnrolment, 'v', false)).attributes).to.include({ samesite: 'Strict', 'max-age': '600' });
    expect(parseSetCookie(setCookieHeader(SIGN_IN_COOKIES.flow, 'v', false)).attributes).to.include({ samesite: 'Lax', 'max-age': '900' });
  });

  it('takes the __Host- prefix on an https issuer (still Secure, path /, no Domain)', () => {
    expect(cookieName(SIGN_IN_COOKIES.session, true)).to.equal('__Host-gp_session');
    const cookie = parseSetCookie(setCookieHeader(SIGN_IN_COOKIES.session, 'v', true));
    expect(cookie.name).to.equal('__Host-gp_session');
    expect(cookie.attributes).to.include({ secure: true, path: '/' });
    expect(cookie.attributes).to.not.have.property('domain');
  });

  it('clears with an empty value, Max-Age=0 and an expiry in the past', () => {
    const cookie = parseSetCookie(clearCookieHeader(SIGN_IN_COOKIES.flow, false));
    expect(cookie.value).to.equal('');
    expect(cookie.attributes).to.include({ 'max-age': '0', expires: 'Thu, 01 Jan 1970 00:00:00 GMT', secure: true, httponly: true });
  });

  it('refuses a value that could inject attributes', () => {
    expect(() => setCookieHeader(SIGN_IN_COOKIES.session, 'a; Domain=evil.example', false)).to.throw(TypeError);
    expect(() => setCookieHeader(SIGN_IN_COOKIES.session, 'a\r\nSet-Cookie: x=y', false)).to.throw(TypeError);
  });
});
