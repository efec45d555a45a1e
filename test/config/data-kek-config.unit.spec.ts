// DATA_KEY_ENCRYPTION_KEY and DATA_KEY_ENCRYPTION_KEY_PREVIOUS (shared/config.ts): parsed like
// OAUTH_KEY_ENCRYPTION_KEY; a malformed value names its variable, never the value.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).to.be.instanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('data key-encryption key configuration', () => {
  const a = Buffer.alloc(32, 1);
  const b = Buffer.alloc(32, 2);
  const c = Buffer.alloc(32, 3);

  it('defaults to the embedded key (null) and no previous keys', () => {
    const config = loadConfig({});
    expect(config.dataKeyEncryptionKey).to.equal(null);
    expect(config.previousDataKeyEncryptionKeys).to.deep.equal([]);
    expect(loadConfig({ DATA_KEY_ENCRYPTION_KEY: '  ', DATA_KEY_ENCRYPTION_KEY_PREVIOUS: '' }).dataKeyEncryptionKey).to.equal(null);
  });

  it('reads 64 hex digits or base64url', () => {
    expect(loadConfig({ DATA_KEY_ENCRYPTION_KEY: a.toString('hex') }).dataKeyEncryptionKey).to.deep.equal(a);
    expect(loadConfig({ DATA_KEY_ENCRYPTION_KEY: ` ${a.toString('base64url')}\n` }).dataKeyEncryptionKey).to.deep.equal(a);
  });

  it('reads the previous keys as a comma-separated list, each in either form', () => {
    const config = loadConfig({ DATA_KEY_ENCRYPTION_KEY: a.toString('hex'), DATA_KEY_ENCRYPTION_KEY_PREVIOUS: `${b.toString('hex')}, ${c.toString('base64url')}` });
    expect(config.previousDataKeyEncryptionKeys).to.deep.equal([b, c]);
  });

  it('refuses a malformed key, naming the variable and never the value', () => {
    const short = Buffer.alloc(16, 4).toString('hex');
    const error = configError({ DATA_KEY_ENCRYPTION_KEY: short });
    expect(error.message).to.include('DATA_KEY_ENCRYPTION_KEY').and.not.to.include(short);
    const previous = configError({ DATA_KEY_ENCRYPTION_KEY_PREVIOUS: `${b.toString('hex')},not-a-key-${short}` });
    expect(previous.message).to.include('DATA_KEY_ENCRYPTION_KEY_PREVIOUS').and.to.include('entry 2').and.not.to.include(short);
    expect(configError({ DATA_KEY_ENCRYPTION_KEY_PREVIOUS: `${b.toString('hex')},,` }).message).to.include('entry 2');
  });
});
