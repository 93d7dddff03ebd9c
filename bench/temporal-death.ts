// A whole run's phases share one Temporal dev server. When it dies (it has crashed in its SQLite
// deep into whole runs), the phase it died in and every phase after it measure another stack than
// the bar's: an API that hands nothing over, a worker with nothing to run, or a server restarted
// empty. Their figures are kept, shown and recorded, but carry no target, and each says why, in
// the printed table and in bench/history.ndjson, so that a missing or odd figure is never a
// silent gap in the history.
import type { Row } from './report';

/** Where the run's Temporal dev server died, and how it exited. */
export interface TemporalDeath {
  /** The phase (as bench/run.ts times it) during which it was first seen dead. */
  phase: string;
  /** How the process exited: `signal SIGSEGV`, `code 2`. */
  how: string;
}

/** How a phase stood to the dev server's death: it died while the phase ran, or before it. */
export interface PhaseDeath extends TemporalDeath {
  when: 'during' | 'before';
}

/**
 * Follows the dev server across the phases of one run: `seen` after each phase with how the
 * server exited, if it has; returns how that phase stood to the death (undefined: untouched).
 */
export function temporalDeathTracker() {
  let death: TemporalDeath | undefined;
  return {
    seen(phase: string, diedHow: string | undefined): PhaseDeath | undefined {
      if (death) return { ...death, when: 'before' };
      if (diedHow === undefined) return undefined;
      death = { phase, how: diedHow };
      return { ...death, when: 'during' };
    },
    get death(): TemporalDeath | undefined {
      return death;
    },
  };
}

/** The sentence a phase's rows carry when the dev server died during or before it. */
export function deathNote(death: PhaseDeath): string {
  return death.when === 'during'
    ? `the Temporal dev server died during this phase (${death.how}): measured on a broken stack, not comparable`
    : `the Temporal dev server had died before this phase, in ${death.phase} (${death.how}): measured on a broken stack, not comparable`;
}

/** A phase's rows as measured, or, after a death, without targets and each saying why. */
export function afterTemporalDeath(rows: Row[], death: PhaseDeath | undefined): Row[] {
  if (!death) return rows;
  const why = deathNote(death);
  return rows.map(({ target: _target, ...row }) => ({
    ...row,
    note: row.note ? `${row.note}; ${why}` : why,
    notCounted: why,
  }));
}
