// Purchasing power (price-to-income ratio) attached to market statistics. Income data (INSEE Filosofi) is not
// loaded yet, so the block always answers available: false with the reason; it never fails the base response.
import { z } from './params';
import type { Call } from './platform';
import type { SalesFilter } from './routes/stats/market';

export const pouvoirAchatSchema = z
  .object({
    available: z.boolean(),
    ratio_prix_revenu: z.number().nullable(),
    revenu_median_annuel_uc: z.number().nullable(),
    annee_reference: z.number().nullable(),
    code_commune: z.string().nullable(),
    message: z.string().optional().openapi({ description: 'Why the ratio is not available.' }),
  })
  .openapi('PouvoirAchatSummary');

export type PouvoirAchat = z.output<typeof pouvoirAchatSchema>;

export async function pouvoirAchatFor(_call: Call, filter: SalesFilter): Promise<PouvoirAchat> {
  const code = filter.location.communes.length === 1 ? filter.location.communes[0].code : null;
  return {
    available: false,
    ratio_prix_revenu: null,
    revenu_median_annuel_uc: null,
    annee_reference: null,
    code_commune: code,
    message: 'income data (INSEE Filosofi) is not loaded on this server yet',
  };
}
