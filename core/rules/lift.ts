// The statistics of an offer's lift report (API.md, "Targeted offers (audiences, automatic
// activation, holdouts, lift)"): what an enrolled group spent at the merchant in each arm, the
// lift of the treated arm over the control, its 95 % interval, the spend the offer added and what
// that cost. Each arm comes as sufficient statistics (groups, purchasers, sum and sum of squares
// of per-group spend) so that the report aggregates a million groups in SQL and hands over eight
// numbers. Money is exact: sums are bigint and every money output is an integer from bigint
// division; only the interval, which is an estimate, is computed in floating point and then
// rounded outwards. The method, the rule that withholds the interval and the cost's unit:
// docs/decisions/0047-holdout-and-lift.md.
import { assertMinor } from '../money';

/**
 * One arm of the report: its enrolled groups and their spend over the window, in minor units. A
 * group's spend is never negative: a refund is netted from the purchase it refunds.
 */
export interface ArmSpend {
  /** Enrolled groups in the arm, buyers or not. */
  groups: number;
  /** Groups whose spend is above zero. */
  purchasers: number;
  /** Sum over the arm's groups of each group's spend. */
  spendMinor: bigint;
  /** Sum over the arm's groups of the square of each group's spend (bigint: it passes 2^53 long before the sum does). */
  spendSquaredMinor: bigint;
}

export interface LiftInput {
  treated: ArmSpend;
  control: ArmSpend;
  /** What the offer rewarded the treated groups over the window (control groups earn nothing from it). */
  treatedRewardMinor: number;
}

export interface Lift {
  /** Mean spend per enrolled group, rounded half away from zero; null for an arm with no groups. */
  spendPerGroupMinor: { treated: number | null; control: number | null };
  /** (treated mean / control mean - 1) x 10000, rounded half away from zero; null without control spend. */
  liftBps: number | null;
  /** Fieller's 95 % interval of the lift, rounded outwards; both null when the data cannot bound it. */
  ci95Bps: [number, number] | [null, null];
  /** treated groups x (treated mean - control mean), rounded half away from zero; null without a control. */
  incrementalSpendMinor: number | null;
  /** Reward minor units per 10,000 minor units of incremental spend, rounded up; null unless that spend is > 0. */
  costPerIncrementalMinor: number | null;
}

/**
 * Purchasers each arm needs before the report gives an interval. An arm's mean spend is driven by
 * its purchasers: with purchase amounts about exponential, its skewness is about 2.1 divided by
 * the square root of the purchasers, 0.21 at 100. Fewer, and a control mean that came out low
 * makes the interval show a lift that is not there too often (the simulations in the decision
 * record; the tests measure coverage at this size).
 */
export const LIFT_MIN_PURCHASERS = 100;

/** The two-sided 95 % quantile of the standard normal distribution. */
const Z95 = 1.959963984540054;
const BPS = 10_000n;

/** An arm's sufficient statistics from each of its groups' spend (zero for a group that bought nothing). */
export function armSpendOf(spendPerGroupMinor: readonly number[]): ArmSpend {
  let purchasers = 0;
  let spendMinor = 0n;
  let spendSquaredMinor = 0n;
  for (const spend of spendPerGroupMinor) {
    assertMinor(spend, 'spendPerGroupMinor');
    if (spend === 0) continue;
    purchasers += 1;
    const s = BigInt(spend);
    spendMinor += s;
    spendSquaredMinor += s * s;
  }
  return { groups: spendPerGroupMinor.length, purchasers, spendMinor, spendSquaredMinor };
}

/**
 * Refuses statistics no set of non-negative integer spends could give: a bug in the aggregation
 * upstream, which would otherwise come out as a confident figure.
 */
function assertArm(arm: ArmSpend, name: string): void {
  assertMinor(arm.groups, `${name}.groups`);
  assertMinor(arm.purchasers, `${name}.purchasers`);
  const { spendMinor: sum, spendSquaredMinor: squares } = arm;
  // PostgreSQL's sum of a bigint is a numeric, which a driver hands over as a decimal or a string.
  if (typeof sum !== 'bigint' || typeof squares !== 'bigint') throw new RangeError(`${name} sums must be bigint`);
  const purchasers = BigInt(arm.purchasers);
  const consistent =
    arm.purchasers <= arm.groups &&
    sum >= 0n &&
    (arm.purchasers === 0) === (sum === 0n) &&
    // Each spend is an integer of at least 1, so its square is at least itself, and by
    // Cauchy-Schwarz the purchasers' squares add up to at least their sum squared over their count.
    sum >= purchasers &&
    squares >= sum &&
    squares * purchasers >= sum * sum &&
    // No purchaser can have spent more than the whole, so no square exceeds the sum squared.
    squares <= sum * sum;
  if (!consistent) throw new RangeError(`${name} is not the spend of ${arm.groups} groups`);
}

/** num / den rounded to the nearest integer, halves away from zero; den > 0. */
function divRound(num: bigint, den: bigint): bigint {
  const q = num / den;
  const twiceRemainder = 2n * (num % den);
  if (twiceRemainder >= den) return q + 1n;
  if (-twiceRemainder >= den) return q - 1n;
  return q;
}

/** num / den rounded up; den > 0. */
function divCeil(num: bigint, den: bigint): bigint {
  const q = num / den;
  return num % den > 0n ? q + 1n : q;
}

