import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';

export type { Logger };

/** `json` for machines (the default off a terminal and in containers); `pretty` for a person at a terminal. */
export type LogFormat = 'json' | 'pretty';

export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** Readable lines on a terminal, JSON anywhere else (a pipe, a file, a container's log driver). */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stdout): LogFormat {
  return stream.isTTY ? 'pretty' : 'json';
}

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

/** `destination` (stdout when absent) is for tests that read the lines. */
export function createLogger(level = 'info', name = 'guestpass', format: LogFormat = 'json', destination?: NodeJS.WritableStream): Logger {
  const options = { name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  if (format === 'json') return destination ? pino(options, destination) : pino(options);
  // Written in this thread and synchronously, so a line is on the terminal before the banner or an exit.
  // The redaction above runs before the formatting, so a pretty line hides what a JSON line hides.
  const pretty = pinoPretty({
    sync: true,
    ...(destination ? { destination, colorize: false } : { colorize: Boolean(process.stdout.isTTY) }),
    translateTime: 'SYS:HH:MM:ss.l',
    // The process is the terminal's own; the component (door-gateway, a reactor) leads the message.
    ignore: 'pid,hostname,name,component',
    messageFormat: '{if component}{component}: {end}{msg}',
    singleLine: true,
    errorLikeObjectKeys: ['err', 'error'],
  });
  return pino(options, pretty);
}
