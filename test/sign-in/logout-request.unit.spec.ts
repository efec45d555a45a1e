import { expect } from 'chai';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import {
  HOME_PAGE,
  decideLogout,
  logoutClientId,
  readLogoutParameters,
  type HintOutcome,
  type LogoutInput,
} from '../../shared/sign-in/logout-request.js';
import { CONFIDENTIAL_CLIENT, PUBLIC_CLIENT, SID } from '../oauth/oauth-fixtures.js';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiI0MiJ9.c2ln';
const registered = PUBLIC_CLIENT.postLogoutRedirectUris[0]!; // https://app.example.com/bye
const session: SignInSession = { userId: 42, orgId: 7, authTime: '2025-06-01T10:00:00.000Z', amr: ['pwd'], sid: SID };
const valid = (overrides: Partial<{ sub: string; aud: string[]; sid: string | null }> = {}): HintOutcome => ({
  kind: 'valid',
  hint: { sub: '42', aud: [PUBLIC_CLIENT.clientId], sid: SID, ...overrides },
});

function input(params: Record<string, string | string[]>, overrides: Partial<LogoutInput> = {}): LogoutInput {
  return { params: readLogoutParameters(params), hint: valid(), session, client: PUBLIC_CLIENT, ...overrides };
}

describe('logout request (RP-initiated logout)', () => {
  describe('reading the parameters', () => {
    it('reads the four parameters; empty values are absent', () => {
      expect(readLogoutParameters({ id_token_hint: JWT, post_logout_redirect_uri: registered, state: 's 1', client_id: PUBLIC_CLIENT.clientId })).to.deep.equal({
        idTokenHint: JWT,
        postLogoutRedirectUri: registered,
        state: 's 1',
        clientId: PUBLIC_CLIENT.clientId,
        malformed: false,
      });
      expect(readLogoutParameters({ id_token_hint: '', state: '' })).to.deep.include({ idTokenHint: null, state: null, malformed: false });
    });

    it('marks a repeated parameter, or a malformed hint, URI, state or client_id, as malformed', () => {
      expect(readLogoutParameters({ state: ['a', 'b'] }).malformed).to.equal(true);
      expect(readLogoutParameters({ id_token_hint: 'not-a-jwt' }).malformed).to.equal(true);
      expect(readLogoutParameters({ id_token_hint: `${JWT}${'a'.repeat(9000)}` }).malformed).to.equal(true);
      expect(readLogoutParameters({ post_logout_redirect_uri: 'https://x.example/\u00e9' }).malformed).to.equal(true);
      expect(readLogoutParameters({ state: 'x'.repeat(2049) }).malformed).to.equal(true);
      expect(readLogoutParameters({ state: 'tab\there' }).malformed).to.equal(true);
      expect(readLogoutParameters({ client_id: 'svc_nothex' }).malformed).to.equal(true);
    });
  });

  describe('which client', () => {
    it('is client_id when it is among the hint audiences, else none', () => {
      const params = readLogoutParameters({ client_id: PUBLIC_CLIENT.clientId });
      expect(logoutClientId(params, valid())).to.equal(PUBLIC_CLIENT.clientId);
      expect(logoutClientId(params, valid({ aud: [CONFIDENTIAL_CLIENT.clientId] }))).to.equal(null);
    });

    it("is the hint's (first) audience without client_id, and client_id without a hint", () => {
      expect(logoutClientId(readLogoutParameters({}), valid({ aud: [CONFIDENTIAL_CLIENT.clientId, PUBLIC_CLIENT.clientId] }))).to.equal(
        CONFIDENTIAL_CLIENT.clientId,
      );
      expect(logoutClientId(readLogoutParameters({ client_id: PUBLIC_CLIENT.clientId }), { kind: 'absent' })).to.equal(PUBLIC_CLIENT.clientId);
      expect(logoutClientId(readLogoutParameters({}), { kind: 'absent' })).to.equal(null);
    });
  });

  describe('the decision', () => {
    it('a verified hint for the signed-in user and session ends it and returns to a registered URI with state', () => {
      expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: registered, state: 'xyz' }))).to.deep.equal({
        endSession: true,
        location: `${registered}?state=xyz`,
      });
    });

    it('keeps the registered URI byte for byte (its own query too) and leaves state out when there is none', () => {
      const client = { ...PUBLIC_CLIENT, postLogoutRedirectUris: ['https://app.example.com/bye?from=op'] };
      expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: 'https://app.example.com/bye?from=op', state: 'a b' }, { client })).location).to.equal(
        'https://app.example.com/bye?from=op&state=a%20b',
      );
      expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: registered })).location).to.equal(registered);
    });

    it('a hint without sid still ends the session of its user', () => {
      expect(decideLogout(input({ id_token_hint: JWT }, { hint: valid({ sid: null }) })).endSession).to.equal(true);
    });

    it('goes home when the URI is not exactly registered (case, trailing slash, prefix) or absent', () => {
      for (const uri of ['https://app.example.com/bye/', 'https://APP.example.com/bye', 'https://app.example.com/by', 'https://evil.example/bye']) {
        expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: uri })), uri).to.deep.equal({ endSession: true, location: HOME_PAGE });
      }
      expect(decideLogout(input({ id_token_hint: JWT })).location).to.equal(HOME_PAGE);
    });

    it("does not end the session of another user, of another session, or when nobody is signed in", () => {
      expect(decideLogout(input({ id_token_hint: JWT }, { hint: valid({ sub: '43' }) })).endSession).to.equal(false);
      expect(decideLogout(input({ id_token_hint: JWT }, { hint: valid({ sid: 'another_session_id' }) })).endSession).to.equal(false);
      expect(decideLogout(input({ id_token_hint: JWT }, { session: null })).endSession).to.equal(false);
    });

    it('still redirects to a registered URI for a hint of another user (the client is known), without ending anything', () => {
      expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: registered, state: 's' }, { hint: valid({ sub: '43' }) }))).to.deep.equal({
        endSession: false,
        location: `${registered}?state=s`,
      });
    });

    it('without a hint: never ends the session, redirects only to a URI registered for client_id', () => {
      expect(decideLogout(input({ client_id: PUBLIC_CLIENT.clientId, post_logout_redirect_uri: registered, state: 's' }, { hint: { kind: 'absent' } }))).to.deep.equal({
        endSession: false,
        location: `${registered}?state=s`,
      });
      expect(decideLogout(input({ post_logout_redirect_uri: registered }, { hint: { kind: 'absent' }, client: null }))).to.deep.equal({
        endSession: false,
        location: HOME_PAGE,
      });
    });

    it('a hint that does not verify changes nothing and goes home', () => {
      expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: registered, client_id: PUBLIC_CLIENT.clientId }, { hint: { kind: 'invalid' } }))).to.deep.equal({
        endSession: false,
        location: HOME_PAGE,
      });
    });

    it('client_id that is not the hint audience changes nothing and goes home', () => {
      expect(
        decideLogout(input({ id_token_hint: JWT, client_id: CONFIDENTIAL_CLIENT.clientId, post_logout_redirect_uri: registered }, { client: CONFIDENTIAL_CLIENT })),
      ).to.deep.equal({ endSession: false, location: HOME_PAGE });
    });

    it('a malformed request changes nothing and goes home', () => {
      expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: registered, state: ['a', 'b'] }))).to.deep.equal({
        endSession: false,
        location: HOME_PAGE,
      });
    });

    it('uses the client it was given only when it is the client named by the request', () => {
      expect(decideLogout(input({ id_token_hint: JWT, post_logout_redirect_uri: registered }, { client: { ...CONFIDENTIAL_CLIENT, postLogoutRedirectUris: [registered] } })).location).to.equal(
        HOME_PAGE,
      );
    });
  });
});
