import { stopTestDatabases } from './database.js';

export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestDatabases();
}
