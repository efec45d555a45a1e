// Database errors reach log lines whole (message, detail): none may carry the values of the
// statement that failed, which are personal data as often as not.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { migratedDatabase } from '../support/database.js';
import type { Knex } from '../../shared/db/knex.js';
import { REDACTED_PATHS } from '../../shared/logger.js';

describe('database errors in log lines', () => {
  let knex: Knex;
  before(async () => {
    ({ knex } = await migratedDatabase('error_logging'));
    await knex.raw('CREATE TABLE people (email text PRIMARY KEY)');
    await knex('people').insert({ email: 'ada.lovelace@example.com' });
  });
  after(() => knex?.destroy());

  it('keep neither the bound values in the message nor the refused row in the detail', async () => {
    const lines: string[] = [];
    const logger = pino({ redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    const error = await knex('people')
      .insert({ email: 'ada.lovelace@example.com' })
      .then(() => null, (e: unknown) => e);
    expect(error, 'the duplicate insert fails').to.be.instanceOf(Error);
    expect((error as { detail?: string }).detail, 'PostgreSQL names the row').to.include('ada.lovelace@example.com');
    logger.error({ err: error }, 'insert failed');
    expect(lines.join('')).to.include('insert failed').and.not.to.include('ada.lovelace@example.com');
  });
});
