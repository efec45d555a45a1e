import { expect } from 'chai';
import { nextInteraction, type InteractionInput, type SignInSession } from '../../shared/oauth/authorize-interaction.js';
import type { AuthorizeRequest, Prompt } from '../../shared/oauth/authorize-request.js';
import { AccessDenied, ConsentRequired, LoginRequired } from '../../shared/oauth/oauth-errors.js';
import { CHALLENGE, PUBLIC_CLIENT, SID } from './oauth-fixtures.js';

const NOW = new Date('2025-06-01T10:10:00.000Z');
const session: SignInSession = { userId: 42, orgId: PUBLIC_CLIENT.orgId, authTime: '2025-06-01T10:00:00.000Z', amr: ['pwd'], sid: SID };

function request(prompt: Prompt[] = [], maxAge: number | null = null): AuthorizeRequest {
  return {
    client: PUBLIC_CLIENT,
    redirectUri: PUBLIC_CLIENT.redirectUris[0]!,
    scopes: ['openid', 'profile'],
    state: 's',
    codeChallenge: CHALLENGE,
    codeChallengeMethod: 'S256',
    nonce: null,
    prompt: new Set(prompt),
    maxAge,
    loginHint: null,
    idTokenHint: null,
  };
}

function input(overrides: Partial<InteractionInput> = {}): InteractionInput {
  return {
    request: request(),
    session,
    signedInForThisRequest: false,
    rememberedConsent: ['openid', 'profile'],
    consentedForThisRequest: false,
    hintSubject: null,
    now: NOW,
    ...overrides,
  };
}

describe('authorize interaction (what comes next)', () => {
  it('issues a code for a signed-in user who consented before', () => {
    expect(nextInteraction(input())).to.deep.equal({ next: 'issue_code', session });
  });

  it('sends a user without a session to sign in, or fails with login_required for prompt=none', () => {
    expect(nextInteraction(input({ session: null }))).to.deep.equal({ next: 'login' });
    expect(() => nextInteraction(input({ session: null, request: request(['none']) }))).to.throw(LoginRequired);
  });

  it('prompt=login forces a fresh sign-in, which then satisfies it', () => {
    expect(nextInteraction(input({ request: request(['login']) }))).to.deep.equal({ next: 'login' });
    expect(nextInteraction(input({ request: request(['login']), signedInForThisRequest: true })).next).to.equal('issue_code');
  });

  it('max_age: a session older than max_age signs in again; at the limit it does not', () => {
    expect(nextInteraction(input({ request: request([], 599) }))).to.deep.equal({ next: 'login' });
    expect(nextInteraction(input({ request: request([], 600) })).next).to.equal('issue_code');
    expect(() => nextInteraction(input({ request: request(['none'], 60) }))).to.throw(LoginRequired);
  });

  it('max_age=0 behaves like prompt=login and does not loop after the sign-in', () => {
    expect(nextInteraction(input({ request: request([], 0) }))).to.deep.equal({ next: 'login' });
    expect(nextInteraction(input({ request: request([], 0), signedInForThisRequest: true })).next).to.equal('issue_code');
    // Even a session that started this very second.
    const now = new Date('2025-06-01T10:00:00.400Z');
    const fresh = { ...session, authTime: '2025-06-01T10:00:00.000Z' };
    expect(nextInteraction(input({ request: request([], 0), session: fresh, now }))).to.deep.equal({ next: 'login' });
  });

  it('an unreadable auth time counts as too old', () => {
    expect(nextInteraction(input({ session: { ...session, authTime: 'garbage' }, request: request([], 1000) }))).to.deep.equal({ next: 'login' });
  });

  it('id_token_hint: a code for the user it names; another signed-in user signs in again, or login_required', () => {
    expect(nextInteraction(input({ hintSubject: '42' })).next).to.equal('issue_code');
    expect(nextInteraction(input({ hintSubject: '43' }))).to.deep.equal({ next: 'login' });
    expect(() => nextInteraction(input({ hintSubject: '43', request: request(['none']) }))).to.throw(LoginRequired);
    expect(nextInteraction(input({ hintSubject: '43', session: null }))).to.deep.equal({ next: 'login' });
  });

  it('id_token_hint: signing in as another user than it names, for this very request, ends in login_required (no loop)', () => {
    expect(() => nextInteraction(input({ hintSubject: '43', signedInForThisRequest: true }))).to.throw(LoginRequired);
    expect(nextInteraction(input({ hintSubject: '42', signedInForThisRequest: true })).next).to.equal('issue_code');
  });

  it('asks consent for scopes not granted before, naming the new ones', () => {
    expect(nextInteraction(input({ rememberedConsent: ['openid'] }))).to.deep.equal({
      next: 'consent',
      scopes: ['openid', 'profile'],
      newScopes: ['profile'],
    });
    expect(() => nextInteraction(input({ rememberedConsent: ['openid'], request: request(['none']) }))).to.throw(ConsentRequired);
  });

  it('prompt=consent asks again even when consent is remembered, until given for this request', () => {
    expect(nextInteraction(input({ request: request(['consent']) })).next).to.equal('consent');
    expect(nextInteraction(input({ request: request(['consent']), consentedForThisRequest: true })).next).to.equal('issue_code');
  });

  it('prompt=none with a session and consent issues a code silently', () => {
    expect(nextInteraction(input({ request: request(['none']) })).next).to.equal('issue_code');
  });

  it('refuses a user of another organization (clients are tenant-scoped)', () => {
    expect(() => nextInteraction(input({ session: { ...session, orgId: 8 } }))).to.throw(AccessDenied);
  });
});
