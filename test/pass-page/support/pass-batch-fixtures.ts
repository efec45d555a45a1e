// Batches for the pass page suites, made through the organization API (POST /api/v1/org/passes)
// as a backend would, and the page link of each. The link is the 201's `pass_link` when the
// service returns one; until then it is recovered the way the delivery reactor would read it:
// the token sealed with the guest in the batch's first PassCreated.
import { expect } from 'chai';
import type { Stack, Tenant } from '../../support/stack.js';
import { passBody } from '../../support/stack.js';
import { READ_MODELS } from '../../../shared/db/read-models.js';
import { open } from '../../../shared/crypto/sealed-box.js';
import type { GuestDetails, PassCreated } from '../../../shared/domain/events.js';

export interface CreatedBatch {
  /** `/p/{token}` */
  readonly path: string;
  readonly token: string;
  readonly batchId: string;
  /** In creation order, as the 201 gave them. */
  readonly qrValues: readonly string[];
  /** In creation order. */
  readonly publicIds: readonly string[];
}

/** Waits until pass_batches has applied everything in the log (the create waits for pass_list only). */
export async function passBatchesCaughtUp(stack: Stack): Promise<void> {
  const reached = await stack.deps.watermark.waitFor(await stack.store.headPosition(), 10_000, [READ_MODELS.passBatches]);
  expect(reached, 'pass_batches caught up').to.equal(true);
}

/** The page token sealed with the guest of `batchId`. */
export async function sealedPassLinkToken(stack: Stack, batchId: string): Promise<string> {
  const row = await stack.db(READ_MODELS.passBatches).where({ batch_id: batchId }).first('stream_name', 'stream_revision');
  const [event] = await stack.store.readStream(row.stream_name, { fromRevision: row.stream_revision, maxCount: 1 });
  const sealed = (event!.data as PassCreated['data']).guest;
  const key = (await stack.deps.subjectKeys.getMany([sealed.keyId])).get(sealed.keyId)!;
  const token = open<GuestDetails>(key, sealed).passLinkToken;
  if (token === undefined) throw new Error('the batch has no pass page token');
  return token;
}

export async function createBatch(stack: Stack, tenant: Tenant, overrides: Record<string, unknown> = {}): Promise<CreatedBatch> {
  const res = await stack.request('POST', '/api/v1/org/passes', { apiKey: tenant.apiKey, json: passBody(tenant.facilityId, { quantity: 3, ...overrides }) });
  expect(res.status, res.text).to.equal(201);
  const rows = await stack.db(READ_MODELS.passList)
    .where({ batch_id: stack.db(READ_MODELS.passList).where({ public_id: res.body.public_id }).select('batch_id') })
    .orderBy('pass_id')
    .select('public_id', 'batch_id');
  await passBatchesCaughtUp(stack);
  const batchId: string = rows[0].batch_id;
  const link: string | null = res.body.pass_link;
  const token = link !== null ? new URL(link).pathname.replace(/^\/p\//, '') : await sealedPassLinkToken(stack, batchId);
  return { path: `/p/${token}`, token, batchId, qrValues: res.body.qr_values, publicIds: rows.map((r: { public_id: string }) => r.public_id) };
}
