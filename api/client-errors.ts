// Requests Node's HTTP parser refuses before Koa sees them (headers too large, a request
// that never finishes arriving, framing the parser cannot trust such as Content-Length
// together with Transfer-Encoding) get the API.md error object too, instead of Node's bare
// status line. Attach to every server that serves the app.
import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError } from '../core/errors';

function errorFor(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('headers_too_large', 'The request headers are larger than the server accepts (16 KiB).', {
        reasonCode: 'headers_too_large',
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout', 'The request did not arrive in full in time.', {
        reasonCode: 'request_timeout',
      });
    default:
      return new ApiError(
        'validation_failed',
        'The request is not valid HTTP/1.1 (its framing or headers cannot be parsed).',
        { reasonCode: 'malformed_request' },
      );
  }
}

/** The raw response for a parser error: the connection is closed after it. */
export function clientErrorResponse(code: string | undefined): string {
  const error = errorFor(code);
  const body = JSON.stringify(error.toBody());
  const reason =
    { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[error.status] ??
    'Bad Request';
  return [
    `HTTP/1.1 ${error.status} ${reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function answerClientErrors(server: Server): Server {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A connection reset or one the client already closed has no one to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err.code));
  });
  return server;
}
