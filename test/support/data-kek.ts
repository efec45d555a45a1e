// The one data key-encryption key of the test suite: every PostgresSubjectKeyStore a test builds
// wraps its keys under it, so any two stores (or processes) of a test open each other's keys.
import { DataKeyRing } from '../../shared/crypto/data-key-ring.js';

export const TEST_DATA_KEK = Buffer.alloc(32, 5);

/** DATA_KEY_ENCRYPTION_KEY's value for the test KEK (64 hex digits), for child processes and loadConfig. */
export const TEST_DATA_KEK_HEX = TEST_DATA_KEK.toString('hex');

export function testDataKeyRing(previous: readonly Buffer[] = []): DataKeyRing {
  return new DataKeyRing(TEST_DATA_KEK, previous);
}
