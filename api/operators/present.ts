// Operators as the operator API shows them: a token's secret only once, when it is made.
import type { Operator } from '../../prisma/generated/client';

export function presentOperator(operator: Operator) {
  return {
    id: operator.id,
    name: operator.name,
    email: operator.email,
    roles: operator.roles,
    status: operator.status,
    createdAt: operator.createdAt.toISOString(),
    updatedAt: operator.updatedAt.toISOString(),
  };
}

export function presentOperatorWithToken(operator: Operator, secret: string) {
  return { ...presentOperator(operator), token: secret };
}
