// Runs the contract against EventStoreDB when EVENTSTORE_URL names one (docker-compose, CI).
import { createEventStoreDbEventStore } from '../../shared/event-store/eventstoredb-event-store.js';
import { requireComponent, tcpReachable } from '../support/components.js';
import { runEventStoreContract } from './contract.js';

const url = process.env.EVENTSTORE_URL?.trim();

/** host:port of the first node of an esdb:// connection string, without credentials. */
function firstNode(connectionString: string): { host: string; port: number } {
  const hosts = connectionString.replace(/^[a-z+]+:\/\//i, '').replace(/^[^@/]*@/, '').split(/[/?]/)[0] ?? '';
  const [host, port] = (hosts.split(',')[0] ?? '').split(':');
  return { host: host || 'localhost', port: Number(port) || 2113 };
}

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
    const { host, port } = firstNode(url);
    requireComponent(this, 'EventStoreDB', await tcpReachable(host, port, 2000), `EVENTSTORE_URL at ${host}:${port}`);
  });

  runEventStoreContract('EventStoreDB', async () => createEventStoreDbEventStore(url));
});
