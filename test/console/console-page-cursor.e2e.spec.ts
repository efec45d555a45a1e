// The console's page cursors are signed with PAGE_CURSOR_SECRET, as the API's are: behind a
// gateway, the next page of a list may be asked of another instance than the one that drew the
// first. Three gateways over one stack: two given the same secret, one its own.
import { randomBytes, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { passBody, startStack, type Server, type Stack } from '../support/stack.js';
import { Browser } from '../sign-in/support/browser.js';
import { parseCreatePassRequest } from '../../shared/domain/pass-request.js';
import { MAX_PASSES_PER_BATCH } from '../../shared/domain/pass-constants.js';
import { createPasses } from '../../command-service/passes/create-passes.js';
import { browserSignedInAgo } from './support/console-session.js';

/** The pass ids a /passes page links to, in the order shown. */
function passIdsOf(page: string): string[] {
  return [...page.matchAll(/href="\/passes\/(gst_[^"/]+)"/g)].map((m) => m[1]!);
}

function nextHrefOf(page: string): string | null {
  return /href="(\/passes\?after=[^"]+)"/.exec(page)?.[1] ?? null;
}

describe('console: page cursors across instances (PAGE_CURSOR_SECRET)', function () {
  this.timeout(60_000);
  const secret = randomBytes(32).toString('base64url');
  let stack: Stack;
  let twin: Server;
  let stranger: Server;
  let first: Browser;
  let session: string;

  before(async () => {
    stack = await startStack({ label: 'console_cursor', pageCursorSecret: secret });
    twin = await stack.serve({ pageCursorSecret: secret });
    stranger = await stack.serve({ pageCursorSecret: randomBytes(32).toString('base64url') });
    const { orgId, facilityId } = await stack.seed.tenant();
    const host = await stack.seed.user(orgId, { roles: ['self_invite'], inviteAllowance: 1000 });
    // Four batches of ten: more than the 30 a page shows.
    for (let batch = 0; batch < 4; batch++) {
      const request = parseCreatePassRequest(passBody(facilityId, { first_name: `Guest${batch}`, quantity: MAX_PASSES_PER_BATCH }));
      await createPasses(stack.deps, { orgId, userId: host.userId, request }, { correlationId: randomUUID(), causationId: null, actor: { kind: 'user', id: host.userId }, now: new Date() });
    }
    first = await browserSignedInAgo(stack, { userId: host.userId, orgId });
    session = first.jar.get('gp_session')!;
  });
  after(async () => {
    await twin?.close();
    await stranger?.close();
    await stack?.stop();
  });

  /** The same signed-in browser, talking to another gateway. */
  function browserAt(server: Server): Browser {
    const browser = new Browser(server.baseUrl);
    browser.jar.set('gp_session', session);
    return browser;
  }

  it('a /passes cursor made by one instance opens the next page on another with the same secret, and is refused by one with another', async () => {
    const page1 = await first.get('/passes');
    expect(page1.status).to.equal(200);
    const shown = passIdsOf(page1.text);
    expect(shown).to.have.length(30);
    const next = nextHrefOf(page1.text);
    expect(next, 'the first page links to the next').to.not.equal(null);

    const page2 = await browserAt(twin).get(next!);
    expect(page2.status).to.equal(200);
    const rest = passIdsOf(page2.text);
    expect(rest).to.have.length(10);
    expect(rest.filter((id) => shown.includes(id)), 'no pass shown twice').to.deep.equal([]);
    // The first instance reads the same page from it: the cursor is the deployment's, not the process's.
    expect(passIdsOf((await first.get(next!)).text)).to.deep.equal(rest);

    const refused = await browserAt(stranger).get(next!);
    expect(refused.status).to.equal(400);
    expect(passIdsOf(refused.text)).to.deep.equal([]);
  });
});
