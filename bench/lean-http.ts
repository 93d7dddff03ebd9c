// A keep-alive HTTP/1.1 connection for the read phases: one request at a time, and of each answer
// only what a load generator needs, its status and where it ends (Content-Length). The bench runs on
// the machine it measures, so what its client spends is taken from the service: node:http's client
// cost about half a core at 1,400 reads a second of the offer list (top, per process, on two cores,
// unrecorded), a third of the machine; this one reads the same answers for a small part of it
// (docs/benchmarks.md).
import net from 'node:net';

const HEAD_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;

interface Pending {
  resolve(status: number): void;
  reject(err: Error): void;
}

export class LeanConnection {
  private socket: net.Socket | undefined;
  private pending: Pending | undefined;
  /** The bytes of a head that has not ended yet. */
  private head: Buffer | undefined;
  private status = 0;
  /** Bytes of the body still to come; -1 while the head is being read. */
  private bodyLeft = -1;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** GETs `path` with the given headers; resolves with the status once the whole body is in. */
  get(path: string, headers: Record<string, string> = {}): Promise<number> {
    if (this.pending) return Promise.reject(new Error('one request at a time on a connection'));
    let request = `GET ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n`;
    for (const [name, value] of Object.entries(headers)) request += `${name}: ${value}\r\n`;
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.head = undefined;
      this.bodyLeft = -1;
      this.connected().write(request + '\r\n');
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = undefined;
  }

  private connected(): net.Socket {
    if (this.socket && !this.socket.destroyed) return this.socket;
    const socket = net.connect(this.port, this.host);
    socket.setNoDelay(true);
    // Events of a socket this connection has left behind (after a failure) concern no request.
    const current = () => this.socket === socket;
    socket.on('data', (chunk: Buffer) => current() && this.read(chunk));
    socket.on('error', (err) => current() && this.fail(err));
    // A server closing a kept-alive connection between requests is not an error: the next request
    // opens another. Closing one while an answer is awaited is.
    socket.on('close', () => {
      if (!current()) return;
      this.socket = undefined;
      this.fail(new Error('the server closed the connection before answering'));
    });
    this.socket = socket;
    return socket;
  }

  private read(chunk: Buffer): void {
    let bodyBytes = chunk.length;
    if (this.bodyLeft < 0) {
      const bytes = this.head ? Buffer.concat([this.head, chunk]) : chunk;
      const end = bytes.indexOf(HEAD_END);
      if (end < 0) {
        this.head = bytes;
        return;
      }
      this.head = undefined;
      const head = bytes.toString('latin1', 0, end);
      this.status = Number(head.slice(9, 12));
      const length = CONTENT_LENGTH.exec(head);
      if (length) this.bodyLeft = Number(length[1]);
      else if (this.status === 204 || this.status === 304) this.bodyLeft = 0;
      else
        return this.fail(
          new Error(`HTTP ${this.status} without Content-Length: the lean client reads only sized answers`),
        );
      bodyBytes = bytes.length - end - HEAD_END.length;
    }
    this.bodyLeft -= bodyBytes;
    if (this.bodyLeft < 0) return this.fail(new Error('more bytes than the answer said it had'));
    if (this.bodyLeft > 0) return;
    const done = this.pending;
    this.pending = undefined;
    this.bodyLeft = -1;
    done?.resolve(this.status);
  }

  private fail(err: Error): void {
    const failed = this.pending;
    this.pending = undefined;
    if (failed) {
      // What is left on the socket belongs to an answer no longer awaited: start afresh.
      this.close();
      failed.reject(err);
    }
  }
}
