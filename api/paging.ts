// limit/offset paging of the per-key lists (portfolio, alerts, deliveries), with the next_cursor rule of
// GET /v1/transactions: offset + returned count, null on the last page.
import { numberParam, z } from './params';

/** Beyond any list a key can have (and within SQLite's integer range). */
const MAX_OFFSET = 10_000_000;

export function pagingQuery(max: number, byDefault: number) {
  return z.object({
    limit: numberParam({ min: 1, max, int: true, description: `Page size, 1–${max} (default ${byDefault}).` }).default(byDefault),
    offset: numberParam({ min: 0, max: MAX_OFFSET, int: true, description: '0-based offset; pass next_cursor to get the next page.' }).default(0),
  });
}

export const pageFields = {
  total: z.number().int().openapi({ description: 'Items of the key before paging.' }),
  next_cursor: z.number().int().nullable().openapi({ description: 'offset + returned count; null on the last page.' }),
};

export function pageOf(total: number, offset: number, returned: number): { total: number; next_cursor: number | null } {
  const end = offset + returned;
  return { total, next_cursor: end < total ? end : null };
}
