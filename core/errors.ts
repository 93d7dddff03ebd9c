// The error catalogue of API.md. Every error response is built from ApiError, so the
// stable `code`, the HTTP status and the public `name` can never disagree.
import { newId } from './ids';

export const ERROR_CLASSES = {
  validation_failed: { code: 40000, status: 400 },
  unauthenticated: { code: 40100, status: 401 },
  not_found: { code: 40400, status: 404 },
  method_not_allowed: { code: 40500, status: 405 },
  request_timeout: { code: 40800, status: 408 },
  conflict: { code: 40900, status: 409 },
  payload_too_large: { code: 41300, status: 413 },
  unsupported_media_type: { code: 41500, status: 415 },
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

  constructor(
    errorName: ErrorName,
    message: string,
    options: { reasonCode?: string; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.errorName = errorName;
    this.reasonCode = options.reasonCode;
    this.details = options.details;
    this.headers = options.headers ?? {};
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
  notFound(reasonCode: string, message: string): ApiError {
    return new ApiError('not_found', message, { reasonCode });
  },
  conflict(reasonCode: string, message: string, details?: Record<string, unknown>): ApiError {
    return new ApiError('conflict', message, { reasonCode, details });
  },
  internal(): ApiError {
    return new ApiError('internal_error', 'An unexpected error occurred. Quote the uuid to support.');
  },
  unavailable(reasonCode: 'database_unavailable' | 'workflow_engine_unavailable', message: string): ApiError {
    return new ApiError('unavailable', message, { reasonCode, headers: { 'Retry-After': '5' } });
  },
};
