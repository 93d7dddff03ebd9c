// The targeting phase's rows (bench/targeting.ts measures, bench/run.ts runs the phase), apart so
// that their unit test needs no stack. The bars are DESIGN.md's, Quality bars, "Targeting".
import type { Row } from './report';
import { cpuPerReadNote, mechanicsShare, targetingShare, type TargetingResult } from './targeting';

/** How far the control's share may stray from the offer's holdoutBps, in percentage points. */
export const HOLDOUT_SHARE_TOLERANCE_PP = 0.2;

/** What each offer mechanics side of the rounds has beside the percent twin's offer. */
const MECHANICS = {
  cumulative: {
    figure: 'Offer mechanics: lifecycle at a percent offer with cumulative offers beside it (steady 10-90%)',
    share: 'Offer mechanics: cumulative / percent lifecycle',
    beside: 'spend X get Y and the Nth purchase (both repeatable) beside a 5 % offer',
  },
  stacked: {
    figure: 'Offer mechanics: lifecycle at a merchant stacking three percent offers (steady 10-90%)',
    share: 'Offer mechanics: stacked / percent lifecycle',
    beside: '5 %, 3 % (budgeted) and 2 % stacked under a 10 % cap, each purchase earning from all three',
  },
} as const;

/** An offer mechanics side's lifecycle beside the percent twin's, when the run had that side. */
function mechanicsRows(t: TargetingResult, side: keyof typeof MECHANICS): Row[] {
  const share = mechanicsShare(t.rounds, side);
  if (share === null) return [];
  const mean = (of: typeof side | 'untargeted') =>
    t.rounds.reduce((s, r) => s + r[of]!.steadyPerSecond, 0) / t.rounds.length;
  const perRound = t.rounds
    .map((r) => `${r.untargeted.steadyPerSecond.toFixed(1)} → ${r[side]!.steadyPerSecond.toFixed(1)}`)
    .join(', ');
  return [
    {
      figure: MECHANICS[side].figure,
      value: mean(side),
      floor: mean('untargeted'),
      unit: 'events/s',
      note: `mean of ${t.rounds.length} rounds, ${MECHANICS[side].beside}; percent twin → ${side}: ${perRound}`,
    },
    { figure: MECHANICS[side].share, value: share, unit: '%', target: { op: '>=', value: 90 } },
  ];
}

export function targetingRows(t: TargetingResult): Row[] {
  return [...ownRows(t), ...mechanicsRows(t, 'cumulative'), ...mechanicsRows(t, 'stacked')];
}

function ownRows(t: TargetingResult): Row[] {
  const { rounds, list, enrolment, lift, drain } = t;
  const mean = (side: 'targeted' | 'untargeted') =>
    rounds.reduce((s, r) => s + r[side].steadyPerSecond, 0) / rounds.length;
  const perRound = rounds
    .map((r) => `${r.untargeted.steadyPerSecond.toFixed(1)} → ${r.targeted.steadyPerSecond.toFixed(1)}`)
    .join(', ');
  const million = enrolment.groups.toLocaleString('en-US');
  const interval = lift.ci95Bps.map((b) => (b === null ? 'null' : String(b))).join(', ');
  return [
    {
      figure: 'Targeting: lifecycle at an offer with an audience and a holdout (steady 10-90%)',
      value: mean('targeted'),
      floor: mean('untargeted'),
      unit: 'events/s',
      note: `mean of ${rounds.length} rounds of ${rounds[0].targeted.offered} purchases of the ${t.treatedGroups} treated groups of ${t.fixtureGroups}, untargeted twin → targeted: ${perRound}; pending after drain ${drain.pending}, trial balance ${drain.trialBalanceMinor}`,
    },
    {
      figure: 'Targeting: targeted / untargeted lifecycle',
      value: targetingShare(rounds),
      unit: '%',
      target: { op: '>=', value: 90 },
    },
    {
      figure: `Targeting: a group's offer list over ${list.offers} live targeted offers, p99`,
      value: list.p99Ms,
      unit: 'ms',
      target: { op: '<=', value: 50 },
      note: `first page, ${Math.round(list.requestsPerSecond)} req/s, p50 ${list.p50Ms.toFixed(1)} ms, ${list.errors} errors of ${list.requests}; the offers created and enrolled by their runs in ${list.enrolSeconds.toFixed(0)} s${cpuPerReadNote(list)}`,
    },
    {
      figure: `Targeting: a group's offer list by relevance over ${list.offers} live targeted offers, p99`,
      value: list.ranked.p99Ms,
      unit: 'ms',
      target: { op: '<=', value: 50 },
      note: `first page of sort=relevance, ${Math.round(list.ranked.requestsPerSecond)} req/s, p50 ${list.ranked.p50Ms.toFixed(1)} ms, ${list.ranked.errors} errors of ${list.ranked.requests}${cpuPerReadNote(list.ranked)}`,
    },
    {
      figure: `Targeting: enrolment run over ${million} groups`,
      value: enrolment.seconds,
      unit: 's',
      target: { op: '<=', value: 60 },
      note: `treated ${enrolment.treated}, control ${enrolment.control}, outside the audience ${enrolment.outside}; groups written in ${enrolment.seedSeconds.toFixed(0)} s`,
    },
    {
      figure: 'Targeting: enrolment run, Temporal actions per 1,000 groups',
      value: enrolment.actionsPerThousandGroups,
      unit: 'actions',
      target: { op: '<=', value: 10 },
    },
    {
      figure: `Targeting: control share off holdoutBps over ${million} groups`,
      value: Math.abs(enrolment.controlSharePercent - enrolment.holdoutPercent),
      unit: 'pp',
      target: { op: '<=', value: HOLDOUT_SHARE_TOLERANCE_PP },
      note: `control ${enrolment.controlSharePercent.toFixed(3)} % of the audience, holdout ${enrolment.holdoutPercent} %`,
    },
    {
      figure: `Targeting: lift report over ${million} enrolled groups`,
      value: lift.seconds,
      unit: 's',
      target: { op: '<=', value: 10 },
      note: `slowest of ${lift.callsSeconds.length} calls (${lift.callsSeconds.map((s) => s.toFixed(2)).join(', ')} s) over ${lift.purchases} seeded purchases (treated 5 % larger): liftBps ${lift.liftBps}, ci95Bps [${interval}]`,
    },
  ];
}
