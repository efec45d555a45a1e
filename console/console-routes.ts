// The tenant console: server-rendered pages for an organization's admins (/settings), and for
// anyone signed in (/invitations). Mounted by the command service (command-service/app.ts), which
// the embedded gateway and the production nginx route these paths to. It owns no business rule:
// each form calls the use case the API and the CLI call, each list reads a read model, and each
// change is an event whose metadata names the signed-in user.
import type Router from '@koa/router';
import { serviceRouter } from '../shared/http/service-app.js';
import type { HttpState } from '../shared/http/http-state.js';
import { ORG_API_RATE_LIMIT, RateLimiter } from '../shared/http/rate-limit.js';
import { PageCursor } from '../shared/http/page-cursor.js';
import { html } from '../shared/sign-in/html.js';
import type { CommandAppDeps } from '../command-service/command-app-deps.js';
import { createSignInKit } from '../command-service/sign-in/sign-in-kit.js';
import { isLocalPath } from '../command-service/sign-in/sign-in-kit.js';
import { redirectTo } from '../command-service/sign-in/page-response.js';
import { SIGN_IN_PATHS } from '../command-service/sign-in/sign-in-paths.js';
import { CONSOLE_SCRIPT, CONSOLE_STYLESHEET } from './console-assets.js';
import type { ConsoleEnv } from './console-env.js';
import { guard, postedForm, sendConsolePage } from './console-guard.js';
import { CONSOLE_PATHS } from './console-paths.js';
import { consoleUser } from './console-user.js';
import { navFor } from './console-nav.js';
import { consoleLayout } from './pages/console-layout.js';
import { field } from '../command-service/sign-in/page-form.js';
import { clientsSection } from './settings/clients-routes.js';
import { apiKeysSection } from './settings/api-keys-routes.js';
import { facilitiesSection } from './settings/facilities-routes.js';
import { peopleSection } from './settings/people-routes.js';
import { invitationsSection } from './invitations/invitations-routes.js';
import { joinPasskeySection } from './invitations/join-passkey-routes.js';
import { passesSection } from './passes/passes-routes.js';
import { visitorsSection } from './visitors/visitors-routes.js';
import { membersSection } from './settings/members-routes.js';
import { auditSection } from './settings/audit-routes.js';

/** The sign-in forms' policy: 300 posts a minute per source address. */
const CONSOLE_FORMS_LIMIT = { ...ORG_API_RATE_LIMIT, points: 300, windowSeconds: 60, abuseThreshold: 300 };

/** The console's sections; each adds its routes to the router it is given. */
export type ConsoleSection = (router: Router<HttpState>, env: ConsoleEnv) => void;

const SECTIONS: readonly ConsoleSection[] = [
  clientsSection,
  apiKeysSection,
  facilitiesSection,
  peopleSection,
  invitationsSection,
  joinPasskeySection,
  passesSection,
  visitorsSection,
  membersSection,
  auditSection,
];

export function consoleRoutes(deps: CommandAppDeps, options: { trustProxy: boolean }): Router<HttpState> {
  const env: ConsoleEnv = {
    deps,
    kit: createSignInKit(deps),
    forms: new RateLimiter('console-forms', CONSOLE_FORMS_LIMIT, deps.rateLimitStore),
    trustProxy: options.trustProxy,
    // The API's secret: behind a gateway the next page may be asked of another instance.
    cursor: new PageCursor(deps.config.pageCursorSecret),
  };
  const router = serviceRouter();

  router.get(CONSOLE_PATHS.stylesheet, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = CONSOLE_STYLESHEET;
  });
  router.get(CONSOLE_PATHS.script, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = CONSOLE_SCRIPT;
  });

  // Sign in again, then back to the console page the action was on.
  router.post(CONSOLE_PATHS.reauthenticate, ...guard(env, null), (ctx) => {
    const returnTo = field(postedForm(ctx), 'return_to');
    env.kit.returnAfterSignIn(ctx, isLocalPath(returnTo) ? returnTo : CONSOLE_PATHS.invitations);
    // This sign-in is for the console: an authorization left pending in this browser must not be the one it completes.
    env.kit.dropFlow(ctx);
    redirectTo(ctx, SIGN_IN_PATHS.signIn);
  });

  router.get(CONSOLE_PATHS.settings, ...guard(env, 'admin'), (ctx) => {
    const user = consoleUser(ctx);
    const sections = navFor(user.roles).filter((item) => item.href.startsWith(`${CONSOLE_PATHS.settings}/`));
    sendConsolePage(
      ctx,
      consoleLayout(
        { title: 'Settings', user, csrfToken: env.kit.csrfToken(ctx) },
        html`<h1>Settings</h1>
<p>Your organization's apps, keys, facilities and people.</p>
<ul>${sections.map((s) => html`<li><a href="${s.href}">${s.text}</a></li>`)}</ul>`,
      ),
    );
  });

  for (const section of SECTIONS) section(router, env);
  return router;
}
