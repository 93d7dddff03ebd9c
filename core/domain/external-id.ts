// The issuer's own ids (cardholders, cards, events): one rule for every place that takes one.

/** Issuer-assigned ids: 1 to 128 visible ASCII characters. */
export const externalIdSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[!-~]+$',
  description: "The issuer's own id: 1 to 128 visible ASCII characters.",
} as const;
