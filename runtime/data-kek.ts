// The data key-encryption key ring of a process (shared/crypto/data-key-ring.ts):
// DATA_KEY_ENCRYPTION_KEY and DATA_KEY_ENCRYPTION_KEY_PREVIOUS, else (embedded default) a key
// generated once into the data folder, `data-kek` (mode 0600), beside `data-kek.previous` while a
// `keys rotate-data-kek` is under way.
import { existsSync } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../shared/config.js';
import { DataKeyRing } from '../shared/crypto/data-key-ring.js';
import { loadOrCreateKeyEncryptionKey, parseKeyEncryptionKey } from '../shared/oauth/key-encryption-key.js';

type DataKekConfig = Pick<Config, 'dataKeyEncryptionKey' | 'previousDataKeyEncryptionKeys' | 'dataDir'>;

export function dataKekFile(dataDir: string): string {
  return path.join(dataDir, 'data-kek');
}

export function previousDataKekFile(dataDir: string): string {
  return path.join(dataDir, 'data-kek.previous');
}

/** The ring of this configuration; the embedded default creates its KEK file on first use. */
export async function loadDataKeyRing(config: DataKekConfig): Promise<DataKeyRing> {
  if (config.dataKeyEncryptionKey) return new DataKeyRing(config.dataKeyEncryptionKey, config.previousDataKeyEncryptionKeys);
  const current = await loadOrCreateKeyEncryptionKey(dataKekFile(config.dataDir));
  const previous = [...config.previousDataKeyEncryptionKeys];
  // A rotation that stopped before its rewrap ended: the old key still opens what it wrapped.
  const previousFile = previousDataKekFile(config.dataDir);
  if (existsSync(previousFile)) previous.push(parseKeyEncryptionKey(await readFile(previousFile, 'utf8')));
  return new DataKeyRing(current, previous);
}

/**
 * Embedded default: makes a new KEK current, keeping the old one as `data-kek.previous` until
 * finishEmbeddedDataKekRotation(). An earlier rotation left unfinished is finished instead (under
 * the key it made), so a failed rotation is simply run again.
 */
export async function beginEmbeddedDataKekRotation(dataDir: string): Promise<void> {
  if (existsSync(previousDataKekFile(dataDir))) return;
  try {
    await rename(dataKekFile(dataDir), previousDataKekFile(dataDir));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await loadOrCreateKeyEncryptionKey(dataKekFile(dataDir));
}

/** After the rewrap: nothing is wrapped under the old key any more. */
export async function finishEmbeddedDataKekRotation(dataDir: string): Promise<void> {
  await rm(previousDataKekFile(dataDir), { force: true });
}
