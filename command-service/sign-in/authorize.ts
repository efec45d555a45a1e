// GET /api/oauth/authorize (spec "GET /api/oauth/authorize"; RFC 6749 §4.1.1, OpenID Connect
// Core §3.1.2, RFC 7636, RFC 9207), in the order the checks are made:
//
//   1. rate limit per source IP (429);
//   2. the request (authorize-request.ts): an unusable client_id/redirect_uri pair is a 400 JSON
//      error, never a redirect; every later problem is redirected to the client with state and iss;
//   3. what comes next (authorize-interaction.ts), from the browser's session, the consent the
//      user remembered for this client, and whether they signed in / consented for this very
//      request (authorization-flow.ts explains the binding): the sign-in page, the consent page,
//      or a code. prompt=none turns the pages into login_required / consent_required redirects;
//      an id_token_hint (verified here: one of our ID Tokens, expired or not) must name the user;
//   4. the code, redirected with state and iss.
// An unexpected failure after step 2 is redirected as server_error (RFC 6749 §4.1.2.1): the
// client learns the request failed, the log learns why.
import type Router from '@koa/router';
import {
  authorizeErrorLocation,
  authorizeSuccessLocation,
  validateAuthorizeRequest,
  INVALID_ID_TOKEN_HINT,
  type QueryParameters,
} from '../../shared/oauth/authorize-request.js';
import { nextInteraction } from '../../shared/oauth/authorize-interaction.js';
import { OAUTH_PATHS } from '../../shared/oauth/discovery.js';
import { InvalidRequest, OAuthError, TemporarilyUnavailable, asOAuthError } from '../../shared/oauth/oauth-errors.js';
import { outageOf, recordOutage } from '../../shared/outage/part-unavailable.js';
import { UnknownHintKeyError, verifyIdTokenHint } from '../../shared/oauth/tokens.js';
import { InvalidTokenError } from '../../shared/errors.js';
import { oauthStreams } from '../../shared/oauth/oauth-events.js';
import type { HttpState } from '../../shared/http/http-state.js';
import { consentDecider, rememberedScopes } from '../../shared/sign-in/consent-decider.js';
import { MAX_FLOW_QUERY_LENGTH, flowBinding, flowFor } from '../../shared/sign-in/authorization-flow.js';
import { issueAuthorizationCode } from '../oauth/issue-code.js';
import { redirectTo } from './page-response.js';
import type { SignInEnv } from './sign-in-env.js';
import { userCommandContext } from './sign-in-kit.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';

export function authorizeRoute(router: Router<HttpState>, env: SignInEnv): void {
  const { deps, kit } = env;
  const issuer = deps.oauth.issuer;

  /**
   * The user an id_token_hint names: one of our ID Tokens, expired or not (OIDC Core §3.1.2.1).
   * One signed with a key rotated out since is no hint at all (it can only narrow who may sign in,
   * and the client checks the `sub` it gets), rather than an error on every later sign-in.
   */
  async function hintSubjectOf(hint: string | null): Promise<string | null> {
    if (hint === null) return null;
    try {
      return (await verifyIdTokenHint(hint, deps.oauth.verificationKeys, { issuer })).sub;
    } catch (error) {
      if (error instanceof UnknownHintKeyError) return null;
      if (error instanceof InvalidTokenError) throw new InvalidRequest(INVALID_ID_TOKEN_HINT);
      throw error;
    }
  }

  router.get(OAUTH_PATHS.authorize, env.limits.authorize.middleware({ trustProxy: env.trustProxy }), async (ctx) => {
    const validation = await validateAuthorizeRequest(ctx.query as QueryParameters, deps.oauth.clients, issuer);
    if (validation.outcome === 'reject') throw validation.error;
    if (validation.outcome === 'redirect') return redirectTo(ctx, validation.location);
    const request = validation.request;
    const query = ctx.querystring;
    const flow = kit.flow(ctx);
    const ownFlow = flow !== null && flow.query === query;

    try {
      const now = new Date();
      const session = await kit.session(ctx);
      const remembered =
        session === null
          ? []
          : rememberedScopes((await deps.handler.load(oauthStreams.consents(session.userId), consentDecider)).state, request.client.clientId);
      const interaction = nextInteraction({
        request,
        session,
        ...flowBinding(flow, query, session),
        rememberedConsent: remembered,
        hintSubject: await hintSubjectOf(request.idTokenHint),
        now,
      });

      if (interaction.next === 'issue_code') {
        // This authorization is over: its flow (and only its own, another tab may have one) goes.
        if (ownFlow) kit.dropFlow(ctx);
        const { code } = await issueAuthorizationCode(
          deps,
          { request, session: interaction.session },
          userCommandContext(ctx, interaction.session.userId, now),
        );
        return redirectTo(ctx, authorizeSuccessLocation(request.redirectUri, code, request.state, issuer));
      }
      if (query.length > MAX_FLOW_QUERY_LENGTH) throw new InvalidRequest('The authorization request is too long.');
      kit.keepFlow(ctx, flowFor(query, flow, interaction.next));
      return redirectTo(ctx, interaction.next === 'login' ? SIGN_IN_PATHS.signIn : SIGN_IN_PATHS.consent);
    } catch (error) {
      // A part down (the database restarting) is RFC 6749's temporarily_unavailable, logged once per outage.
      const outage = error instanceof OAuthError ? null : outageOf(error);
      if (outage !== null) recordOutage(outage, ctx.state.log);
      else if (!(error instanceof OAuthError)) ctx.state.log.error({ err: error }, 'authorize failed after the request was validated');
      if (ownFlow) kit.dropFlow(ctx);
      const answer = outage !== null ? new TemporarilyUnavailable() : asOAuthError(error);
      return redirectTo(ctx, authorizeErrorLocation(request.redirectUri, answer, request.state, issuer));
    }
  });
}
