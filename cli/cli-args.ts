// Argument parsing for the operator CLI: node's parseArgs plus the checks every command shares.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type Options = NonNullable<ParseArgsConfig['options']>;

export function parse(args: string[], options: Options) {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function optional(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

export function integerArg(text: string, name: string, min = 1): number {
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`${name} must be a whole number`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${name} must be at least ${min}`);
  return n;
}

export function list(values: Record<string, unknown>, name: string): string[] {
  const value = values[name];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}
