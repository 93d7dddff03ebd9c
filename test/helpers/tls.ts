// A throw-away certificate authority for TLS tests: a CA, a server certificate for one DNS name,
// and a client certificate, made by the openssl CLI in a temporary folder. ECDSA P-256, one day.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestPki {
  dir: string;
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** The DNS name in the server certificate (not resolvable: clients set it as the server name). */
  serverName: string;
  read(path: string): Buffer;
  remove(): void;
}

export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function makeTestPki(serverName = 'temporal.rewards.test'): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'rewards-pki-'));
  const path = (name: string) => join(dir, name);
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...newKey,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=rewards test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  const leaf = (name: string, subject: string, extensions: string) => {
    writeFileSync(path(`${name}.ext`), extensions);
    openssl('req', ...newKey, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
  };
  leaf(
    'server',
    `/CN=${serverName}`,
    `basicConstraints=CA:FALSE\nsubjectAltName=DNS:${serverName}\nextendedKeyUsage=serverAuth\n`,
  );
  leaf('client', '/CN=rewards-worker', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  return {
    dir,
    caCert: path('ca.pem'),
    serverCert: path('server.pem'),
    serverKey: path('server.key'),
    clientCert: path('client.pem'),
    clientKey: path('client.key'),
    serverName,
    read: (file) => readFileSync(file),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
