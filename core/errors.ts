// The error catalogue of API.md. Every error response is built from ApiError, so the
// stable `code`, the HTTP status and the public `name` can never disagree.
import { newId } from './ids';

export const ERROR_CLASSES = {
  validation_failed: { code: 40000, status: 400 },
  unauthenticated: { code: 40100, status: 401 },
  forbidden: { code: 40300, status: 403 },
  not_found: { code: 40400, status: 404 },
  method_not_allowed: { code: 40500, status: 405 },
  request_timeout: { code: 40800, status: 408 },
  conflict: { code: 40900, status: 409 },
  payload_too_large: { code: 41300, status: 413 },
  unsupported_media_type: { code: 41500, status: 415 },
  unprocessable: { code: 42200, status: 422 },
  rate_limited: { code: 42900, status: 429 },
  headers_too_large: { code: 43100, status: 431 },
  internal_error: { code: 50000, status: 500 },
  unavailable: { code: 50300, status: 503 },
} as const;
export type ErrorName = keyof typeof ERROR_CLASSES;

export interface FieldError {
  path: string;
  message: string;
}

export interface ErrorBody {
  code: number;
  httpStatusCode: number;
  uuid: string;
  message: string;
  name?: string;
  reasonCode?: string;
  details?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly errorName: ErrorName;
  readonly reasonCode?: string;
  readonly details?: Record<string, unknown>;
  /** Extra response headers, e.g. Retry-After. */
  readonly headers: Record<string, string>;
  /**
   * The very same request may succeed when sent again (it lost a race with another one). Such
   * an answer is not kept under an Idempotency-Key, so the caller's retry runs again, where any
   * other 4xx is replayed (api/middleware/idempotency.ts).
   */
  readonly retryable: boolean;

  constructor(
    errorName: ErrorName,
    message: string,
    options: {
      reasonCode?: string;
      details?: Record<string, unknown>;
      headers?: Record<string, string>;
      retryable?: boolean;
    } = {},
  ) {
    super(message);
    this.errorName = errorName;
    this.reasonCode = options.reasonCode;
    this.details = options.details;
    this.headers = options.headers ?? {};
    this.retryable = options.retryable ?? false;
  }

  get status(): number {
    return ERROR_CLASSES[this.errorName].status;
  }

  toBody(uuid: string = newId('err')): ErrorBody {
    const body: ErrorBody = {
      code: ERROR_CLASSES[this.errorName].code,
      httpStatusCode: this.status,
      uuid,
      message: this.message,
      name: this.errorName,
    };
    if (this.reasonCode) body.reasonCode = this.reasonCode;
    if (this.details) body.details = this.details;
    return body;
  }
}

export const CARD_NUMBER_REFUSED =
  'A card number (13 to 19 digits passing the Luhn check) is not accepted in any field: send the last four digits at most.';

// Factories: call sites read as the error they raise.
export const errors = {
  validation(reasonCode: string, message: string, fieldErrors?: FieldError[]): ApiError {
    return new ApiError('validation_failed', message, {
      reasonCode,
      details: fieldErrors ? { errors: fieldErrors } : undefined,
    });
  },
  unauthenticated(reasonCode: 'missing_token' | 'invalid_token', message: string): ApiError {
    return new ApiError('unauthenticated', message, { reasonCode, headers: { 'WWW-Authenticate': 'Bearer' } });
  },
  /** A card number in a request (core/rules/card-numbers.ts): where it is, never what it is. */
  panDetected(path: string): ApiError {
    return new ApiError('unprocessable', CARD_NUMBER_REFUSED, {
      reasonCode: 'pan_detected',
      details: { errors: [{ path, message: 'holds a card number' }] },
    });
  },
  notFound(reasonCode: string, message: string): ApiError {
    return new ApiError('not_found', message, { reasonCode });
  },
  conflict(reasonCode: string, message: string, details?: Record<string, unknown>): ApiError {
    return new ApiError('conflict', message, { reasonCode, details });
  },
  /** A conflict with a concurrent change: the same request sent again may succeed. */
  concurrentChange(reasonCode: string, message: string): ApiError {
    return new ApiError('conflict', message, { reasonCode, retryable: true });
  },
  // Idempotency-Key (API.md, "Safety and integration"; api/middleware/idempotency.ts).
  invalidIdempotencyKey(): ApiError {
    return errors.validation('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters.', [
      { path: '/headers/Idempotency-Key', message: 'must match ^[!-~]{1,255}$' },
    ]);
  },
  idempotencyKeyReused(details: Record<string, unknown>): ApiError {
    return new ApiError(
      'conflict',
      'This Idempotency-Key was used with another request (method, path or body); send a new key for a new request.',
      { reasonCode: 'idempotency_key_reused', details },
    );
  },
  idempotencyKeyInUse(): ApiError {
    return new ApiError(
      'conflict',
      'A request with this Idempotency-Key is still running; retry after it has answered.',
      {
        reasonCode: 'idempotency_key_in_use',
        headers: { 'Retry-After': '1' },
        retryable: true,
      },
    );
  },
  /** An operator without the role a route needs (api/operators/route-roles.ts): refused before anything runs. */
  forbiddenRole(requiredRole: string, heldRoles: readonly string[]): ApiError {
    return new ApiError(
      'forbidden',
      `This operation needs the ${requiredRole} role; this operator holds ${heldRoles.join(', ')}.`,
      {
        reasonCode: 'forbidden_role',
        details: { requiredRole, roles: [...heldRoles] },
      },
    );
  },
  /** A sandbox-only route called with a production issuer's token (API.md, sandbox). */
  sandboxOnly(): ApiError {
    return new ApiError(
      'forbidden',
      'This route simulates time and outcomes for sandbox issuers only; this token belongs to a production issuer.',
      {
        reasonCode: 'sandbox_only',
      },
    );
  },
  internal(): ApiError {
    return new ApiError('internal_error', 'An unexpected error occurred. Quote the uuid to support.');
  },
  unavailable(
    reasonCode: 'database_unavailable' | 'workflow_engine_unavailable' | 'draining',
    message: string,
    details?: Record<string, unknown>,
  ): ApiError {
    return new ApiError('unavailable', message, { reasonCode, details, headers: { 'Retry-After': '5' } });
  },
};