function toSafe(value: bigint, name: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER))
    throw new RangeError(`${name} ${value} exceeds the safe integer range`);
  return Number(value);
}

/** The arm's mean and the variance of that mean (sample variance over groups, divided by groups). */
function meanAndVariance(arm: ArmSpend): { mean: number; variance: number } {
  const n = BigInt(arm.groups);
  // n x sum of squares - sum^2 is n^2 x the population variance, exact in bigint.
  const spread = n * arm.spendSquaredMinor - arm.spendMinor * arm.spendMinor;
  const groups = arm.groups;
  return { mean: Number(arm.spendMinor) / groups, variance: Number(spread) / (groups * groups * (groups - 1)) };
}

/**
 * Fieller's 95 % interval for the ratio of the treated mean a to the control mean b of two
 * independent arms: the ratios r for which a - r x b is not significantly different from 0,
 * (a - r b)^2 <= z^2 (va + r^2 vb). Null when the control mean is not significantly above 0
 * (b^2 <= z^2 vb): then no finite interval covers the ratio at 95 %.
 */
export function fiellerRatioInterval(
  treated: { mean: number; variance: number },
  control: { mean: number; variance: number },
): [number, number] | null {
  const { mean: a, variance: va } = treated;
  const { mean: b, variance: vb } = control;
  const z2 = Z95 * Z95;
  const denominator = b * b - z2 * vb;
  if (!(denominator > 0)) return null;
  const discriminant = z2 * (a * a * vb + b * b * va - z2 * va * vb);
  const root = Math.sqrt(Math.max(0, discriminant));
  // A ratio of spends is never negative: a lower root below 0 only says the data allow 0.
  return [Math.max(0, (a * b - root) / denominator), (a * b + root) / denominator];
}

function liftInterval(treated: ArmSpend, control: ArmSpend): [number, number] | [null, null] {
  if (treated.purchasers < LIFT_MIN_PURCHASERS || control.purchasers < LIFT_MIN_PURCHASERS) return [null, null];
  const ratio = fiellerRatioInterval(meanAndVariance(treated), meanAndVariance(control));
  if (ratio === null) return [null, null];
  const [lo, hi] = ratio;
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [null, null];
  // Outwards, so that the interval shown contains the one computed.
  return [Math.floor((lo - 1) * 10_000), Math.ceil((hi - 1) * 10_000)];
}

/**
 * The report's figures for two arms of one offer over one window. Every money figure is an exact
 * integer; the interval is withheld (both bounds null) unless each arm has LIFT_MIN_PURCHASERS
 * purchasers and the control's mean is clearly above 0.
 */
export function computeLift(input: LiftInput): Lift {
  const { treated, control } = input;
  assertArm(treated, 'treated');
  assertArm(control, 'control');
  assertMinor(input.treatedRewardMinor, 'treatedRewardMinor');
  const nT = BigInt(treated.groups);
  const nC = BigInt(control.groups);
  const mean = (arm: ArmSpend, name: string) =>
    arm.groups === 0 ? null : toSafe(divRound(arm.spendMinor, BigInt(arm.groups)), name);
  // treated sum x control groups - control sum x treated groups: the difference of the means
  // times both arms' groups. The lift and the incremental spend are both this over a positive
  // number, so they always have the same sign.
  const difference = treated.spendMinor * nC - control.spendMinor * nT;
  const comparable = treated.groups > 0 && control.groups > 0;
  const incremental = comparable ? toSafe(divRound(difference, nC), 'incrementalSpendMinor') : null;
  const lift: Lift = {
    spendPerGroupMinor: {
      treated: mean(treated, 'treated spend per group'),
      control: mean(control, 'control spend per group'),
    },
    liftBps:
      comparable && control.spendMinor > 0n
        ? toSafe(divRound(difference * BPS, control.spendMinor * nT), 'liftBps')
        : null,
    ci95Bps: comparable && control.spendMinor > 0n ? liftInterval(treated, control) : [null, null],
    incrementalSpendMinor: incremental,
    costPerIncrementalMinor:
      incremental !== null && incremental > 0
        ? toSafe(divCeil(BigInt(input.treatedRewardMinor) * BPS, BigInt(incremental)), 'costPerIncrementalMinor')
        : null,
  };
  assertLift(lift, difference);
  return lift;
}

function assertLift(lift: Lift, difference: bigint): void {
  const fail = (what: string) => {
    throw new Error(`lift invariant violated: ${what}`);
  };
  const { liftBps, incrementalSpendMinor: incremental } = lift;
  const [lo, hi] = lift.ci95Bps;
  if (liftBps !== null && liftBps < -10_000) fail('a spend fell below zero');
  if (liftBps !== null && Math.sign(liftBps) * Number(difference) < 0) fail('lift against the difference');
  if (incremental !== null && Math.sign(incremental) * Number(difference) < 0) fail('incremental against it');
  if ((lo === null) !== (hi === null)) fail('one bound without the other');
  if (lo !== null && (liftBps === null || lo > liftBps || hi < liftBps || lo < -10_000))
    fail(`interval [${lo}, ${hi}] does not hold ${liftBps}`);
  const cost = lift.costPerIncrementalMinor;
  if (cost !== null && (incremental === null || incremental <= 0 || cost < 0)) fail('cost without incremental spend');
}
