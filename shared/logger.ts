import { pino, type Logger } from 'pino';

export type { Logger };

/** Paths whose values never reach a log line, wherever they appear in a logged object. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.api_key',
  '*.apiKey',
  '*.client_secret',
  '*.clientSecret',
  '*.secret',
  '*.token',
  '*.id_token_hint',
  '*.refresh_token',
  '*.access_token',
  '*.id_token',
  '*.code',
  '*.code_verifier',
  '*.qr_value',
  '*.qr_values',
  // PostgreSQL errors quote the row values they refuse in `detail` (`Key (email)=(...) already exists`).
  'err.detail',
  'err.cause.detail',
];

export function createLogger(level = 'info', name = 'guestpass'): Logger {
  return pino({ name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } });
}
