import { expect } from 'chai';
import { deciderSpec } from '../support/given-when-then.js';
import { fold } from '../../shared/domain/decider.js';
import { ConflictError, NotFoundError, ValidationError } from '../../shared/errors.js';
import {
  MAX_CLIENTS_PER_ORGANIZATION,
  isClientId,
  newClientId,
  oauthClientDecider,
  type OAuthClientCommand,
} from '../../shared/oauth/client-decider.js';
import type { OAuthClientDeleted, OAuthClientRegistered } from '../../shared/oauth/oauth-events.js';
import { newClientSecret } from '../../shared/oauth/opaque-credentials.js';
import { expectSchemaValid } from './oauth-fixtures.js';

const spec = deciderSpec(oauthClientDecider);
const ORG = 7;
type RegisterData = Extract<OAuthClientCommand, { type: 'RegisterOAuthClient' }>['data'];

const clientId = (n: number) => `svc_${n.toString(16).padStart(32, '0')}`;
const register = (overrides: Partial<RegisterData> = {}): OAuthClientCommand => ({
  type: 'RegisterOAuthClient',
  data: {
    orgId: ORG,
    clientId: clientId(1),
    name: 'Door App',
    clientType: 'public',
    secretHash: null,
    redirectUris: ['https://app.example.com/callback'],
    postLogoutRedirectUris: [],
    allowedScopes: ['openid', 'profile', 'email'],
    ...overrides,
  },
});
const registered = (n: number, overrides: Partial<OAuthClientRegistered['data']> = {}): OAuthClientRegistered => ({
  type: 'OAuthClientRegistered',
  data: {
    clientId: clientId(n),
    orgId: ORG,
    name: 'Door App',
    clientType: 'public',
    secretHash: null,
    redirectUris: ['https://app.example.com/callback'],
    postLogoutRedirectUris: [],
    allowedScopes: ['openid', 'profile', 'email'],
    ...overrides,
  },
});
const deleted = (n: number): OAuthClientDeleted => ({ type: 'OAuthClientDeleted', data: { clientId: clientId(n), orgId: ORG } });

describe('OAuth client decider', () => {
  it('newClientId gives svc_ and 32 hex digits, different every time', () => {
    const a = newClientId();
    expect(a).to.match(/^svc_[0-9a-f]{32}$/);
    expect(isClientId(a)).to.equal(true);
    expect(newClientId()).to.not.equal(a);
    expect(isClientId('svc_sk_abc')).to.equal(false);
  });

  describe('RegisterOAuthClient', () => {
    it('registers a public client', () => {
      expectSchemaValid(spec.given([]).when(register()).then([registered(1)]));
    });

    it('registers a confidential client with only the hash of its secret', () => {
      const { hash } = newClientSecret();
      const events = spec
        .given([])
        .when(register({ clientType: 'confidential', secretHash: hash, postLogoutRedirectUris: ['https://app.example.com/bye'] }))
        .then([registered(1, { clientType: 'confidential', secretHash: hash, postLogoutRedirectUris: ['https://app.example.com/bye'] })]);
      expectSchemaValid(events);
    });

    it('trims the name, de-duplicates URIs and puts scopes in canonical order', () => {
      spec
        .given([])
        .when(register({ name: '  Door App ', redirectUris: ['https://a.example/cb', 'https://a.example/cb'], allowedScopes: ['email', 'openid', 'email'] }))
        .then([registered(1, { redirectUris: ['https://a.example/cb'], allowedScopes: ['openid', 'email'] })]);
    });

    it('accepts loopback and private-use redirect URIs for native apps (RFC 8252)', () => {
      spec
        .given([])
        .when(register({ redirectUris: ['http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'com.example.app:/oauth2redirect'] }))
        .then([registered(1, { redirectUris: ['http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'com.example.app:/oauth2redirect'] })]);
    });

    it('allows 50 clients per organization and refuses the 51st', () => {
      const fortyNine = Array.from({ length: MAX_CLIENTS_PER_ORGANIZATION - 1 }, (_, i) => registered(i + 1));
      spec.given(fortyNine).when(register({ clientId: clientId(50) })).then([registered(50)]);
      const fifty = [...fortyNine, registered(50)];
      spec.given(fifty).when(register({ clientId: clientId(51) })).thenThrows(ConflictError, /at most 50/);
    });

    it('a deleted client frees its place', () => {
      const fifty = Array.from({ length: MAX_CLIENTS_PER_ORGANIZATION }, (_, i) => registered(i + 1));
      spec.given([...fifty, deleted(3)]).when(register({ clientId: clientId(51) })).then([registered(51)]);
    });

    it('refuses a duplicate client id', () => {
      spec.given([registered(1)]).when(register()).thenThrows(ConflictError);
    });

    const invalid: Array<[string, Partial<RegisterData>]> = [
      ['a malformed client id', { clientId: 'svc_XYZ' }],
      ['an API-key-looking client id', { clientId: 'svc_sk_0123' }],
      ['an empty name', { name: '   ' }],
      ['a name over 100 characters', { name: 'x'.repeat(101) }],
      ['a name with control characters', { name: 'Door\nApp' }],
      ['an unknown client type', { clientType: 'native' as never }],
      ['a public client with a secret', { secretHash: newClientSecret().hash }],
      ['a confidential client without a secret', { clientType: 'confidential', secretHash: null }],
      ['a confidential client with a raw secret', { clientType: 'confidential', secretHash: newClientSecret().value }],
      ['no redirect URI', { redirectUris: [] }],
      ['21 redirect URIs', { redirectUris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) }],
      ['a redirect URI with a fragment', { redirectUris: ['https://a.example/cb#x'] }],
      ['a relative redirect URI', { redirectUris: ['/cb'] }],
      ['a plain http redirect URI', { redirectUris: ['http://a.example/cb'] }],
      ['an http localhost redirect URI', { redirectUris: ['http://localhost:3000/cb'] }],
      ['a javascript: redirect URI', { redirectUris: ['javascript:alert(1)'] }],
      ['a bad post-logout URI', { postLogoutRedirectUris: ['http://evil.example/'] }],
      ['no scopes', { allowedScopes: [] }],
      ['an unknown scope', { allowedScopes: ['openid', 'org:passes:read'] }],
    ];
    for (const [what, patch] of invalid) {
      it(`refuses ${what}`, () => {
        spec.given([]).when(register(patch)).thenThrows(ValidationError);
      });
    }

    it('lists every bad redirect URI in the details', () => {
      const error = spec.given([]).when(register({ redirectUris: ['http://a.example/', 'https://ok.example/', 'ftp://x/'] })).thenThrows(ValidationError);
      expect(error.details).to.have.length(2);
    });
  });

  describe('DeleteOAuthClient', () => {
    const remove = (n: number, orgId = ORG): OAuthClientCommand => ({ type: 'DeleteOAuthClient', data: { orgId, clientId: clientId(n) } });

    it('deletes a client of the organization', () => {
      expectSchemaValid(spec.given([registered(1)]).when(remove(1)).then([deleted(1)]));
      const state = fold(oauthClientDecider, [registered(1), registered(2), deleted(1)]);
      expect([...state.clients.keys()]).to.deep.equal([clientId(2)]);
    });

    it('an unknown, already deleted or foreign client is not found', () => {
      spec.given([]).when(remove(1)).thenThrows(NotFoundError);
      spec.given([registered(1), deleted(1)]).when(remove(1)).thenThrows(NotFoundError);
      spec.given([registered(1)]).when(remove(1, 8)).thenThrows(NotFoundError);
    });
  });
});
