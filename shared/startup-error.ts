// What a process that could not start prints: one line a newcomer can act on, never a stack trace.
// The causes a person at a terminal can make themselves (a port in use, a folder they cannot
// write, a malformed variable) are named with what to do; anything else is its message alone.
import { ConfigError } from './config.js';

interface SystemError extends Error {
  readonly code?: string;
  readonly syscall?: string;
  readonly address?: string;
  readonly port?: number;
  readonly path?: string;
}

export function describeStartupError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error instanceof ConfigError) return `${error.message} (fix the variable, or unset it for the default; README lists them all)`;
  const { code, syscall, address, port, path } = error as SystemError;
  if (code === 'EADDRINUSE' && syscall === 'listen') {
    return `port ${port ?? '?'} on ${address ?? 'this host'} is already in use: stop what listens there, or set PORT to a free port`;
  }
  if (code === 'EADDRNOTAVAIL' && syscall === 'listen') return `${address ?? 'HOST'} is not an address of this machine: set HOST to one of its addresses (127.0.0.1 by default)`;
  if ((code === 'EACCES' || code === 'EPERM') && syscall === 'listen') {
    return `this user may not listen on port ${port ?? '?'}: use a port above 1023 (set PORT)`;
  }
  if ((code === 'EACCES' || code === 'EPERM' || code === 'EROFS') && path) {
    return `cannot write ${path}: give this user write access to the data folder, or set GUESTPASS_DATA_DIR to one it can write`;
  }
  return error.message;
}
