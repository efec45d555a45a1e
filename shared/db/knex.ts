import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { NO_JIT } from './pg-pool.js';

// int8 columns (counts, positions, numeric ids) come back as JS numbers where they fit safely.
pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
});

export type { Knex };

export function createKnex(connectionString: string, pool: { min?: number; max?: number } = {}): Knex {
  return knexFactory({
    client: 'pg',
    // An error's message keeps the statement with its placeholders, never the bound values
    // (emails, names, search terms) that it would otherwise carry into every log line.
    compileSqlOnError: false,
    connection: { connectionString, options: NO_JIT },
    pool: { min: pool.min ?? 0, max: pool.max ?? 10 },
    // knex writes every failed connect (with its stack) and every broken pooled connection to the
    // console: a line per request while the database is down. The error reaches its caller
    // anyway, and the service logs an outage once (shared/outage/); knex's other warnings show.
    log: {
      warn(message: string) {
        if (!/^(Acquire connection error|Connection Error): /.test(message)) console.warn(message);
      },
    },
  });
}

/** The connection string a knex of createKnex connects with, for a connection of another thread. */
export function connectionStringOf(knex: Knex): string {
  const connection = (knex.client as { config: { connection?: unknown } }).config.connection as { connectionString?: unknown } | undefined;
  if (typeof connection?.connectionString !== 'string') throw new Error('this knex was not made by createKnex: no connection string');
  return connection.connectionString;
}
