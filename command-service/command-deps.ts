import type { Knex } from 'knex';
import type { EventStore } from '../shared/event-store/event-store.js';
import type { CommandHandler } from '../shared/event-store/command-handler.js';
import type { IdAllocator } from '../shared/domain/id-allocator.js';
import type { SubjectKeyStore } from '../shared/crypto/subject-keys.js';
import type { ReadModelWatermark } from '../shared/read-model-watermark.js';
import type { ReadModelChanges } from '../shared/read-model-changes.js';
import type { DeliveryOutcomes } from '../shared/delivery/delivery-outcomes.js';
import type { ContactHasher } from '../shared/crypto/contact-search.js';

/** The ports every command use case is given. */
export interface CommandDeps {
  readonly store: EventStore;
  readonly handler: CommandHandler;
  readonly ids: IdAllocator;
  readonly subjectKeys: SubjectKeyStore;
  /** Read models, only to locate things (a pass's stream, an API key by hash); never written here. */
  readonly db: Knex;
  readonly watermark: ReadModelWatermark;
  /** When given, the organization API caches API keys until the api_keys read model changes. */
  readonly readModelChanges?: ReadModelChanges;
  readonly projectionWaitMs: number;
  /**
   * Where a pass create learns whether its email and SMS were accepted, waiting up to
   * `deliveryWaitMs`; absent where no delivery reactor runs (the create then reports nothing sent).
   */
  readonly deliveryOutcomes?: DeliveryOutcomes;
  readonly deliveryWaitMs?: number;
  /** Hashes contact values (email, phone) for search under the service's contact search key. */
  readonly contactHasher?: ContactHasher;
}
