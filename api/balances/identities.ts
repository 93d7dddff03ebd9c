// The identities a rewards summary keeps (API.md, Rewards and reconciliation), written once as
// data: the route's description and the schema's are rendered from them, and the tests check every
// summary they receive against them (test/helpers/contract.ts), so the words cannot drift from the
// figures.
import type { RewardsSummary } from './summary';

type Part<T> = { [K in keyof T]: T[K] extends number ? K : never }[keyof T] & string;

/** One side of an identity: fields added (`+`) or subtracted (`-`). */
type Side<T> = Array<[sign: '+' | '-', field: Part<T>]>;

export interface Identity<T> {
  left: Side<T>;
  right: Side<T>;
}

export const CASHBACK_IDENTITIES: Identity<RewardsSummary['cashback']>[] = [
  {
    left: [['+', 'balanceMinor']],
    right: [
      ['+', 'onHoldMinor'],
      ['+', 'payableMinor'],
    ],
  },
  {
    left: [
      ['+', 'earnedMinor'],
      ['-', 'clawedBackMinor'],
      ['+', 'adjustedMinor'],
      ['-', 'paidOutMinor'],
    ],
    right: [
      ['+', 'balanceMinor'],
      ['-', 'owedMinor'],
    ],
  },
];

export const BRANDED_IDENTITIES: Identity<RewardsSummary['brandedBalance']>[] = [
  {
    left: [
      ['+', 'earnedMinor'],
      ['+', 'adjustedMinor'],
    ],
    right: [
      ['+', 'availableMinor'],
      ['+', 'notYetAvailableMinor'],
      ['+', 'spentMinor'],
      ['+', 'expiredMinor'],
      ['+', 'clawedBackMinor'],
    ],
  },
];

function sideText<T>(side: Side<T>): string {
  return side
    .map(([sign, field], i) => (i === 0 ? (sign === '-' ? `-${field}` : field) : `${sign} ${field}`))
    .join(' ');
}

/** `a + b = c - d`, as the OpenAPI document states it. */
export function identityText<T>(identity: Identity<T>): string {
  return `${sideText(identity.left)} = ${sideText(identity.right)}`;
}

function sum<T>(values: T, side: Side<T>): number {
  return side.reduce((total, [sign, field]) => total + (sign === '+' ? 1 : -1) * (values[field] as number), 0);
}

/** Each identity the summary breaks, as text with its figures; empty when it keeps them all. */
export function brokenIdentities(summary: RewardsSummary): string[] {
  const broken: string[] = [];
  const check = <T>(of: string, values: T, identities: Identity<T>[]) => {
    for (const identity of identities) {
      const [left, right] = [sum(values, identity.left), sum(values, identity.right)];
      if (left !== right) broken.push(`${of}: ${identityText(identity)} (${left} != ${right})`);
    }
  };
  check('cashback', summary.cashback, CASHBACK_IDENTITIES);
  check('brandedBalance', summary.brandedBalance, BRANDED_IDENTITIES);
  return broken;
}
