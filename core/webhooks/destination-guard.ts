// Checks a webhook URL where it matters: when it is saved and before every attempt. The host
// is resolved once per check and every address it resolves to is judged
// (core/webhooks/destination.ts); the sender then connects only to those addresses
// (pinnedLookup), never resolving again, so a DNS answer that changes between the check and
// the connection (DNS rebinding) cannot send a request inside the network.
//
// Built once per process from configuration (core/config.ts, WEBHOOK_ALLOW_PRIVATE_DESTINATIONS)
// and passed to the API and the worker as a dependency; tests inject the resolver.
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { parseWebhookUrl } from './endpoint-url';
import { addressRefusal, classifyAddress, urlDestinationRefusal } from './destination';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to. Rejects with an error whose `code` names a failure (ENOTFOUND...). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * The operating system's resolver (getaddrinfo: /etc/hosts, then DNS), as fetch and node:http
 * use it, in the order it answers. It runs on libuv's thread pool and is cheap when the answer
 * is cached by the system.
 */
export const systemResolver: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

export type DestinationVerdict =
  /** Send to `url`, connecting only to `addresses` (all of them checked). */
  | { kind: 'allowed'; url: URL; addresses: ResolvedAddress[] }
  /** Never send: `reason` says why, without naming what a host name resolved to. */
  | { kind: 'refused'; reason: string }
  /** The name did not resolve (now): nothing can be sent, nothing is known to be wrong. */
  | { kind: 'unresolved'; code: string };

export interface WebhookDestinations {
  /** Loopback and private destinations are allowed (local development only; core/config.ts). */
  readonly allowPrivate: boolean;
  /** Judges `rawUrl`; resolving stops when `signal` aborts (verdict `unresolved`, code `ETIMEOUT`). */
  check(rawUrl: string, signal?: AbortSignal): Promise<DestinationVerdict>;
}

export function createWebhookDestinations(options: { allowPrivate: boolean; resolve?: Resolver }): WebhookDestinations {
  const { allowPrivate } = options;
  const resolve = options.resolve ?? systemResolver;
  return {
    allowPrivate,
    async check(rawUrl, signal) {
      const parsed = parseWebhookUrl(rawUrl);
      if ('problem' in parsed) return { kind: 'refused', reason: `the URL ${parsed.problem}` };
      const { url } = parsed;
      const refusal = urlDestinationRefusal(url, allowPrivate);
      if (refusal) return { kind: 'refused', reason: refusal };
      const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
      if (classifyAddress(literal) !== null)
        return { kind: 'allowed', url, addresses: [{ address: literal, family: literal.includes(':') ? 6 : 4 }] };
      let addresses: ResolvedAddress[];
      try {
        addresses = await abortable(resolve(url.hostname), signal);
      } catch (err) {
        return { kind: 'unresolved', code: (err as { code?: unknown })?.code?.toString() ?? 'ENOTFOUND' };
      }
      if (addresses.length === 0) return { kind: 'unresolved', code: 'ENODATA' };
      // Every address is judged, not only the first: the connection may use any of them.
      for (const { address } of addresses) {
        const why = addressRefusal(address, allowPrivate);
        if (why) return { kind: 'refused', reason: `${url.hostname} resolves to ${why}` };
      }
      return { kind: 'allowed', url, addresses };
    },
  };
}

/**
 * The `lookup` of a connection to a checked destination: it answers the checked addresses
 * whatever it is asked, so the socket connects to nothing else. It honours the family asked
 * for, and answers every address when asked for all (Happy Eyeballs tries them in turn).
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  if (addresses.length === 0) throw new Error('pinnedLookup needs at least one checked address');
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : [...addresses];
    if (usable.length === 0) {
      const err: NodeJS.ErrnoException = Object.assign(new Error(`no checked IPv${family} address`), {
        code: 'ENOTFOUND',
      });
      callback(err, '', 0);
    } else if (options.all) {
      callback(
        null,
        usable.map((a) => ({ ...a })),
      );
    } else {
      callback(null, usable[0].address, usable[0].family);
    }
  };
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(Object.assign(new Error('resolving timed out'), { code: 'ETIMEOUT' }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(Object.assign(new Error('resolving timed out'), { code: 'ETIMEOUT' }));
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
