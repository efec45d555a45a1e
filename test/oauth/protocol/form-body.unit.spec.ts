// The protocol endpoints' form parameters: flat name=value pairs, repeats kept so they can be
// refused, empty values treated as absent (RFC 6749 §3.2).
import { expect } from 'chai';
import { optionalParameter, requiredParameter } from '../../../command-service/oauth/form-body.js';
import { parseFormFields } from '../../../shared/http/form-body.js';
import { InvalidRequest } from '../../../shared/oauth/oauth-errors.js';

describe('form body parameters', () => {
  it('decodes percent-escapes and + as space, and keeps bracketed names flat', () => {
    const form = parseFormFields('redirect_uri=https%3A%2F%2Fa.example%2Fcb%3Fx%3D1&scope=openid+email&a[b]=c');
    expect(form.redirect_uri).to.equal('https://a.example/cb?x=1');
    expect(form.scope).to.equal('openid email');
    expect(form['a[b]']).to.equal('c');
  });

  it('keeps every value of a repeated name, and reading it is invalid_request', () => {
    const form = parseFormFields('code=a&code=b&code=c');
    expect(form.code).to.deep.equal(['a', 'b', 'c']);
    expect(() => optionalParameter(form, 'code')).to.throw(InvalidRequest, /repeated/);
  });

  it('treats names like __proto__ as plain fields', () => {
    const form = parseFormFields('__proto__=x&constructor=y');
    expect(optionalParameter(form, '__proto__')).to.equal('x');
    expect(optionalParameter(form, 'constructor')).to.equal('y');
    expect(optionalParameter(form, 'toString')).to.equal(undefined);
  });

  it('reads an empty value as absent; a required one is then invalid_request', () => {
    const form = parseFormFields('scope=&code=abc');
    expect(optionalParameter(form, 'scope')).to.equal(undefined);
    expect(requiredParameter(form, 'code')).to.equal('abc');
    expect(() => requiredParameter(form, 'scope')).to.throw(InvalidRequest, /missing/);
    expect(() => requiredParameter(form, 'redirect_uri')).to.throw(InvalidRequest, /missing/);
  });
});
