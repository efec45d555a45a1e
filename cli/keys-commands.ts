// `npx guestpass keys ...`: rotation of the OAuth signing key and of the data key-encryption key.
import { ConfigError, type Config } from '../shared/config.js';
import { ConflictError } from '../shared/errors.js';
import { KeyEncryptionKeyError } from '../shared/oauth/key-encryption-key.js';
import { SigningKeyRotationConflict } from '../shared/oauth/signing-keys.js';
import { embeddedServerRunning, type Runtime } from '../runtime/runtime.js';
import { defaultBaseUrl } from '../runtime/base-url.js';
import { beginEmbeddedDataKekRotation, finishEmbeddedDataKekRotation } from '../runtime/data-kek.js';
import { noPositionals, parse, UsageError } from './cli-args.js';
import type { Result } from './cli-kit.js';

export async function keysCommand(runtime: Runtime, args: string[], config: Config): Promise<Result> {
  const [action, ...rest] = args;
  if (action === 'rotate-data-kek') return rotateDataKek(runtime, rest, config);
  if (action !== 'rotate') throw new UsageError('keys rotate|rotate-data-kek');
  noPositionals(parse(rest, {}).positionals);
  const { signingKeys } = await runtime.oauth(defaultBaseUrl(config, config.port));
  try {
    // Opening the current key first proves this KEK is the service's: a key sealed under another
    // one would leave the service unable to sign.
    await signingKeys.current();
  } catch (error) {
    if (!(error instanceof KeyEncryptionKeyError)) throw error;
    throw new ConfigError(`the key-encryption key does not open the current signing key (${error.message}); use the service's OAUTH_KEY_ENCRYPTION_KEY or GUESTPASS_DATA_DIR`);
  }
  let rotated: Awaited<ReturnType<typeof signingKeys.rotate>>;
  try {
    rotated = await signingKeys.rotate();
  } catch (error) {
    if (error instanceof SigningKeyRotationConflict) throw new ConflictError(error.message);
    throw error;
  }
  const retiresAt = rotated.retireAfter.toISOString();
  return {
    json: { kid: rotated.kid, previous_kid: rotated.previousKid, previous_retires_at: retiresAt },
    text:
      `signing key ${rotated.kid} now signs new tokens\n` +
      `previous key ${rotated.previousKid} stays in the JWKS until ${retiresAt}, when every token it signed has expired`,
  };
}

/**
 * Before the runtime opens (which rewraps under the ring it is given), the embedded default makes
 * a new data KEK current and keeps the old one as data-kek.previous. With DATA_KEY_ENCRYPTION_KEY
 * the operator has set the new key and moved the old one to DATA_KEY_ENCRYPTION_KEY_PREVIOUS.
 */
export async function prepareDataKekRotation(args: string[], config: Config): Promise<void> {
  noPositionals(parse(args, {}).positionals);
  if (config.dataKeyEncryptionKey) return;
  // A running service keeps wrapping new keys under the KEK it read at start, which this command
  // is about to retire: they would be lost with data-kek.previous.
  if (await embeddedServerRunning(config.dataDir)) {
    throw new ConfigError(`a running service uses the data folder ${config.dataDir}: stop it before rotating its data key-encryption key`);
  }
  await beginEmbeddedDataKekRotation(config.dataDir);
}

async function rotateDataKek(runtime: Runtime, args: string[], config: Config): Promise<Result> {
  noPositionals(parse(args, {}).positionals);
  const { ring, rewrappedOnOpen } = runtime.dataKeys;
  // Opening the runtime did the rewrap; a second pass catches keys other processes wrapped meanwhile.
  const { rewrapped } = await runtime.dataKeys.rewrapAll();
  if (!config.dataKeyEncryptionKey) await finishEmbeddedDataKekRotation(config.dataDir);
  const total = rewrappedOnOpen + rewrapped;
  return {
    json: { rewrapped: total, kek_id: ring.currentKekId },
    text:
      `${total} key${total === 1 ? '' : 's'} rewrapped: every data key and the contact search key are wrapped under the data key-encryption key ${ring.currentKekId}` +
      (config.dataKeyEncryptionKey && config.previousDataKeyEncryptionKeys.length > 0 ? '\nDATA_KEY_ENCRYPTION_KEY_PREVIOUS can be removed once every instance runs with this DATA_KEY_ENCRYPTION_KEY' : ''),
  };
}
