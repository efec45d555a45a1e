import { expect } from 'chai';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import { ValidatingEventStore, type EventSchemas } from '../../shared/event-store/validating-event-store.js';

// Building a store opens no connection (both clients connect on first use), so this needs no server.
const schemas: EventSchemas = {
  validate: () => undefined,
  upcast: (_type, schemaVersion, data) => ({ schemaVersion, data }),
};

describe('createEventStore', () => {
  it('selects PostgreSQL without an event store URL, wrapped in validation', async () => {
    const store = createEventStore({ databaseUrl: 'postgres://user:pw@127.0.0.1:1/none', eventStoreUrl: null, schemas });
    expect(store).to.be.instanceOf(ValidatingEventStore);
    await store.close();
  });

  it('selects EventStoreDB for an esdb:// URL, wrapped in validation', async () => {
    const store = createEventStore({ databaseUrl: null, eventStoreUrl: 'esdb://127.0.0.1:1?tls=false', schemas });
    expect(store).to.be.instanceOf(ValidatingEventStore);
    await store.close();
  });

  it('refuses another scheme without echoing the URL, which may hold credentials', () => {
    expect(() => createEventStore({ databaseUrl: null, eventStoreUrl: 'http://admin:s3cret@host:2113', schemas }))
      .to.throw(/esdb:\/\/.*got http/)
      .with.property('message')
      .that.does.not.include('s3cret');
  });

  it('refuses to start with no store configured', () => {
    expect(() => createEventStore({ databaseUrl: null, eventStoreUrl: null, schemas })).to.throw(/no event store configured/);
  });
});
