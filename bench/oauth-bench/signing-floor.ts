// The physical floor of the token endpoints: how many RS256 signatures (and verifications) jose
// makes per second, measured with the service's own code: a key from generateSigningKey (2048-bit
// RSA, imported as the service imports it), access tokens minted by mintAccessToken (jose
// SignJWT) and verified by verifyAccessToken (jose jwtVerify over the local key set).
//
// "One core": one operation at a time, awaited, as one request's signatures are. jose signs with
// WebCrypto, which runs the RSA operation on libuv's thread pool, so a process with several
// operations in flight can use more than one core: the parallel figure shows what all cores give.
import { randomBytes, randomUUID } from 'node:crypto';
import { generateSigningKey, type ActiveSigningKey } from '../../shared/oauth/signing-keys.js';
import { localKeySet, mintAccessToken, verifyAccessToken } from '../../shared/oauth/tokens.js';

export interface OperationRate {
  /** Operations per second, one at a time. */
  readonly perSecond: number;
  /** CPU of the process per operation, milliseconds (all threads). */
  readonly cpuMs: number;
  /** Operations per second with `parallel` in flight (every core). */
  readonly parallelPerSecond: number;
  readonly parallel: number;
}

export interface SigningFloor {
  readonly sign: OperationRate;
  readonly verify: OperationRate;
}

async function rate(operation: () => Promise<unknown>, ms: number, parallel: number): Promise<OperationRate> {
  const measure = async (inFlight: number) => {
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let count = 0;
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (performance.now() - started < ms) {
          await operation();
          count++;
        }
      }),
    );
    const elapsed = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    return { perSecond: (count * 1000) / elapsed, cpuMs: (cpu.user + cpu.system) / 1000 / count };
  };
  await measure(1); // warm-up (JIT, key import caches)
  const one = await measure(1);
  const all = await measure(parallel);
  return { perSecond: one.perSecond, cpuMs: one.cpuMs, parallelPerSecond: all.perSecond, parallel };
}

export async function measureSigningFloor(options: { ms: number; parallel: number }): Promise<SigningFloor> {
  const { key, record } = await generateSigningKey(randomBytes(32), new Date());
  const issuer = 'http://127.0.0.1:1';
  const audience = `${issuer}/api`;
  const mint = (signingKey: ActiveSigningKey) =>
    mintAccessToken(signingKey, {
      issuer,
      audience,
      subject: '12345',
      clientId: `svc_${randomBytes(16).toString('hex')}`,
      scopes: ['openid', 'offline_access'],
      familyId: randomBytes(16).toString('hex'),
      now: new Date(),
      jti: randomUUID(),
    });
  const sign = await rate(() => mint(key), options.ms, options.parallel);
  const token = (await mint(key)).token;
  const keys = localKeySet({ keys: [record.publicJwk] });
  const verify = await rate(() => verifyAccessToken(token, keys, { issuer, audience }), options.ms, options.parallel);
  return { sign, verify };
}
