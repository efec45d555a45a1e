// GET /signin/passkey.js: the browser side of passkeys (passkey.js beside this file), served as
// a static file so pages can load it under a CSP of script-src 'self'. Read once; a build that
// forgot to copy it answers 404 and logs, rather than stopping the service.
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { NotFoundError } from '../../../shared/errors.js';
import type { HttpContext } from '../../../shared/http/http-state.js';
import { SIGN_IN_PATHS } from '../sign-in-paths.js';

export const PASSKEY_SCRIPT_PATH = SIGN_IN_PATHS.passkeyScript;

interface Script {
  readonly body: Buffer;
  readonly etag: string;
}

// Beside this module when run from source (tsx) or when the build copied it; from dist/ in a
// checkout, the source file (tsc does not copy .js files).
const LOCATIONS = [new URL('./passkey.js', import.meta.url), new URL('../../../../command-service/sign-in/passkeys/passkey.js', import.meta.url)];

let loaded: Promise<Script | null> | null = null;

async function read(): Promise<Script | null> {
  for (const location of LOCATIONS) {
    try {
      const body = await readFile(location);
      return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    } catch {
      // try the next place
    }
  }
  return null;
}

function load(): Promise<Script | null> {
  loaded ??= read();
  return loaded;
}

export async function servePasskeyScript(ctx: HttpContext): Promise<void> {
  const script = await load();
  if (!script) {
    ctx.state.log.error('passkey.js is missing beside the passkey routes (was it copied into the build?)');
    throw new NotFoundError('not found');
  }
  // Public and identical for everyone; revalidated so a deploy takes effect at once.
  ctx.set('Cache-Control', 'no-cache');
  ctx.set('ETag', script.etag);
  ctx.type = 'text/javascript; charset=utf-8';
  if (ctx.get('If-None-Match') === script.etag) {
    ctx.status = 304;
    return;
  }
  ctx.body = script.body;
}
