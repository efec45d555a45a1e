// What the protocol endpoints (token, introspect, revoke) are given: the one command handler for
// every append and stream read, and the authorization server's issuer, clients and keys.
import type { CommandHandler } from '../../shared/event-store/command-handler.js';
import type { OAuthServices } from '../../shared/oauth/oauth-services.js';

export interface ProtocolDeps {
  readonly handler: CommandHandler;
  readonly oauth: Pick<OAuthServices, 'issuer' | 'clients' | 'signingKeys' | 'verificationKeys'>;
}
