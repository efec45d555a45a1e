// Argument parsing for the operator CLI: node's parseArgs plus the checks every command shares.
import { parseArgs, type ParseArgsConfig } from 'node:util';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type Options = NonNullable<ParseArgsConfig['options']>;

export function parse(args: string[], options: Options) {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** Every command takes only the words it names: an extra one (an unquoted `--name Acme Corp`) is refused, not dropped. */
export function noPositionals(positionals: readonly string[]): void {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}" (quote a value that holds spaces)`);
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

/** A parseArgs token, typed loosely: the options of `parse` are not known statically. */
interface ArgToken {
  readonly kind: string;
  readonly name?: string;
  readonly value?: string | boolean | undefined;
}

/**
 * The values of a repeatable list option, each occurrence holding one or more items separated by
 * spaces or commas (`--scopes "openid profile"`, `--scopes openid,profile`, `--scopes openid
 * --scopes profile`); bare words right after it count too (`--scopes openid profile`), as the
 * shell splits an unquoted list. `rest` holds the positionals that belong to no list.
 */
export function spreadList(parsed: { readonly tokens: readonly ArgToken[] }, name: string): { items: string[]; rest: string[] } {
  const items: string[] = [];
  const rest: string[] = [];
  let inList = false;
  for (const token of parsed.tokens) {
    if (token.kind === 'option') {
      inList = token.name === name;
      if (inList && typeof token.value === 'string') items.push(token.value);
    } else if (token.kind === 'positional' && typeof token.value === 'string') {
      (inList ? items : rest).push(token.value);
    } else {
      inList = false;
    }
  }
  return { items: items.flatMap((item) => item.split(/[\s,]+/)).filter(Boolean), rest };
}
