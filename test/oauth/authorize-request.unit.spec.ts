import { expect } from 'chai';
import {
  authorizeErrorLocation,
  authorizeSuccessLocation,
  parsePrompt,
  validateAuthorizeRequest,
  type AuthorizeValidation,
  type QueryParameters,
} from '../../shared/oauth/authorize-request.js';
import { LoginRequired } from '../../shared/oauth/oauth-errors.js';
import { CHALLENGE, CONFIDENTIAL_CLIENT, ISSUER, PUBLIC_CLIENT, directory } from './oauth-fixtures.js';

const clients = directory(PUBLIC_CLIENT, CONFIDENTIAL_CLIENT);
const REDIRECT = PUBLIC_CLIENT.redirectUris[0]!;

const base: Record<string, string> = {
  response_type: 'code',
  client_id: PUBLIC_CLIENT.clientId,
  redirect_uri: REDIRECT,
  scope: 'openid profile',
  state: 'af0ifjsldkj',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  nonce: 'n-0S6_WzA2Mj',
};

function validate(overrides: Record<string, string | string[] | undefined>): Promise<AuthorizeValidation> {
  const params: Record<string, string | readonly string[] | undefined> = { ...base, ...overrides };
  for (const [k, v] of Object.entries(params)) if (v === undefined) delete params[k];
  return validateAuthorizeRequest(params as QueryParameters, clients, ISSUER);
}

async function expectRejected(overrides: Record<string, string | string[] | undefined>, code = 'invalid_request') {
  const result = await validate(overrides);
  expect(result.outcome, JSON.stringify(overrides)).to.equal('reject');
  if (result.outcome === 'reject') {
    expect(result.error.code).to.equal(code);
    expect(result.error.status).to.equal(400);
  }
}

async function expectRedirected(overrides: Record<string, string | string[] | undefined>, code: string, state: string | null = base.state!) {
  const result = await validate(overrides);
  expect(result.outcome, JSON.stringify(overrides)).to.equal('redirect');
  if (result.outcome !== 'redirect') return new URL('about:blank');
  expect(result.error.code).to.equal(code);
  const location = new URL(result.location);
  expect(result.location.startsWith(`${REDIRECT}?`)).to.equal(true);
  expect(location.searchParams.get('error')).to.equal(code);
  expect(location.searchParams.get('error_description')).to.be.a('string').and.not.equal('');
  expect(location.searchParams.get('state')).to.equal(state);
  expect(location.searchParams.get('iss')).to.equal(ISSUER);
  expect(location.searchParams.has('code')).to.equal(false);
  return location;
}

