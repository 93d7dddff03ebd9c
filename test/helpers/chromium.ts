// Headless Chromium for the tests that look at a page as a person would (/docs, the Temporal UI).
// No skipping (the suite forbids pending tests): without Chromium the test fails and says how to
// get it. `npm test`'s bootstrap (scripts/bootstrap.js) installs it when it runs as root.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const { CHROMIUM_COMMAND } = require('../../scripts/bootstrap.js') as { CHROMIUM_COMMAND: string };

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  assert.ok(
    existsSync(CHROMIUM),
    `no Chromium at ${CHROMIUM}: run \`sudo sh -c '${CHROMIUM_COMMAND}'\` (or set CHROMIUM_PATH)`,
  );
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
