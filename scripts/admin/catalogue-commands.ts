// Admin CLI commands for the merchant catalogue. They call the same functions as the
// operator API, so both paths validate and audit alike.
import { resolve } from 'node:path';
import { importCatalogueFile } from '../../api/catalogue/import';
import { presentAdminMerchant } from '../../api/catalogue/present';
import { intFlag, required, type Command } from './command';

export const catalogueCommands: Command[] = [
  {
    name: 'catalogue:import',
    usage: 'catalogue:import <file.json>',
    summary: 'Upsert merchants and offers (fixed ids) from a catalogue file; safe to re-run',
    async run(args, ctx) {
      ctx.print(await importCatalogueFile(ctx.db, resolve(required(args, 0, 'file.json')), ctx.actor, ctx.now));
    },
  },
  {
    name: 'merchant:list',
    usage: 'merchant:list [--limit N] [--q text]',
    summary: 'List catalogue merchants by name, with their offer count',
    async run(args, ctx) {
      const take = Math.min(Math.max(intFlag(args, 'limit') ?? 50, 1), 500);
      const merchants = await ctx.db.merchant.findMany({
        where: args.flags.q ? { name: { contains: args.flags.q, mode: 'insensitive' } } : {},
        orderBy: [{ name: 'asc' }, { id: 'asc' }],
        take,
        include: { _count: { select: { offers: true } } },
      });
      ctx.print(merchants.map((m) => ({ ...presentAdminMerchant(m), offerCount: m._count.offers })));
    },
  },
];
