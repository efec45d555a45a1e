// A whole run that hits database errors on purpose, every line it logs scanned: no guest's or
// member's email, name or phone, and no search term, appears in any of them. The errors come
// from a read model taken away under the running stack (a listing with a search, a create whose
// projection cannot write), the way an operator's mistake or a failed migration would cause them.
import { expect } from 'chai';
import { capturedLogger } from '../support/captured-logs.js';
import { startStack, passBody, type Stack, type Tenant } from '../support/stack.js';

const GUEST = { first_name: 'Augusta', last_name: 'Lovelace', email: 'augusta.lovelace@example.com', phone: '+44 20 7946 0958' };
const SECOND_GUEST = { first_name: 'Hedwig', last_name: 'Kiesler', email: 'hedy.kiesler@example.org', phone: '+1 555 0100 777' };
const SEARCH_TERM = 'Lovelace';

describe('personal data in log lines, through database errors', function () {
  this.timeout(120_000);
  const captured = capturedLogger();
  let stack: Stack;
  let tenant: Tenant;
  let passList: string;

  before(async () => {
    stack = await startStack({ label: 'pii_logs', logger: captured.logger, projectionWaitMs: 500 });
    tenant = await stack.seed.tenant();
    ({ table_name: passList } = await stack.db('projection_checkpoints').where({ name: 'pass_list' }).first('table_name'));
  });
  after(async () => {
    await stack?.stop();
  });

  it('logs the failures, and none of the guests\' data or the search term', async () => {
    const created = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId, GUEST) });
    expect(created.status).to.equal(201);

    // Readers query the view, the projection writes its generation table: take both away.
    await stack.db.raw('ALTER VIEW pass_list RENAME TO pass_list_view_taken_away');
    await stack.db.raw('ALTER TABLE ?? RENAME TO pass_list_taken_away', [passList]);
    try {
      const search = await stack.request('GET', `/api/v1/org/passes?search=${encodeURIComponent(SEARCH_TERM)}`, { apiKey: tenant.apiKey });
      expect(search.status).to.equal(500);
      const byEmail = await stack.request('GET', `/api/v1/org/passes?search=${encodeURIComponent(SECOND_GUEST.email)}`, { apiKey: tenant.apiKey });
      expect(byEmail.status).to.equal(500);
      // The event is written; its projection fails until the table is back.
      const second = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId, SECOND_GUEST) });
      expect(second.status).to.be.oneOf([201, 202, 503]);
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      await stack.db.raw('ALTER TABLE pass_list_taken_away RENAME TO ??', [passList]);
      await stack.db.raw('ALTER VIEW pass_list_view_taken_away RENAME TO pass_list');
    }

    const text = captured.text();
    expect(text, 'the run logged its database errors').to.match(/"level":50/);
    expect(text, 'the projection\'s failure was logged').to.include(passList);
    const personal = [SEARCH_TERM, ...Object.values(GUEST), ...Object.values(SECOND_GUEST)];
    const digits = (phone: string) => phone.replace(/\D/g, '');
    for (const value of personal) expect(text.toLowerCase(), value).to.not.include(value.toLowerCase());
    for (const phone of [GUEST.phone, SECOND_GUEST.phone]) expect(text, phone).to.not.include(digits(phone));
  });
});
