// A logger that writes to memory with the service's redaction, for suites that check what a
// stack logs and, above all, what it never logs.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { REDACTED_PATHS, type Logger } from '../../shared/logger.js';

export function capturedLogger(): { logger: Logger; text(): string } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const logger = pino({ level: 'debug', redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
  return { logger, text: () => lines.join('') };
}
