// Reading a posted console form, and turning a use case's refusal into errors on its fields.
import { ValidationError, DomainError } from '../shared/errors.js';
import type { FormFields } from '../command-service/sign-in/page-form.js';
import { capitalise } from './console-guard.js';

export function text(fields: FormFields, name: string): string {
  const value = fields[name];
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeated field (checkboxes). */
export function values(fields: FormFields, name: string): string[] {
  const value = fields[name];
  return value === undefined ? [] : Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [value as string];
}

/** One entry per non-empty line (redirect URIs, CIDR ranges). */
export function lines(textValue: string): string[] {
  return textValue
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** The message of a refusal as a person reads it: capitalised, with a ValidationError's details. */
export function refusalMessage(error: DomainError): string {
  const details = error instanceof ValidationError && error.details.length > 0 ? `: ${error.details.join('; ')}` : '';
  return capitalise(`${error.message}${details}`);
}

/**
 * The field a use case's refusal concerns, by the words of its message (the deciders' messages
 * name the thing they refuse); `fallback` when none matches.
 */
export function fieldOfRefusal(error: DomainError, rules: readonly (readonly [RegExp, string])[], fallback: string): string {
  for (const [pattern, name] of rules) if (pattern.test(error.message)) return name;
  return fallback;
}
