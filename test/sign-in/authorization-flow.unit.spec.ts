import { expect } from 'chai';
import type { SignInSession } from '../../shared/oauth/authorize-interaction.js';
import {
  authorizeLocationOf,
  consentedFor,
  flowBinding,
  flowFor,
  flowRequestId,
  isAuthorizationFlow,
  signedInFor,
} from '../../shared/sign-in/authorization-flow.js';

const query = 'response_type=code&client_id=svc_x&state=abc';
const otherQuery = 'response_type=code&client_id=svc_x&state=abd';
const session = (sid: string): SignInSession => ({ userId: 42, orgId: 7, authTime: '2025-06-01T10:00:00.000Z', amr: ['pwd'], sid });
const S1 = session('sid_aaaaaaaaaaaaaaaa');
const S2 = session('sid_bbbbbbbbbbbbbbbb');

describe('authorization flow (binding sign-in and consent to one authorize request)', () => {
  it('a new flow has signed in and consented nobody', () => {
    const flow = flowFor(query, null, 'login');
    expect(flow).to.deep.equal({ query, signedIn: null, consented: null });
    expect(flowBinding(flow, query, S1)).to.deep.equal({ signedInForThisRequest: false, consentedForThisRequest: false });
  });

  it('a sign-in counts for the same request and the session it started, only', () => {
    const flow = signedInFor(flowFor(query, null, 'login'), S1.sid);
    expect(flowBinding(flow, query, S1).signedInForThisRequest).to.equal(true);
    expect(flowBinding(flow, otherQuery, S1).signedInForThisRequest).to.equal(false);
    expect(flowBinding(flow, query, S2).signedInForThisRequest).to.equal(false);
    expect(flowBinding(flow, query, null).signedInForThisRequest).to.equal(false);
    expect(flowBinding(null, query, S1).signedInForThisRequest).to.equal(false);
  });

  it('a consent counts for the same request and the session that gave it, only', () => {
    const flow = consentedFor(flowFor(query, null, 'consent'), S1.sid);
    expect(flowBinding(flow, query, S1).consentedForThisRequest).to.equal(true);
    expect(flowBinding(flow, otherQuery, S1).consentedForThisRequest).to.equal(false);
    expect(flowBinding(flow, query, S2).consentedForThisRequest).to.equal(false);
  });

  it('going on to consent keeps the sign-in made for the same request; anything else starts clean', () => {
    const signedIn = signedInFor(flowFor(query, null, 'login'), S1.sid);
    expect(flowFor(query, signedIn, 'consent')).to.deep.equal({ query, signedIn: S1.sid, consented: null });
    expect(flowFor(otherQuery, signedIn, 'consent')).to.deep.equal({ query: otherQuery, signedIn: null, consented: null });
    expect(flowFor(query, consentedFor(signedIn, S1.sid), 'login')).to.deep.equal({ query, signedIn: null, consented: null });
  });

  it('a new sign-in clears an earlier consent of the flow', () => {
    const consented = consentedFor(flowFor(query, null, 'consent'), S1.sid);
    expect(signedInFor(consented, S2.sid)).to.deep.equal({ query, signedIn: S2.sid, consented: null });
  });

  it('returns to the authorize endpoint with the very same query', () => {
    expect(authorizeLocationOf(flowFor(query, null, 'login'))).to.equal(`/api/oauth/authorize?${query}`);
  });

  it('names the request with a digest that differs between requests', () => {
    const id = flowRequestId(flowFor(query, null, 'consent'));
    expect(id).to.match(/^[0-9a-f]{64}$/);
    expect(flowRequestId(flowFor(otherQuery, null, 'consent'))).to.not.equal(id);
  });

  it('recognises only well-formed flows in an opened cookie', () => {
    expect(isAuthorizationFlow({ query, signedIn: null, consented: 'x' })).to.equal(true);
    expect(isAuthorizationFlow({ query, signedIn: 1, consented: null })).to.equal(false);
    expect(isAuthorizationFlow({ query: 'x'.repeat(5000), signedIn: null, consented: null })).to.equal(false);
    expect(isAuthorizationFlow(null)).to.equal(false);
    expect(isAuthorizationFlow('query')).to.equal(false);
  });
});
