// What the projection runner and the rebuild both need from their process. Its own module, below
// runner.ts and rebuild.ts, so the rebuild does not import the runner that starts it.
import type { Knex } from 'knex';
import type { Logger } from '../shared/logger.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import type { ContactHasher } from '../shared/crypto/contact-search.js';
import type { EventStore } from '../shared/event-store/event-store.js';

export interface ProjectionDeps {
  readonly knex: Knex;
  readonly store: EventStore;
  readonly subjectKeys: SubjectKeyStore;
  /**
   * Computes the keyed hashes of members' email and phone as their contact is opened (live and
   * in rebuilds); without one those hashes are null and contact search finds nothing.
   */
  readonly contactHasher?: ContactHasher;
  readonly logger?: Logger;
}
