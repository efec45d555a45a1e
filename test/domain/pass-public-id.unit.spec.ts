// Pass public ids derive from the request that creates them (create-passes.ts): the same request
// makes the same ids, any other stream, request or place in the batch other ones.
import { expect } from 'chai';
import { passPublicId } from '../../command-service/passes/create-passes.js';
import { PASS_PUBLIC_ID_PATTERN } from '../../shared/domain/pass-constants.js';

describe('passPublicId', () => {
  const stream = 'guest-invites-7-2026-03';

  it('is gst_ and 32 lowercase hex digits, the same for the same stream, request and place', () => {
    const id = passPublicId(stream, 'b2c6f0d1e4a94c1f9d2e3f4a5b6c7d8e', 0);
    expect(id).to.match(new RegExp(PASS_PUBLIC_ID_PATTERN));
    expect(passPublicId(stream, 'b2c6f0d1e4a94c1f9d2e3f4a5b6c7d8e', 0)).to.equal(id);
  });

  it('differs with the stream (user or month), the request id and the place in the batch', () => {
    const ids = [
      passPublicId(stream, 'r1', 0),
      passPublicId(stream, 'r1', 1),
      passPublicId(stream, 'r2', 0),
      passPublicId('guest-invites-8-2026-03', 'r1', 0),
      passPublicId('guest-invites-7-2026-04', 'r1', 0),
      // The parts are separated: shifting characters between them is another id.
      passPublicId('guest-invites-7-2026-0', '3r1', 0),
      passPublicId(stream, 'r1', 10),
      passPublicId(stream, 'r11', 0),
    ];
    expect(new Set(ids).size).to.equal(ids.length);
  });
});
