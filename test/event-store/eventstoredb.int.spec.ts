// Runs the contract against EventStoreDB when EVENTSTORE_URL names one (docker-compose, CI).
import { createEventStoreDbEventStore } from '../../shared/event-store/eventstoredb-event-store.js';
import { eventStoreDbNode, requireComponent, waitForEventStoreDb } from '../support/components.js';
import { runEventStoreContract } from './contract.js';

const url = process.env.EVENTSTORE_URL?.trim();

describe('EventStoreDB event store', function () {
  if (!url) {
    // Nothing to connect to: say so instead of passing silently.
    it('runs the event store contract against EventStoreDB (needs EVENTSTORE_URL, e.g. esdb://localhost:2113?tls=false)', function () {
      console.warn('  skipping: EVENTSTORE_URL is not set, so the contract did not run against EventStoreDB');
      this.skip();
    });
    return;
  }

  before(async function () {
    this.timeout(40_000);
    // The node's port accepts connections before the node serves: wait until it says it is live.
    const { host, port } = eventStoreDbNode(url);
    requireComponent(this, 'EventStoreDB', await waitForEventStoreDb(url, 30_000), `GET /health/live of EVENTSTORE_URL at ${host}:${port}`);
  });

  runEventStoreContract('EventStoreDB', async () => createEventStoreDbEventStore(url));
});
