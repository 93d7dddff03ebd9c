// Prisma CLI configuration. The CLI is used only for `prisma generate` (offline);
// migrations are applied by prisma/migrate.ts (see DESIGN.md, "Prisma without network access").
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/unused' },
});
