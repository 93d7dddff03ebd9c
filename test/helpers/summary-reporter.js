// Mocha's spec output, then one closing line `N passed, N failed` that CI reads.
'use strict';
const Mocha = require('mocha');

const { EVENT_RUN_END } = Mocha.Runner.constants;

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures } = runner.stats;
      process.stdout.write(`\n${passes} passed, ${failures} failed\n`);
    });
  }
}

module.exports = SummaryReporter;
