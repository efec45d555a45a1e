// Passwords are stored only as scrypt hashes in a self-describing string, so the cost can be
// raised later without breaking existing hashes:
//
//   $scrypt$ln=15,r=8,p=1$<salt base64url>$<hash base64url>
//
// ln is log2 of the CPU/memory cost N. 2^15 x 8 x 128 bytes = 32 MiB per hash, a few tens of ms.
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG_N = 15;
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export const MIN_PASSWORD_LENGTH = 8;
/** Bounds the work an attacker can make us do per attempt and still fits any passphrase. */
export const MAX_PASSWORD_LENGTH = 1024;

/** What a stored hash looks like; an event schema uses it so a raw password can never be appended. */
export const PASSWORD_HASH_PATTERN = '^\\$scrypt\\$ln=\\d{1,2},r=\\d{1,2},p=\\d{1,2}\\$[A-Za-z0-9_-]{16,}\\$[A-Za-z0-9_-]{32,}$';
const PARSE = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFKC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

function options(logN: number, r: number, p: number): ScryptOptions {
  const N = 2 ** logN;
  // Node refuses above 32 MiB by default; allow exactly what the parameters need plus headroom.
  return { N, r, p, maxmem: 128 * N * r * p + 4 * 1024 * 1024 };
}

export async function hashPassword(password: string): Promise<string> {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new RangeError(`password must be ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters`);
  }
  const salt = randomBytes(SALT_LENGTH);
  const hash = await scrypt(password, salt, KEY_LENGTH, options(LOG_N, BLOCK_SIZE, PARALLELISM));
  return `$scrypt$ln=${LOG_N},r=${BLOCK_SIZE},p=${PARALLELISM}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

/** Constant-time comparison; false (never an exception) for a malformed stored hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = PARSE.exec(stored);
  if (!m || password.length > MAX_PASSWORD_LENGTH) return false;
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (logN < 10 || logN > 20 || r < 1 || r > 16 || p < 1 || p > 4) return false;
  const salt = Buffer.from(m[4]!, 'base64url');
  const expected = Buffer.from(m[5]!, 'base64url');
  const actual = await scrypt(password, salt, expected.length, options(logN, r, p));
  return timingSafeEqual(actual, expected);
}
