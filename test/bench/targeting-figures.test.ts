// The targeting phase's rows (bench/targeting-figures.ts): each of DESIGN.md's targeting bars is
// a row with its target, and the holdout row measures how far the control's share strays from
// the offer's holdout, on either side.
import assert from 'node:assert/strict';
import { targetingRows } from '../../bench/targeting-figures';
import { met } from '../../bench/report';
import type { TargetingResult } from '../../bench/targeting';
import type { DrainResult } from '../../bench/sustained';

const drain = (steadyPerSecond: number): DrainResult => ({
  offered: 2000,
  completed: 2000,
  steadyPerSecond,
  overallPerSecond: steadyPerSecond * 0.9,
  seconds: 2000 / steadyPerSecond,
});

function result(controlSharePercent: number): TargetingResult {
  return {
    rounds: [
      { untargeted: drain(50), targeted: drain(46) },
      { untargeted: drain(48), targeted: drain(45) },
    ],
    treatedGroups: 44,
    fixtureGroups: 50,
    drain: { pending: 0, trialBalanceMinor: 0 },
    list: {
      requestsPerSecond: 900,
      p50Ms: 20,
      p99Ms: 48,
      requests: 13_500,
      errors: 0,
      offers: 500,
      enrolSeconds: 40,
      ranked: {
        requestsPerSecond: 700,
        p50Ms: 25,
        p99Ms: 61,
        requests: 10_500,
        errors: 0,
        cpuMsPerRead: { api: 0.85, worker: 0, temporal: 0.01, postgres: 0.49, bench: 0.15 },
      },
    },
    enrolment: {
      groups: 1_000_000,
      seedSeconds: 12,
      seconds: 58,
      actionsPerThousandGroups: 0.4,
      treated: 810_000,
      control: 90_000 * (controlSharePercent / 10),
      outside: 100_000,
      holdoutPercent: 10,
      controlSharePercent,
    },
    lift: {
      purchases: 200_000,
      seedSeconds: 5,
      seconds: 2.5,
      callsSeconds: [2.5, 1.2, 1.1],
      liftBps: 498,
      ci95Bps: [380, 610],
    },
  };
}

const byFigure = (rows: ReturnType<typeof targetingRows>) => new Map(rows.map((r) => [r.figure, r]));

describe('bench/targeting-figures', () => {
  it('gives every targeting bar a row with its target', () => {
    const rows = byFigure(targetingRows(result(10.05)));
    const share = rows.get('Targeting: targeted / untargeted lifecycle')!;
    assert.equal(share.value.toFixed(2), ((45.5 / 49) * 100).toFixed(2));
    assert.deepEqual(share.target, { op: '>=', value: 90 });
    assert.equal(met(share), true);
    const list = rows.get("Targeting: a group's offer list over 500 live targeted offers, p99")!;
    assert.deepEqual([list.value, list.target], [48, { op: '<=', value: 50 }]);
    assert.doesNotMatch(list.note!, /CPU/, 'a run recorded before the CPU was measured says nothing of it');
    const ranked = rows.get("Targeting: a group's offer list by relevance over 500 live targeted offers, p99")!;
    assert.deepEqual([ranked.value, ranked.target, met(ranked)], [61, { op: '<=', value: 50 }, false]);
    assert.match(
      ranked.note!,
      /CPU ms per read: api 0\.85, worker 0\.00, temporal 0\.01, postgres 0\.49, bench 0\.15$/,
    );
    const enrolment = rows.get('Targeting: enrolment run over 1,000,000 groups')!;
    assert.deepEqual([enrolment.value, enrolment.target], [58, { op: '<=', value: 60 }]);
    assert.deepEqual(rows.get('Targeting: enrolment run, Temporal actions per 1,000 groups')!.target, {
      op: '<=',
      value: 10,
    });
    const lift = rows.get('Targeting: lift report over 1,000,000 enrolled groups')!;
    assert.deepEqual([lift.value, lift.target], [2.5, { op: '<=', value: 10 }]);
    assert.match(lift.note!, /liftBps 498, ci95Bps \[380, 610\]/);
  });

  it('compares each offer mechanics side with the percent twin of the same rounds, when the run had it', () => {
    const plain = byFigure(targetingRows(result(10)));
    assert.equal(plain.has('Offer mechanics: stacked / percent lifecycle'), false, 'a run before the side has no row');
    const withSides = result(10);
    withSides.rounds = withSides.rounds.map((r, i) => ({ ...r, cumulative: drain(45 + i), stacked: drain(44 - i) }));
    const rows = byFigure(targetingRows(withSides));
    const stacked = rows.get('Offer mechanics: stacked / percent lifecycle')!;
    assert.equal(stacked.value.toFixed(2), ((43.5 / 49) * 100).toFixed(2));
    assert.deepEqual([stacked.target, met(stacked)], [{ op: '>=', value: 90 }, false]);
    const cumulative = rows.get('Offer mechanics: cumulative / percent lifecycle')!;
    assert.equal(cumulative.value.toFixed(2), ((45.5 / 49) * 100).toFixed(2));
    assert.match(
      rows.get('Offer mechanics: lifecycle at a merchant stacking three percent offers (steady 10-90%)')!.note!,
      /percent twin → stacked: 50\.0 → 44\.0, 48\.0 → 43\.0/,
    );
  });

  it('measures the control share off the holdout either way, and fails it past 0.2 points', () => {
    const figure = 'Targeting: control share off holdoutBps over 1,000,000 groups';
    const above = byFigure(targetingRows(result(10.15))).get(figure)!;
    const below = byFigure(targetingRows(result(9.85))).get(figure)!;
    assert.equal(above.value.toFixed(2), '0.15');
    assert.equal(below.value.toFixed(2), '0.15');
    assert.equal(met(above), true);
    assert.equal(met(byFigure(targetingRows(result(9.7))).get(figure)!), false);
  });
});
