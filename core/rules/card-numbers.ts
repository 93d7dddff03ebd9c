// Card numbers (PANs) in text (API.md, "Card data and erasure"; decision 0054): a run of 13 to
// 19 digits, spaces or dashes allowed between them, that passes the Luhn check. The service
// refuses such text wherever a request carries it and writes it nowhere, so that it stays out of
// PCI DSS's cardholder-data environment: what is never stored needs no protecting.
//
// A run is made of digit groups joined by one space or dash; a card number is any stretch of
// whole consecutive groups of 13 to 19 digits ("order 12345 4111 1111 1111 1111" holds one), never
// part of a group (a 25-digit reference is not a card number). A UUID's groups of hexadecimal that
// happen to be all digits are not a card number's either: our ids and most external ids are UUIDs,
// and refusing one in every few tens of thousands would be a fault of ours.

const MIN_DIGITS = 13;
const MAX_DIGITS = 19;
// Zeros pass the Luhn check, and no card number is all zeros: a placeholder, not an account.
const NONZERO = /[1-9]/;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** The Luhn (mod 10) check of a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = digits.length - 1, double = false; i >= 0; i--, double = !double) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

const isDigit = (code: number) => code >= 48 && code <= 57;
const isSeparator = (code: number) => code === 32 || code === 45;

/**
 * A run long enough for a card number at all: digits joined by single spaces or dashes, 13 of
 * them. The check every string pays, one loop over its characters with nothing allocated; a
 * timestamp (its date 8 digits, its time apart) or a UUID (letters between its digits) ends here.
 */
function mayHoldOne(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (isDigit(code)) {
      if (++run >= MIN_DIGITS) return true;
    } else if (!(run > 0 && isSeparator(code) && i + 1 < text.length && isDigit(text.charCodeAt(i + 1)))) run = 0;
  }
  return false;
}

/** Each card number in the text: its start and end (exclusive) in the text. */
export function cardNumbersIn(text: string): Array<{ start: number; end: number }> {
  if (!mayHoldOne(text)) return [];
  const scanned = text.replace(UUID, (uuid) => ' '.repeat(uuid.length));
  const found: Array<{ start: number; end: number }> = [];
  for (const run of runsOf(scanned)) {
    // Every stretch of whole consecutive groups, longest first from each group, the first card
    // number found from a group ending the search there.
    let from = 0;
    while (from < run.length) {
      let digits = '';
      let hit = -1;
      for (let to = from; to < run.length && digits.length + run[to].digits.length <= MAX_DIGITS; to++) {
        digits += run[to].digits;
        if (digits.length >= MIN_DIGITS && luhnValid(digits) && NONZERO.test(digits)) hit = to;
      }
      if (hit >= 0) {
        found.push({ start: run[from].start, end: run[hit].start + run[hit].digits.length });
        from = hit + 1;
      } else from++;
    }
  }
  return found;
}

/** Groups of digits joined by single spaces or dashes, each run of them apart. */
function runsOf(text: string): Array<Array<{ start: number; digits: string }>> {
  const runs: Array<Array<{ start: number; digits: string }>> = [];
  let run: Array<{ start: number; digits: string }> = [];
  let i = 0;
  while (i < text.length) {
    if (!isDigit(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const start = i;
    while (i < text.length && isDigit(text.charCodeAt(i))) i++;
    run.push({ start, digits: text.slice(start, i) });
    // One separator followed by a digit continues the run; anything else ends it.
    if (!(i + 1 < text.length && isSeparator(text.charCodeAt(i)) && isDigit(text.charCodeAt(i + 1)))) {
      runs.push(run);
      run = [];
    } else i++;
  }
  return runs;
}

export function holdsCardNumber(text: string): boolean {
  return cardNumbersIn(text).length > 0;
}

/** The text with each card number replaced, for what must be written somewhere (a log line, a span). */
export function redactCardNumbers(text: string): string {
  const found = cardNumbersIn(text);
  if (found.length === 0) return text;
  let out = '';
  let at = 0;
  for (const { start, end } of found) {
    out += `${text.slice(at, start)}[card number]`;
    at = end;
  }
  return out + text.slice(at);
}
