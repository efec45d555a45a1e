// Errors that only the HTTP layer raises (the domain never speaks of media types or methods).
// They extend the shared DomainError so the one error middleware renders them like the rest.
import { DomainError } from '../errors.js';

/** 415: a body endpoint was sent something other than JSON. */
export class UnsupportedMediaTypeError extends DomainError {
  readonly status = 415;
  readonly code = 'unsupported_media_type';
}
