// Normalisation of card statement descriptors for production merchant matching. Acquirers
// and payment facilitators decorate the merchant name: processor prefixes ("SQ *",
// "TST* "), order references after a '*', store numbers, city and state, ".COM". We strip
// the decorations so that one catalogue pattern ("BLUE BOTTLE") covers every variant.

// Payment facilitator prefixes, longest first so "PAYPAL *" wins over "PY *".
const PROCESSOR_PREFIXES = [
  /^PAYPAL\s*\*\s*/,
  /^SQ\s*\*\s*/,
  /^TST\s*\*\s*/,
  /^TOAST\s*\*\s*/,
  /^GOOGLE\s*\*\s*/,
  /^APLPAY\s+/,
  /^SP\s*\*\s*/,
  /^SP\s+/,
  /^PY\s*\*\s*/,
  /^DD\s*\*\s*/,
  /^IN\s*\*\s*/,
  /^CKO\s*\*\s*/,
  /^POS\s+/,
];

const US_STATES = new Set(
  'AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY DC'.split(
    ' ',
  ),
);

/** Uppercase tokens of the merchant name, without decorations. */
export function descriptorTokens(raw: string): string[] {
  let text = raw.toUpperCase().trim();
  for (const prefix of PROCESSOR_PREFIXES) text = text.replace(prefix, '');
  // After the prefix is gone, a '*' separates the name from an order reference
  // ("AMZN MKTP US*2K4AB12"); keep the name.
  const star = text.indexOf('*');
  if (star > 0) text = text.slice(0, star);
  text = text
    .replace(/^WWW\./, '')
    .replace(/\.(COM|NET|ORG|CO|IO)\b/g, ' ')
    .replace(/#\s*\d+/g, ' ')
    .replace(/['’]/g, '')
    .replace(/[^A-Z0-9]+/g, ' ');
  const tokens = text.split(' ').filter((t) => t.length > 0);
  // Trailing store numbers ("STARBUCKS 12345", "STORE 0457") and a trailing city/state
  // ("OAKLAND CA"): a state code is only dropped when a name is left before it. The city
  // stays, but patterns match a leading run of tokens, so it never gets in the way.
  for (let changed = true; changed && tokens.length > 1;) {
    changed = false;
    const last = tokens[tokens.length - 1];
    if (/^\d+$/.test(last) || (US_STATES.has(last) && tokens.length > 2) || (last === 'STORE' && tokens.length > 1)) {
      tokens.pop();
      changed = true;
    }
  }
  return tokens;
}

export function normalizeDescriptor(raw: string): string {
  return descriptorTokens(raw).join(' ');
}

/**
 * A pattern matches when the descriptor's leading tokens spell it, spaces ignored:
 * "BLUE BOTTLE" matches "BLUE BOTTLE COFFEE" and "BLUEBOTTLE", but "TARGET" does not match
 * "TARGETED ADS" (token boundary). Returns how many characters matched, 0 for no match.
 */
export function patternMatchLength(descriptor: string[], pattern: string): number {
  const wanted = descriptorTokens(pattern).join('');
  if (wanted.length === 0) return 0;
  let spelled = '';
  for (const token of descriptor) {
    spelled += token;
    if (spelled === wanted) return wanted.length;
    if (!wanted.startsWith(spelled)) return 0;
  }
  return 0;
}
