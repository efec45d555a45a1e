import { expect } from 'chai';
import { Ajv, type ValidateFunction } from 'ajv';
import type { EventStore, NewEvent } from '../../shared/event-store/event-store.js';
import { createPostgresEventStore } from '../../shared/event-store/postgres-event-store.js';
import { InvalidEventError, ValidatingEventStore, type EventSchemas } from '../../shared/event-store/validating-event-store.js';
import { migratedDatabaseUrl } from '../support/database.js';
import { Collector, eventually, newEvent, sleep, uniqueStream } from './contract.js';

// A tiny catalogue: GuestNamed v1 had one `name`; v2 splits it into first and last name.
const ajv = new Ajv({ allErrors: true });
const validators: Record<string, Record<number, ValidateFunction>> = {
  GuestNamed: {
    1: ajv.compile({
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: { name: { type: 'string', minLength: 1 } },
    }),
    2: ajv.compile({
      type: 'object',
      additionalProperties: false,
      required: ['firstName', 'lastName'],
      properties: { firstName: { type: 'string', minLength: 1 }, lastName: { type: ['string', 'null'] } },
    }),
  },
};

const schemas: EventSchemas = {
  validate(type, version, data) {
    const validate = validators[type]?.[version];
    if (!validate) throw new Error(`unknown event type ${type} v${version}`);
    if (!validate(data)) throw new Error(ajv.errorsText(validate.errors, { dataVar: 'data' }));
  },
  upcast(type, version, data) {
    if (type === 'GuestNamed' && version === 1) {
      const [firstName, ...rest] = (data as { name: string }).name.split(' ');
      return { schemaVersion: 2, data: { firstName, lastName: rest.length ? rest.join(' ') : null } };
    }
    return { schemaVersion: version, data };
  },
};

function guestNamed(data: unknown, schemaVersion = 2): NewEvent {
  const event = newEvent('GuestNamed', data);
  return { ...event, metadata: { ...event.metadata, schemaVersion } };
}

async function expectInvalid(operation: Promise<unknown>, details: Partial<InvalidEventError>): Promise<InvalidEventError> {
  try {
    await operation;
  } catch (error) {
    expect(error).to.be.instanceOf(InvalidEventError);
    expect(error).to.include(details);
    return error as InvalidEventError;
  }
  expect.fail('expected an InvalidEventError');
}

describe('validating event store (schemas checked on append and read, old versions upcast)', function () {
  this.timeout(30_000);
  let url = '';
  let raw: EventStore; // the same database without validation: writes what an old version (or a bug) wrote
  let store: ValidatingEventStore;

  before(async () => {
    url = await migratedDatabaseUrl('validating');
  });

  beforeEach(() => {
    raw = createPostgresEventStore(url);
    store = new ValidatingEventStore(createPostgresEventStore(url), schemas);
  });

  afterEach(async () => {
    await Promise.all([raw.close(), store.close()]);
  });

  it('appends and reads back valid events of the current version unchanged', async () => {
    const stream = uniqueStream();
    const event = guestNamed({ firstName: 'Ada', lastName: 'Lovelace' });
    await store.appendToStream(stream, [event], 'no_stream');
    const [read] = await store.readStream(stream);
    expect(read!.data).to.deep.equal(event.data);
    expect(read!.metadata).to.deep.equal(event.metadata);
  });

  it('rejects an append with an invalid event and writes none of the batch', async () => {
    const stream = uniqueStream();
    const good = guestNamed({ firstName: 'Ada', lastName: null });
    const bad = guestNamed({ firstName: '', lastName: null, extra: true });
    const error = await expectInvalid(store.appendToStream(stream, [good, bad], 'any'), {
      operation: 'append',
      eventId: bad.id,
      eventType: 'GuestNamed',
      schemaVersion: 2,
      streamName: stream,
    });
    expect(error.message).to.match(/data\/firstName must NOT have fewer than 1 characters/);
    expect(error.message).to.match(/must NOT have additional properties/);
    expect(await raw.readStream(stream)).to.deep.equal([]);
  });

  it('rejects unknown types and missing or malformed schema versions', async () => {
    const stream = uniqueStream();
    await expectInvalid(store.appendToStream(stream, [newEvent('NoSuchEvent', {})], 'any'), { eventType: 'NoSuchEvent' });
    await expectInvalid(store.appendToStream(stream, [guestNamed({ firstName: 'A', lastName: null }, 7)], 'any'), {
      schemaVersion: 7,
    });
    const noVersion = guestNamed({ firstName: 'A', lastName: null });
    const { schemaVersion: _dropped, ...metadata } = noVersion.metadata;
    const error = await expectInvalid(
      store.appendToStream(stream, [{ ...noVersion, metadata: metadata as NewEvent['metadata'] }], 'any'),
      { operation: 'append' },
    );
    expect(error.message).to.match(/schemaVersion must be an integer/);
    expect(await raw.readStream(stream)).to.deep.equal([]);
  });

  it('upcasts events stored with an old schema version on every read path', async () => {
    const stream = uniqueStream();
    const head = await store.headPosition();
    const old = guestNamed({ name: 'Grace Brewster Hopper' }, 1);
    await raw.appendToStream(stream, [old], 'no_stream');
    const expected = { firstName: 'Grace', lastName: 'Brewster Hopper' };

    const [fromStream] = await store.readStream(stream);
    expect(fromStream!.data).to.deep.equal(expected);
    expect(fromStream!.metadata.schemaVersion).to.equal(2);
    expect(fromStream!.metadata.correlationId).to.equal(old.metadata.correlationId);

    const [fromAll] = (await store.readAll({ after: head })).filter((e) => e.streamName === stream);
    expect(fromAll!.data).to.deep.equal(expected);

    const collector = new Collector((s) => s === stream);
    store.subscribeToAll({ after: head, onEvents: collector.onEvents });
    await eventually(() => collector.events.length === 1, 10_000, 'the upcast event');
    expect(collector.events[0]!.data).to.deep.equal(expected);
    expect(collector.events[0]!.metadata.schemaVersion).to.equal(2);

    // The log itself is never rewritten.
    expect((await raw.readStream(stream))[0]!.data).to.deep.equal(old.data);
  });

  it('refuses to read a stored event that does not match its schema', async () => {
    const stream = uniqueStream();
    const head = await store.headPosition();
    const corrupt = guestNamed({ name: 42 }, 1);
    await raw.appendToStream(stream, [corrupt], 'no_stream');
    await expectInvalid(store.readStream(stream), { operation: 'read', eventId: corrupt.id, schemaVersion: 1 });
    await expectInvalid(store.readAll({ after: head }), { operation: 'read', eventId: corrupt.id });
  });

  it('ends a subscription at an invalid event before the handler sees it, reporting why', async () => {
    const stream = uniqueStream();
    const head = await store.headPosition();
    const valid = guestNamed({ firstName: 'Ada', lastName: null });
    await store.appendToStream(stream, [valid], 'no_stream');
    const corrupt = guestNamed({ firstName: 7 });
    await raw.appendToStream(stream, [corrupt], 0);

    const delivered: string[] = [];
    const errors: unknown[] = [];
    store.subscribeToAll({
      after: head,
      batchSize: 1,
      onEvents: async (events) => {
        delivered.push(...events.filter((e) => e.streamName === stream).map((e) => e.id));
      },
      onError: (error) => errors.push(error),
    });
    await eventually(() => errors.length === 1, 10_000, 'the error report');
    await sleep(300);
    expect(delivered).to.deep.equal([valid.id]);
    expect(errors[0]).to.be.instanceOf(InvalidEventError);
    expect(errors).to.have.length(1);
  });
});
