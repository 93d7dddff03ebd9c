// Checks on a group body that JSON schema cannot express: ids repeated within the body,
// a real IANA time zone, a settings object of bounded size.
import { errors, type FieldError } from '../../core/errors';
import { MAX_SETTINGS_BYTES, type GroupInput } from './schemas';

export function checkGroupSemantics(input: GroupInput, pathPrefix = ''): void {
  const repeated = repeatedExternalIds(input, pathPrefix);
  // Its own reasonCode: the body is well formed by the schema, which cannot say "unique by a field".
  if (repeated.length > 0) {
    throw errors.validation(
      'duplicate_external_id',
      'A cardholder or card externalId appears more than once in the group.',
      repeated,
    );
  }
  const problems: FieldError[] = [];
  const timezone = input.settings.timezone;
  if (timezone !== undefined && !isTimeZone(timezone)) {
    problems.push({ path: `${pathPrefix}/settings/timezone`, message: 'is not an IANA time zone' });
  }
  if (Buffer.byteLength(JSON.stringify(input.settings)) > MAX_SETTINGS_BYTES) {
    problems.push({ path: `${pathPrefix}/settings`, message: `must serialize to at most ${MAX_SETTINGS_BYTES} bytes` });
  }
  if (problems.length > 0) throw errors.validation('invalid_body', 'The request body is invalid.', problems);
}

/** Cardholder externalIds repeated in the body, and card externalIds repeated across all its cardholders. */
function repeatedExternalIds(input: GroupInput, pathPrefix: string): FieldError[] {
  const problems: FieldError[] = [];
  const cardholderIds = new Map<string, number>();
  const cardIds = new Map<string, string>();
  input.cardholders.forEach((cardholder, i) => {
    const first = cardholderIds.get(cardholder.externalId);
    if (first !== undefined) {
      problems.push({ path: `${pathPrefix}/cardholders/${i}/externalId`, message: `repeats cardholder ${first}` });
    }
    cardholderIds.set(cardholder.externalId, i);
    cardholder.cards.forEach((card, j) => {
      const path = `${pathPrefix}/cardholders/${i}/cards/${j}/externalId`;
      const seen = cardIds.get(card.externalId);
      if (seen !== undefined) problems.push({ path, message: `repeats the card at ${seen}` });
      cardIds.set(card.externalId, path);
    });
  });
  return problems;
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
