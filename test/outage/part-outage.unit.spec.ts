// The outage classifier over the errors the drivers really throw (their own error classes, built
// here without I/O): each part down is named, and what is not an outage (a bug, a refusal, a
// constraint) stays null, so it is still a 500 or its own 4xx.
import { expect } from 'chai';
import pg from 'pg';
import { KafkaJSConnectionError, KafkaJSNonRetriableError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, KafkaJSRequestTimeoutError } from 'kafkajs';
import { ReplyError } from 'ioredis';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors/index.js';
import knex from 'knex';
import { ErrorWithReasonCode } from 'mqtt';
import { UnavailableError, DeadlineExceededError } from '@eventstore/db-client';
import { classifyOutage, partEndpoints } from '../../shared/outage/part-outage.js';
import { OutageLog } from '../../shared/outage/outage-log.js';

function pgError(code: string, message = 'server said so'): Error {
  const error = new pg.DatabaseError(message, message.length, 'error');
  error.code = code;
  error.severity = 'FATAL';
  return error;
}

function socketError(code: string, port: number): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:${port}`), { code, errno: -111, syscall: 'connect', address: '127.0.0.1', port });
}

describe('classifyOutage: which part an error says is down', () => {
  describe('PostgreSQL (pg, knex)', () => {
    for (const [code, what] of [
      ['57P01', 'admin_shutdown: a fast stop ends the session'],
      ['57P02', 'crash_shutdown: another backend crashed'],
      ['57P03', 'cannot_connect_now: starting up or in crash recovery'],
      ['08006', 'connection_failure'],
      ['08001', 'sqlclient_unable_to_establish_sqlconnection'],
      ['08P01', 'protocol_violation (class 08)'],
      ['53300', 'too_many_connections'],
    ] as const) {
      it(`${code} (${what}) is the database`, () => {
        expect(classifyOutage(pgError(code))).to.deep.equal({ part: 'database', reason: code });
      });
    }
    it('a broken connection ("Connection terminated unexpectedly", pg) is the database', () => {
      expect(classifyOutage(new Error('Connection terminated unexpectedly'))).to.deep.equal({ part: 'database', reason: 'connection_terminated' });
      expect(classifyOutage(new Error('Connection terminated'))).to.deep.equal({ part: 'database', reason: 'connection_terminated' });
      expect(classifyOutage(new Error('Client has encountered a connection error and is not queryable'))?.part).to.equal('database');
    });
    it("knex's pool time-out is the database", () => {
      expect(classifyOutage(new knex.KnexTimeoutError('Knex: Timeout acquiring a connection. The pool is probably full.'))).to.deep.equal({ part: 'database', reason: 'pool_timeout' });
    });
    it('a refused connect to the configured database port is the database; to an unknown port, the network', () => {
      const endpoints = partEndpoints({ databaseUrl: 'postgres://u:p@db:6543/x', eventStoreUrl: null, kafkaBrokers: ['k1:9092', 'k2:19092'], mqttUrl: 'mqtt://m', redisUrl: 'redis://r:6380' });
      expect(classifyOutage(socketError('ECONNREFUSED', 6543), endpoints)).to.deep.equal({ part: 'database', reason: 'ECONNREFUSED' });
      expect(classifyOutage(socketError('ECONNRESET', 6380), endpoints)).to.deep.equal({ part: 'redis', reason: 'ECONNRESET' });
      expect(classifyOutage(socketError('ETIMEDOUT', 19092), endpoints)?.part).to.equal('kafka');
      expect(classifyOutage(socketError('ECONNREFUSED', 1883), endpoints)?.part, 'mqtt:// without a port is 1883').to.equal('mqtt');
      expect(classifyOutage(socketError('ECONNREFUSED', 1234), endpoints)).to.deep.equal({ part: 'network', reason: 'ECONNREFUSED' });
    });
    it('finds the socket error inside an AggregateError (a connect to every address of a name) and a cause', () => {
      const aggregate = Object.assign(new AggregateError([socketError('ECONNREFUSED', 5432), socketError('ECONNREFUSED', 5432)], ''), { code: 'ECONNREFUSED' });
      expect(classifyOutage(aggregate, [{ part: 'database', port: 5432 }])?.part).to.equal('database');
      expect(classifyOutage(new Error('loading the stream failed', { cause: pgError('57P01') }))?.part).to.equal('database');
    });
    it('is not a constraint violation, a syntax error, a serialization failure or a bug', () => {
      expect(classifyOutage(pgError('23505', 'duplicate key value violates unique constraint'))).to.equal(null);
      expect(classifyOutage(pgError('42601', 'syntax error'))).to.equal(null);
      expect(classifyOutage(pgError('40001', 'could not serialize access'))).to.equal(null);
      expect(classifyOutage(new TypeError("Cannot read properties of undefined (reading 'id')"))).to.equal(null);
      expect(classifyOutage('a string')).to.equal(null);
      expect(classifyOutage(null)).to.equal(null);
    });
  });

  describe('Kafka (kafkajs)', () => {
    it('a connection error, a request time-out and retries exhausted are Kafka', () => {
      expect(classifyOutage(new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092'))).to.deep.equal({ part: 'kafka', reason: 'KafkaJSConnectionError' });
      expect(classifyOutage(new KafkaJSRequestTimeoutError('Request Metadata(key: 3, version: 6) timed out'))?.part).to.equal('kafka');
      expect(classifyOutage(new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('Connection error'), { retryCount: 5, retryTime: 1000 }))?.part).to.equal('kafka');
    });
    it('a retriable protocol error (a leader election) is Kafka; a non-retriable one only for its cause', () => {
      expect(classifyOutage(new KafkaJSProtocolError({ message: 'There is no leader for this topic-partition', type: 'LEADER_NOT_AVAILABLE', code: 5, retriable: true } as never))?.part).to.equal('kafka');
      expect(classifyOutage(new KafkaJSProtocolError({ message: 'Not authorized', type: 'TOPIC_AUTHORIZATION_FAILED', code: 29, retriable: false } as never))).to.equal(null);
      const connection = new KafkaJSConnectionError('Connection error');
      expect(classifyOutage(new (KafkaJSNonRetriableError as unknown as new (e: Error, o: { cause: Error }) => Error)(connection, { cause: connection }))?.part).to.equal('kafka');
      expect(classifyOutage(new KafkaJSNonRetriableError(new Error('Invalid message')))).to.equal(null);
    });
  });

  describe('Redis (ioredis)', () => {
    it('retries per request exhausted, a closed connection and a loading server are Redis', () => {
      expect(classifyOutage(new MaxRetriesPerRequestError(1))).to.deep.equal({ part: 'redis', reason: 'MaxRetriesPerRequestError' });
      expect(classifyOutage(new Error('Connection is closed.'))).to.deep.equal({ part: 'redis', reason: 'connection_closed' });
      expect(classifyOutage(new ReplyError('LOADING Redis is loading the dataset in memory'))).to.deep.equal({ part: 'redis', reason: 'LOADING' });
    });
    it('a command error is not', () => {
      expect(classifyOutage(new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'))).to.equal(null);
    });
  });

  describe('MQTT (mqtt.js)', () => {
    it('a closed connection and CONNACK 3 (server unavailable) are the MQTT broker', () => {
      expect(classifyOutage(new Error('Connection closed'))).to.deep.equal({ part: 'mqtt', reason: 'connection_closed' });
      expect(classifyOutage(new Error('client disconnecting'))?.part).to.equal('mqtt');
      expect(classifyOutage(new ErrorWithReasonCode('Connection refused: Server unavailable', 3))).to.deep.equal({ part: 'mqtt', reason: 'connack_3' });
    });
    it('a refused authorization is not an outage', () => {
      expect(classifyOutage(new ErrorWithReasonCode('Connection refused: Not authorized', 5))).to.equal(null);
    });
  });

  describe('EventStoreDB (@eventstore/db-client)', () => {
    it('an unavailable node and a deadline exceeded are the event store', () => {
      expect(classifyOutage(new UnavailableError({ code: 14, details: 'No connection established' } as never))?.part).to.equal('event_store');
      expect(classifyOutage(new DeadlineExceededError({ code: 4, details: 'Deadline exceeded' } as never))?.part).to.equal('event_store');
    });
  });

  it('leaves a remote HTTP server (fetch failed) alone: an upstream provider is not a part of ours', () => {
    const failed = new TypeError('fetch failed', { cause: socketError('ECONNREFUSED', 5432) });
    expect(classifyOutage(failed, [{ part: 'database', port: 5432 }])).to.equal(null);
  });

  it('stops at a cycle of causes', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(classifyOutage(a)).to.equal(null);
  });
});

describe('OutageLog: once per outage, not per request', () => {
  const db = { part: 'database', reason: 'ECONNREFUSED' } as const;
  it('logs the first request of an outage, then none while requests keep meeting it', () => {
    const log = new OutageLog(30_000);
    expect(log.note(db, 0)).to.equal(true);
    for (let t = 100; t < 60_000; t += 100) expect(log.note(db, t), `at ${t} ms`).to.equal(false);
    expect(log.unavailable(60_000)).to.deep.equal(['database']);
  });
  it('a part met again after a quiet period is a new outage; parts are apart', () => {
    const log = new OutageLog(30_000);
    expect(log.note(db, 0)).to.equal(true);
    expect(log.note({ part: 'redis', reason: 'connection_closed' }, 10)).to.equal(true);
    expect(log.note(db, 29_999)).to.equal(false);
    expect(log.unavailable(70_000)).to.deep.equal([]);
    expect(log.note(db, 60_000)).to.equal(true);
  });
});
