// The service's public address when PUBLIC_BASE_URL is not set. Its own module so the query
// service can take it without the runtime that builds the command side's ports.
import type { Config } from '../shared/config.js';

/** The issuer when no PUBLIC_BASE_URL is set: this process's own address. */
export function defaultBaseUrl(config: Pick<Config, 'publicBaseUrl' | 'host'>, port: number): string {
  return config.publicBaseUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
}
