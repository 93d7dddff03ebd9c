// Loads a catalogue file (merchants with their offers, fixed ids) into the database.
// Idempotent: merchants and offers are upserted by id, so `npm start` can load the
// sandbox catalogue on every start and `catalogue:import` can be re-run safely. The file
// is validated with the operator API's own schemas, so both paths accept the same data.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errors } from '../../core/errors';
import { isId } from '../../core/ids';
import type { Db } from '../../prisma/client';
import { compileBody, toFieldErrors } from '../validation';
import { merchantCreateSchema, offerCreateSchema } from './schemas';
import { saveMerchant, saveOffer } from './store';
import type { MerchantInput, OfferInput } from './schemas';

export const SANDBOX_CATALOGUE_FILE = join(__dirname, '..', '..', 'scripts', 'catalogue', 'sandbox-catalogue.json');

const MAX_MERCHANTS = 10_000;
const validateMerchant = compileBody<MerchantInput>(merchantCreateSchema);
const validateOffer = compileBody<OfferInput>(offerCreateSchema);

export interface ImportResult {
  merchants: { created: number; updated: number; skipped: number };
  offers: { created: number; updated: number; skipped: number };
}

export interface ImportOptions {
  /**
   * Add only what is missing, leaving stored merchants and offers as they are. `npm start`
   * loads the sandbox catalogue this way on every start: operator changes to sandbox
   * merchants survive restarts, and an unchanged catalogue writes no audit entries.
   */
  onlyMissing?: boolean;
}

interface FileMerchant extends MerchantInput {
  id: string;
  offers?: Array<OfferInput & { id: string }>;
}

function parseCatalogue(data: unknown): FileMerchant[] {
  const merchants = (data as { merchants?: unknown })?.merchants;
  if (!Array.isArray(merchants) || merchants.length > MAX_MERCHANTS)
    throw errors.validation(
      'invalid_body',
      `A catalogue is { "merchants": [...] } with at most ${MAX_MERCHANTS} merchants.`,
    );
  return merchants.map((raw, i) => {
    const { id, offers = [], ...merchant } = raw as FileMerchant;
    if (!isId('mp', id)) throw errors.validation('invalid_body', `merchants[${i}].id must be an mp_ id.`);
    if (!validateMerchant(merchant))
      throw errors.validation(
        'invalid_body',
        `merchants[${i}] is invalid.`,
        toFieldErrors(validateMerchant.errors, `/merchants/${i}`),
      );
    const checkedOffers = offers.map((rawOffer, j) => {
      const { id: offerId, ...offer } = rawOffer;
      if (!isId('ofr', offerId))
        throw errors.validation('invalid_body', `merchants[${i}].offers[${j}].id must be an ofr_ id.`);
      if (!validateOffer(offer))
        throw errors.validation(
          'invalid_body',
          `merchants[${i}].offers[${j}] is invalid.`,
          toFieldErrors(validateOffer.errors, `/merchants/${i}/offers/${j}`),
        );
      return { ...offer, id: offerId };
    });
    return { ...merchant, id, offers: checkedOffers };
  });
}

export async function importCatalogue(
  db: Db,
  data: unknown,
  actor: string,
  now: Date,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const merchants = parseCatalogue(data);
  const result: ImportResult = {
    merchants: { created: 0, updated: 0, skipped: 0 },
    offers: { created: 0, updated: 0, skipped: 0 },
  };
  const stored = options.onlyMissing
    ? await storedIds(db, merchants)
    : { merchants: new Set<string>(), offers: new Set<string>() };
  for (const { id, offers, ...merchant } of merchants) {
    if (stored.merchants.has(id)) result.merchants.skipped++;
    else result.merchants[(await saveMerchant(db, merchant, actor, now, id)).created ? 'created' : 'updated']++;
    for (const { id: offerId, ...offer } of offers ?? []) {
      if (stored.offers.has(offerId)) result.offers.skipped++;
      else result.offers[(await saveOffer(db, id, offer, actor, now, offerId)).created ? 'created' : 'updated']++;
    }
  }
  return result;
}

async function storedIds(db: Db, merchants: FileMerchant[]) {
  const merchantIds = merchants.map((m) => m.id);
  const offerIds = merchants.flatMap((m) => (m.offers ?? []).map((o) => o.id));
  const [storedMerchants, storedOffers] = [
    await db.merchant.findMany({ where: { id: { in: merchantIds } }, select: { id: true } }),
    await db.offer.findMany({ where: { id: { in: offerIds } }, select: { id: true } }),
  ];
  return { merchants: new Set(storedMerchants.map((m) => m.id)), offers: new Set(storedOffers.map((o) => o.id)) };
}

export async function importCatalogueFile(
  db: Db,
  file: string,
  actor: string,
  now: Date,
  options: ImportOptions = {},
): Promise<ImportResult> {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw errors.validation('invalid_json', `Cannot read ${file} as JSON: ${(err as Error).message}`);
  }
  return importCatalogue(db, data, actor, now, options);
}
