// The lift report as the operator API shows it: each arm's counts and the figures
// core/rules/lift.ts computes from the arms' sufficient statistics.
import { computeLift } from '../../core/rules/lift';
import type { ArmFigures } from './store';

function presentArm(arm: ArmFigures) {
  return {
    groups: arm.groups,
    purchasers: arm.purchasers,
    purchases: arm.purchases,
    spendMinor: toSafe(arm.spendMinor, 'spendMinor'),
    rewardMinor: arm.rewardMinor,
    impressions: arm.impressions,
  };
}

function toSafe(value: bigint, name: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${name} ${value} exceeds the safe integer range`);
  return Number(value);
}

/** The report's figures over one window; the reward that costs the lift is the treated arm's. */
export function presentLiftFigures(
  window: { from: Date; to: Date },
  arms: { treated: ArmFigures; control: ArmFigures },
) {
  // A clawback can exceed what the window earned (the purchase was rewarded before it): what the
  // offer cost over the window is then nothing, not a negative.
  const treatedRewardMinor = Math.max(0, arms.treated.rewardMinor);
  const lift = computeLift({ treated: arms.treated, control: arms.control, treatedRewardMinor });
  return {
    window: { from: window.from.toISOString(), to: window.to.toISOString() },
    treated: presentArm(arms.treated),
    control: presentArm(arms.control),
    spendPerGroupMinor: lift.spendPerGroupMinor,
    liftBps: lift.liftBps,
    ci95Bps: lift.ci95Bps,
    incrementalSpendMinor: lift.incrementalSpendMinor,
    costPerIncrementalMinor: lift.costPerIncrementalMinor,
  };
}
