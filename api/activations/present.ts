// A group's activation of a merchant as the API shows it.
import type { Activation } from '../../prisma/generated/client';
import { iso, presentActivationSummary } from '../catalogue/present';

export function presentActivation(chgId: string, merchantId: string, a: Activation | null) {
  return {
    merchantId,
    chgId,
    ...presentActivationSummary(a),
    deactivatedAt: a ? iso(a.deactivatedAt) : null,
  };
}
