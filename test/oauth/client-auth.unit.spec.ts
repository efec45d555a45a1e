import { expect } from 'chai';
import { authenticateClient, type FormParameters } from '../../shared/oauth/client-auth.js';
import { InvalidClient, InvalidRequest, type OAuthError } from '../../shared/oauth/oauth-errors.js';
import { CLIENT_SECRET, CONFIDENTIAL_CLIENT, PUBLIC_CLIENT, directory } from './oauth-fixtures.js';
import type { OAuthClient } from '../../shared/oauth/client-decider.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';

// A confidential client whose id and secret need RFC 6749 §2.3.1 form-urlencoding.
const ODD_SECRET = 'p@ss:w%rd +/=ü';
const ODD_CLIENT: OAuthClient = { ...CONFIDENTIAL_CLIENT, clientId: `svc_${'d'.repeat(32)}`, secretHash: sha256Hex(ODD_SECRET) };
const clients = directory(PUBLIC_CLIENT, CONFIDENTIAL_CLIENT, ODD_CLIENT);

const formEncode = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${formEncode(id)}:${formEncode(secret)}`, 'utf8').toString('base64')}`;
const rawBasic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

async function failure(authorization: string | undefined, body: FormParameters, options = {}): Promise<OAuthError> {
  try {
    await authenticateClient(authorization, body, clients, options);
  } catch (error) {
    return error as OAuthError;
  }
  throw new Error('expected client authentication to fail');
}

