// GET / (the service home page, where logout lands) and the pages' stylesheet.
import type Router from '@koa/router';
import type { HttpState } from '../../shared/http/http-state.js';
import { sendPage } from './page-response.js';
import { homePage } from './pages/home-page.js';
import { SIGN_IN_STYLESHEET } from './pages/stylesheet.js';
import type { SignInEnv } from './sign-in-env.js';
import { SIGN_IN_PATHS } from './sign-in-paths.js';

export function homeRoutes(router: Router<HttpState>, env: SignInEnv): void {
  router.get(SIGN_IN_PATHS.home, async (ctx) => {
    sendPage(ctx, homePage({ signedIn: (await env.kit.session(ctx)) !== null }));
  });

  router.get(SIGN_IN_PATHS.stylesheet, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = SIGN_IN_STYLESHEET;
  });
}
