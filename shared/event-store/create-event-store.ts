// Picks the event store adapter from configuration: EventStoreDB when an esdb:// URL is given,
// otherwise the PostgreSQL event store in the read models' database. Always wrapped in schema
// validation, so no adapter can be reached without it.
import type { EventStore } from './event-store.js';
import type { Logger } from '../logger.js';
import { createEventStoreDbEventStore } from './eventstoredb-event-store.js';
import { createPostgresEventStore } from './postgres-event-store.js';
import { ValidatingEventStore, type EventSchemas } from './validating-event-store.js';

export interface EventStoreSettings {
  /** PostgreSQL connection string; its database must be migrated (migrateToLatest) before use. */
  readonly databaseUrl: string | null;
  /** EventStoreDB connection string (esdb:// or esdb+discover://); null selects PostgreSQL. */
  readonly eventStoreUrl: string | null;
  readonly schemas: EventSchemas;
  /** Where the EventStoreDB adapter reports the foreign (not JSON) events it passes over. */
  readonly logger?: Logger;
}

export function createEventStore(settings: EventStoreSettings): EventStore {
  return new ValidatingEventStore(createAdapter(settings), settings.schemas);
}

function createAdapter({ databaseUrl, eventStoreUrl, logger }: EventStoreSettings): EventStore {
  if (eventStoreUrl) {
    const scheme = /^([a-z+]+):\/\//i.exec(eventStoreUrl)?.[1]?.toLowerCase();
    if (scheme !== 'esdb' && scheme !== 'esdb+discover') {
      // The URL itself may hold credentials: name only its scheme.
      throw new Error(`the event store URL must use esdb:// or esdb+discover:// (got ${scheme ?? 'no scheme'})`);
    }
    return createEventStoreDbEventStore(eventStoreUrl, logger ? { logger } : {});
  }
  if (!databaseUrl) throw new Error('no event store configured: give a PostgreSQL URL or an esdb:// URL');
  return createPostgresEventStore(databaseUrl);
}
