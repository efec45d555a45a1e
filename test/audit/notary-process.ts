// A notary in a process of its own, for the SIGKILL test: DATABASE_URL, AUDIT_KEK (hex). Prints
// `ready` once it follows the log; heads every 200 ms while events arrive.
import { createKnex } from '../../shared/db/knex.js';
import { createEventStore } from '../../shared/event-store/create-event-store.js';
import { eventSchemas } from '../../shared/domain/event-schemas.js';
import { AuditNotary } from '../../projections/audit-notary.js';

const url = process.env.DATABASE_URL!;
const knex = createKnex(url, { max: 4 });
const store = createEventStore({ databaseUrl: url, eventStoreUrl: null, schemas: eventSchemas });
const notary = new AuditNotary({ store, knex, kek: Buffer.from(process.env.AUDIT_KEK!, 'hex'), headIntervalMs: 200, sampleEveryMs: 0, batchSize: 50 });
await notary.start();
process.stdout.write('ready\n');