describe('client authentication', () => {
  describe('client_secret_basic', () => {
    it('authenticates a confidential client', async () => {
      const result = await authenticateClient(basic(CONFIDENTIAL_CLIENT.clientId, CLIENT_SECRET), {}, clients);
      expect(result).to.deep.equal({ client: CONFIDENTIAL_CLIENT, method: 'client_secret_basic' });
    });

    it('form-urlencodes id and secret before Basic encoding (RFC 6749 §2.3.1)', async () => {
      const result = await authenticateClient(basic(ODD_CLIENT.clientId, ODD_SECRET), {}, clients);
      expect(result.method).to.equal('client_secret_basic');
      // Sent without the form-urlencoding, the "+" becomes a space: a different secret.
      const error = await failure(rawBasic(`${ODD_CLIENT.clientId}:${ODD_SECRET}`), {});
      expect(error).to.be.instanceOf(InvalidClient);
    });

    it('accepts the scheme in any case and a matching client_id in the body', async () => {
      const header = basic(CONFIDENTIAL_CLIENT.clientId, CLIENT_SECRET).replace('Basic', 'bAsIc');
      const result = await authenticateClient(header, { client_id: CONFIDENTIAL_CLIENT.clientId }, clients);
      expect(result.method).to.equal('client_secret_basic');
    });

    it('a wrong secret is invalid_client, 401, with a Basic challenge', async () => {
      const error = await failure(basic(CONFIDENTIAL_CLIENT.clientId, `${CLIENT_SECRET}x`), {});
      expect(error).to.be.instanceOf(InvalidClient);
      expect(error.status).to.equal(401);
      expect((error as InvalidClient).challenge).to.match(/^Basic realm="guestpass"/);
    });

    it('an unknown client is the same invalid_client', async () => {
      const error = await failure(basic(`svc_${'e'.repeat(32)}`, CLIENT_SECRET), {});
      expect(error).to.be.instanceOf(InvalidClient);
      expect((error as InvalidClient).challenge).to.match(/^Basic/);
    });

    const malformed: Array<[string, string]> = [
      ['no credentials', 'Basic'],
      ['not base64', 'Basic !!!!'],
      ['base64 without padding', `Basic ${Buffer.from(`${CONFIDENTIAL_CLIENT.clientId}:x`).toString('base64').replace(/=+$/, '')}x`],
      ['no colon', rawBasic(CONFIDENTIAL_CLIENT.clientId)],
      ['an empty id', rawBasic(`:${CLIENT_SECRET}`)],
      ['bad percent-encoding', rawBasic(`${CONFIDENTIAL_CLIENT.clientId}:%zz`)],
      ['invalid UTF-8', `Basic ${Buffer.concat([Buffer.from(`${CONFIDENTIAL_CLIENT.clientId}:`), Buffer.from([0xff, 0xfe])]).toString('base64')}`],
      ['two tokens', `${basic(CONFIDENTIAL_CLIENT.clientId, CLIENT_SECRET)} extra`],
      ['another scheme', 'Bearer abc.def.ghi'],
      ['a malformed client id', basic('client', CLIENT_SECRET)],
    ];
    for (const [what, header] of malformed) {
      it(`${what} is invalid_client with a Basic challenge`, async () => {
        const error = await failure(header, {});
        expect(error).to.be.instanceOf(InvalidClient);
        expect((error as InvalidClient).challenge).to.match(/^Basic/);
      });
    }

    it('Basic and client_secret in the body at once is invalid_request (one method only)', async () => {
      const error = await failure(basic(CONFIDENTIAL_CLIENT.clientId, CLIENT_SECRET), { client_secret: CLIENT_SECRET });
      expect(error).to.be.instanceOf(InvalidRequest);
    });

    it('a body client_id that differs from Basic is invalid_request', async () => {
      const error = await failure(basic(CONFIDENTIAL_CLIENT.clientId, CLIENT_SECRET), { client_id: PUBLIC_CLIENT.clientId });
      expect(error).to.be.instanceOf(InvalidRequest);
    });
  });

  describe('client_secret_post', () => {
    it('authenticates a confidential client', async () => {
      const result = await authenticateClient(undefined, { client_id: CONFIDENTIAL_CLIENT.clientId, client_secret: CLIENT_SECRET }, clients);
      expect(result).to.deep.equal({ client: CONFIDENTIAL_CLIENT, method: 'client_secret_post' });
    });

    it('a wrong secret is invalid_client without a challenge', async () => {
      const error = await failure(undefined, { client_id: CONFIDENTIAL_CLIENT.clientId, client_secret: 'nope' });
      expect(error).to.be.instanceOf(InvalidClient);
      expect((error as InvalidClient).challenge).to.equal(null);
    });

    it('repeated client_id or client_secret is invalid_request', async () => {
      expect(await failure(undefined, { client_id: [CONFIDENTIAL_CLIENT.clientId, CONFIDENTIAL_CLIENT.clientId], client_secret: CLIENT_SECRET })).to.be.instanceOf(InvalidRequest);
      expect(await failure(undefined, { client_id: CONFIDENTIAL_CLIENT.clientId, client_secret: [CLIENT_SECRET, CLIENT_SECRET] })).to.be.instanceOf(InvalidRequest);
    });
  });

  describe('public clients (none)', () => {
    it('identify with client_id alone', async () => {
      expect(await authenticateClient(undefined, { client_id: PUBLIC_CLIENT.clientId }, clients)).to.deep.equal({ client: PUBLIC_CLIENT, method: 'none' });
    });

    it('may identify through Basic with an empty password', async () => {
      expect((await authenticateClient(rawBasic(`${PUBLIC_CLIENT.clientId}:`), {}, clients)).method).to.equal('none');
    });

    it('presenting a secret is invalid_client (a public client has none)', async () => {
      expect(await failure(undefined, { client_id: PUBLIC_CLIENT.clientId, client_secret: 'anything' })).to.be.instanceOf(InvalidClient);
      expect(await failure(basic(PUBLIC_CLIENT.clientId, 'anything'), {})).to.be.instanceOf(InvalidClient);
    });

    it('are refused where only confidential clients may come (introspection)', async () => {
      expect(await failure(undefined, { client_id: PUBLIC_CLIENT.clientId }, { confidentialOnly: true })).to.be.instanceOf(InvalidClient);
    });
  });

  describe('no or incomplete authentication', () => {
    it('no client at all is invalid_client', async () => {
      expect(await failure(undefined, {})).to.be.instanceOf(InvalidClient);
      expect(await failure(undefined, { client_id: '' })).to.be.instanceOf(InvalidClient);
      expect(await failure('   ', {})).to.be.instanceOf(InvalidClient);
    });

    it('a confidential client without its secret is invalid_client', async () => {
      expect(await failure(undefined, { client_id: CONFIDENTIAL_CLIENT.clientId })).to.be.instanceOf(InvalidClient);
      expect(await failure(undefined, { client_id: CONFIDENTIAL_CLIENT.clientId, client_secret: '' })).to.be.instanceOf(InvalidClient);
      expect(await failure(rawBasic(`${CONFIDENTIAL_CLIENT.clientId}:`), {})).to.be.instanceOf(InvalidClient);
    });

    it('an unknown or malformed client_id is invalid_client', async () => {
      expect(await failure(undefined, { client_id: `svc_${'e'.repeat(32)}` })).to.be.instanceOf(InvalidClient);
      expect(await failure(undefined, { client_id: 'svc_sk_secret' })).to.be.instanceOf(InvalidClient);
    });
  });
});
