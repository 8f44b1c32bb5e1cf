/**
 * The one error class of the service. The control API throws it, REST maps
 * its code to an HTTP status, IMAP maps it to a tagged NO/BAD with the
 * RFC 5530 response code of the same name.
 */
export type ErrorCode =
  | 'INVALID'
  | 'NONEXISTENT'
  | 'ALREADYEXISTS'
  | 'CANNOT'
  | 'HASCHILDREN'
  | 'OVERQUOTA'
  | 'TOOBIG'
  | 'UNAUTHORIZED'
  | 'UNSUPPORTED'
  | 'NOTFOUND'
  | 'METHOD'
  | 'LIMIT'
  /** A wait ended without a matching event (REST 408). */
  | 'TIMEOUT'
  /** A position in the event backlog that is no longer kept (REST 410). */
  | 'EXPIRED'
  | 'NOPERM'
  | 'USEATTR'
  | 'SERVERERROR';

export class ServiceError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
  }
}

export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}
