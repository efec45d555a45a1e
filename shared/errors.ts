// Domain and protocol errors. Handlers throw these; one HTTP middleware renders them.

export abstract class DomainError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** 400: the request is malformed or breaks a validation rule. */
export class ValidationError extends DomainError {
  readonly status = 400;
  readonly code = 'validation_failed';
  constructor(message: string, readonly details: readonly string[] = []) {
    super(message);
  }
}

/** 404: the resource does not exist in the caller's scope. */
export class NotFoundError extends DomainError {
  readonly status = 404;
  readonly code = 'not_found';
}

/** 409: the resource is in a state that forbids the change. */
export class ConflictError extends DomainError {
  readonly status = 409;
  readonly code = 'conflict';
}

/** 402: the monthly invite allowance cannot fit the batch. */
export class QuotaExceededError extends DomainError {
  readonly status = 402;
  readonly code = 'CAPACITY_EXCEEDED';
  readonly dimension = 'guest_invites';
  constructor(readonly limit: number, readonly current: number, readonly requested: number) {
    super(`monthly guest invite allowance exceeded: ${current} of ${limit} used, ${requested} requested`);
  }
}

/** 401 with a Bearer challenge: missing, malformed, unknown, expired, revoked or restricted credential. */
export class InvalidTokenError extends DomainError {
  readonly status = 401;
  readonly code = 'invalid_token';
  constructor(message = 'the access token is missing or invalid') {
    super(message);
  }
}

/** 403 with a Bearer challenge naming the scope that is missing. */
export class InsufficientScopeError extends DomainError {
  readonly status = 403;
  readonly code = 'insufficient_scope';
  constructor(readonly scope: string) {
    super(`the credential lacks the scope ${scope}`);
  }
}

/** 413: body larger than allowed. */
export class PayloadTooLargeError extends DomainError {
  readonly status = 413;
  readonly code = 'payload_too_large';
}

/** 429. */
export class RateLimitedError extends DomainError {
  readonly status = 429;
  readonly code = 'temporarily_unavailable';
  constructor(
    readonly retryAfterSeconds: number,
    readonly limit: number,
    readonly windowSeconds: number,
    /** The name of the limit's policy, as the RateLimit headers give it. */
    readonly policy: string,
  ) {
    super('rate limited');
  }
}