describe('authorize request validation', () => {
  it('accepts a complete request', async () => {
    const result = await validate({ prompt: 'login consent', max_age: '300', login_hint: 'ada@example.com' });
    expect(result.outcome).to.equal('valid');
    if (result.outcome !== 'valid') return;
    const { request } = result;
    expect(request.client).to.equal(PUBLIC_CLIENT);
    expect(request.redirectUri).to.equal(REDIRECT);
    expect(request.scopes).to.deep.equal(['openid', 'profile']);
    expect(request.state).to.equal('af0ifjsldkj');
    expect(request.codeChallenge).to.equal(CHALLENGE);
    expect(request.codeChallengeMethod).to.equal('S256');
    expect(request.nonce).to.equal('n-0S6_WzA2Mj');
    expect([...request.prompt]).to.deep.equal(['login', 'consent']);
    expect(request.maxAge).to.equal(300);
    expect(request.loginHint).to.equal('ada@example.com');
  });

  it('treats optional parameters sent without a value as omitted (RFC 6749 §3.1)', async () => {
    const result = await validate({ scope: '', state: '', nonce: '', prompt: '', max_age: '' });
    expect(result.outcome).to.equal('valid');
    if (result.outcome !== 'valid') return;
    expect(result.request.scopes).to.deep.equal(['openid', 'profile', 'email']);
    expect(result.request.state).to.equal(null);
    expect(result.request.nonce).to.equal(null);
    expect(result.request.prompt.size).to.equal(0);
    expect(result.request.maxAge).to.equal(null);
  });

  it('ignores unknown parameters', async () => {
    expect((await validate({ foo: 'bar', ui_locales: 'de' })).outcome).to.equal('valid');
  });

  it('accepts a loopback redirect with the port the native app chose', async () => {
    const result = await validate({ redirect_uri: 'http://127.0.0.1:53124/native/cb' });
    expect(result.outcome).to.equal('valid');
    if (result.outcome === 'valid') expect(result.request.redirectUri).to.equal('http://127.0.0.1:53124/native/cb');
  });

  describe('an invalid client_id / redirect_uri pair: 400, never a redirect', () => {
    it('missing client_id', () => expectRejected({ client_id: undefined }));
    it('empty client_id', () => expectRejected({ client_id: '' }));
    it('repeated client_id', () => expectRejected({ client_id: [PUBLIC_CLIENT.clientId, PUBLIC_CLIENT.clientId] }));
    it('malformed client_id', () => expectRejected({ client_id: 'svc_XYZ' }));
    it('an API key as client_id', () => expectRejected({ client_id: 'svc_sk_abcdef' }));
    it('unknown client_id', () => expectRejected({ client_id: `svc_${'c'.repeat(32)}` }));
    it('missing redirect_uri', () => expectRejected({ redirect_uri: undefined }));
    it('empty redirect_uri', () => expectRejected({ redirect_uri: '' }));
    it('repeated redirect_uri', () => expectRejected({ redirect_uri: [REDIRECT, 'https://evil.example/'] }));
    it('a redirect_uri of another client', () => expectRejected({ redirect_uri: CONFIDENTIAL_CLIENT.redirectUris[0] }));
    it('an unregistered redirect_uri', () => expectRejected({ redirect_uri: 'https://evil.example/callback' }));
    it('a redirect_uri with a trailing slash', () => expectRejected({ redirect_uri: `${REDIRECT}/` }));
    it('a redirect_uri with a fragment', () => expectRejected({ redirect_uri: `${REDIRECT}#x` }));
    it('a redirect_uri that is not a URI', () => expectRejected({ redirect_uri: 'not a uri' }));
    it('a loopback redirect_uri with another path', () => expectRejected({ redirect_uri: 'http://127.0.0.1:5000/other' }));

    it('even when other parameters are wrong too (the pair is checked first)', () =>
      expectRejected({ redirect_uri: 'https://evil.example/', response_type: 'token', code_challenge: undefined }));
  });

  describe('after the pair is trusted: redirect with error, error_description, state, iss', () => {
    it('repeated parameter', () => expectRedirected({ scope: ['openid', 'email'] }, 'invalid_request'));
    it('repeated state (reported without a state)', () => expectRedirected({ state: ['a', 'b'] }, 'invalid_request', null));
    it('state too long', () => expectRedirected({ state: 'x'.repeat(2049) }, 'invalid_request', 'x'.repeat(2049)));
    it('state with control characters', () => expectRedirected({ state: 'a\nb' }, 'invalid_request', 'a\nb'));
    it('request object', () => expectRedirected({ request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'));
    it('request_uri', () => expectRedirected({ request_uri: 'urn:ietf:params:oauth:request_uri:x' }, 'request_uri_not_supported'));
    it('missing response_type', () => expectRedirected({ response_type: undefined }, 'invalid_request'));
    it('response_type token (implicit)', () => expectRedirected({ response_type: 'token' }, 'unsupported_response_type'));
    it('response_type code id_token (hybrid)', () => expectRedirected({ response_type: 'code id_token' }, 'unsupported_response_type'));
    it('response_type CODE', () => expectRedirected({ response_type: 'CODE' }, 'unsupported_response_type'));
    it('response_mode form_post', () => expectRedirected({ response_mode: 'form_post' }, 'invalid_request'));
    it('response_mode fragment', () => expectRedirected({ response_mode: 'fragment' }, 'invalid_request'));
    it('unknown scope', () => expectRedirected({ scope: 'openid admin' }, 'invalid_scope'));
    it('scope the client may not have', () => expectRedirected({ scope: 'openid members:read' }, 'invalid_scope'));
    it('malformed scope', () => expectRedirected({ scope: 'openid  profile' }, 'invalid_scope'));
    it('missing code_challenge (PKCE is mandatory for every client)', () => expectRedirected({ code_challenge: undefined }, 'invalid_request'));
    it('missing code_challenge for a confidential client too', () =>
      (async () => {
        const result = await validate({ client_id: CONFIDENTIAL_CLIENT.clientId, redirect_uri: CONFIDENTIAL_CLIENT.redirectUris[0], scope: 'openid', code_challenge: undefined });
        expect(result.outcome).to.equal('redirect');
        if (result.outcome === 'redirect') {
          expect(result.error.code).to.equal('invalid_request');
          // The registered query is kept, and the response parameters follow it.
          expect(result.location.startsWith('https://backend.example.com/cb?tenant=7&error=invalid_request&')).to.equal(true);
        }
      })());
    it('missing code_challenge_method', () => expectRedirected({ code_challenge_method: undefined }, 'invalid_request'));
    it('code_challenge_method plain', () => expectRedirected({ code_challenge_method: 'plain' }, 'invalid_request'));
    it('code_challenge_method s256', () => expectRedirected({ code_challenge_method: 's256' }, 'invalid_request'));
    it('code_challenge too short', () => expectRedirected({ code_challenge: CHALLENGE.slice(1) }, 'invalid_request'));
    it('code_challenge with padding', () => expectRedirected({ code_challenge: `${CHALLENGE}=` }, 'invalid_request'));
    it('code_challenge that is a verifier', () => expectRedirected({ code_challenge: 'a'.repeat(64) }, 'invalid_request'));
    it('prompt none with login', () => expectRedirected({ prompt: 'none login' }, 'invalid_request'));
    it('prompt none with consent', () => expectRedirected({ prompt: 'consent none' }, 'invalid_request'));
    it('unsupported prompt select_account', () => expectRedirected({ prompt: 'select_account' }, 'invalid_request'));
    it('malformed prompt', () => expectRedirected({ prompt: 'login  consent' }, 'invalid_request'));
    it('negative max_age', () => expectRedirected({ max_age: '-1' }, 'invalid_request'));
    it('fractional max_age', () => expectRedirected({ max_age: '1.5' }, 'invalid_request'));
    it('non-numeric max_age', () => expectRedirected({ max_age: 'ten' }, 'invalid_request'));
    it('max_age with a sign', () => expectRedirected({ max_age: '+10' }, 'invalid_request'));
    it('max_age with spaces', () => expectRedirected({ max_age: ' 10' }, 'invalid_request'));
    it('huge max_age', () => expectRedirected({ max_age: '99999999999' }, 'invalid_request'));
    it('nonce too long', () => expectRedirected({ nonce: 'n'.repeat(513) }, 'invalid_request'));
    it('nonce with control characters', () => expectRedirected({ nonce: 'n\u0000' }, 'invalid_request'));

    it('checks in order: response_type before scope before PKCE', async () => {
      await expectRedirected({ response_type: 'token', scope: 'admin', code_challenge: undefined }, 'unsupported_response_type');
      await expectRedirected({ scope: 'admin', code_challenge: undefined }, 'invalid_scope');
    });

    it('a redirect to a loopback URI uses the port the app chose', async () => {
      const result = await validate({ redirect_uri: 'http://127.0.0.1:53124/native/cb', response_type: 'token' });
      expect(result.outcome).to.equal('redirect');
      if (result.outcome === 'redirect') expect(result.location.startsWith('http://127.0.0.1:53124/native/cb?error=')).to.equal(true);
    });
  });

  it('max_age 0 is valid', async () => {
    const result = await validate({ max_age: '0' });
    expect(result.outcome).to.equal('valid');
    if (result.outcome === 'valid') expect(result.request.maxAge).to.equal(0);
  });

  it('drops a malformed login_hint instead of failing', async () => {
    const result = await validate({ login_hint: 'x'.repeat(300) });
    expect(result.outcome).to.equal('valid');
    if (result.outcome === 'valid') expect(result.request.loginHint).to.equal(null);
  });

  describe('parsePrompt', () => {
    it('parses the space set', () => {
      expect([...parsePrompt(undefined)!]).to.deep.equal([]);
      expect([...parsePrompt('none')!]).to.deep.equal(['none']);
      expect([...parsePrompt('consent login')!]).to.deep.equal(['consent', 'login']);
    });
    it('refuses repeats, unknown values, none with others and bad spacing', () => {
      for (const bad of ['login login', 'none consent', 'create', ' login', 'login ', 'Login', '']) expect(parsePrompt(bad), bad).to.equal(null);
    });
  });

  describe('response locations', () => {
    it('success carries code, state and iss', () => {
      const location = new URL(authorizeSuccessLocation(REDIRECT, 'the-code', 'xyz', ISSUER));
      expect(Object.fromEntries(location.searchParams)).to.deep.equal({ code: 'the-code', state: 'xyz', iss: ISSUER });
    });
    it('success without state has no state', () => {
      expect(authorizeSuccessLocation(REDIRECT, 'c', null, ISSUER)).to.equal(`${REDIRECT}?code=c&iss=${encodeURIComponent(ISSUER)}`);
    });
    it('errors from the sign-in flow redirect the same way', () => {
      const location = new URL(authorizeErrorLocation('com.example.app:/oauth2redirect', new LoginRequired(), 'st', ISSUER));
      expect(location.protocol).to.equal('com.example.app:');
      expect(location.searchParams.get('error')).to.equal('login_required');
      expect(location.searchParams.get('state')).to.equal('st');
      expect(location.searchParams.get('iss')).to.equal(ISSUER);
    });
  });
});
