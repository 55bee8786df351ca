// Household income (INSEE Filosofi, mart revenus_communes) for the purchasing-power figures: which commune's income
// line a zone uses, the lookup, and the pouvoir_achat block of stats/market (never fails the base response).
import { communesOfPostalCode, type Commune } from '../../../lib/geo';
import type { Location } from '../../location';
import { round2, z } from '../../params';
import type { Call } from '../../platform';
import type { MarketStats } from '../../sales/filter';

export const pouvoirAchatSchema = z
  .object({
    available: z.boolean(),
    ratio_prix_revenu: z.number().nullable().openapi({
      description:
        'Median sale price of this response (its zone, types and window) divided by the median annual income per consumption unit. ' +
        'GET /v1/stats/pouvoir-achat computes it on houses and flats only, over a window capped on large zones, so the two can differ.',
    }),
    revenu_median_annuel_uc: z.number().nullable(),
    annee_reference: z.number().nullable().openapi({ description: 'Income vintage (Filosofi year).' }),
    code_commune: z.string().nullable(),
    message: z.string().optional().openapi({ description: 'Why the ratio is not available.' }),
    notice: z.string().optional().openapi({ description: 'Which commune’s income a postal code spanning several communes uses.' }),
  })
  .openapi('PouvoirAchatSummary');

export type PouvoirAchat = z.output<typeof pouvoirAchatSchema>;

export interface Income {
  annee_reference: number;
  revenu_median_annuel_uc: number | null;
  nb_menages_fiscaux: number | null;
  statut: string;
}

/** The communes a postal-code zone covers: those the code serves, within the zone's département when one is given. */
export function servedCommunes(location: Location): Commune[] {
  const dep = location.echo.code_departement;
  return location.echo.code_postal ? communesOfPostalCode(location.echo.code_postal).filter((c) => !dep || c.departement === dep) : [];
}

/**
 * The commune whose income line describes a zone: the commune itself (an arrondissement has its own line), the whole
 * city when the zone is all its arrondissements, and for a postal code the most populous commune it serves.
 */
export function incomeCommune(location: Location): { code: string | null; notice?: string } {
  const cities = [...new Set(location.communes.map((c) => (c.type === 'arrondissement-municipal' && c.parent ? c.parent : c.code)))];
  if (location.communes.length === 1) return { code: location.communes[0].code };
  if (location.communes.length > 1 && cities.length === 1) return { code: cities[0] };
  if (location.echo.code_postal && !location.communes.length) {
    const served = servedCommunes(location).sort((a, b) => (b.population ?? 0) - (a.population ?? 0));
    if (!served.length) return { code: null };
    const notice = served.length > 1
      ? `postal code ${location.echo.code_postal} serves ${served.length} communes; the income of the most populous, ${served[0].code} (${served[0].nom}), is used.`
      : undefined;
    return { code: served[0].code, notice };
  }
  return { code: null };
}

export async function incomeOf(call: Call, code: string): Promise<Income | null> {
  const [row] = await call.ctx.db.query<{ annee_revenus: number; revenu_median_uc: number | null; nb_menages_fiscaux: number | null; revenu_median_statut: string }>(
    'select annee_revenus, revenu_median_uc, nb_menages_fiscaux, revenu_median_statut from revenus_communes where code_commune = $code',
    { code },
  );
  if (!row) return null;
  return { annee_reference: row.annee_revenus, revenu_median_annuel_uc: row.revenu_median_uc, nb_menages_fiscaux: row.nb_menages_fiscaux, statut: row.revenu_median_statut };
}

/** Why an income (and so the ratio) is missing; undefined when it is there. */
export function incomeMessage(code: string, income: Income | null): string | undefined {
  if (!income) return `no income data (INSEE Filosofi) is loaded for commune ${code}`;
  if (income.statut === 'secret') return `the median income of commune ${code} is under statistical secrecy in INSEE Filosofi ${income.annee_reference} (too few households)`;
  if (income.statut !== 'ok') return `INSEE Filosofi ${income.annee_reference} publishes no median income for commune ${code}`;
  return undefined;
}

export function priceToIncome(price: number | null, income: Income | null): number | null {
  return price !== null && income?.revenu_median_annuel_uc ? round2(price / income.revenu_median_annuel_uc) : null;
}

/** The pouvoir_achat block of stats/market: the income lookup runs while the statistics are computed. */
export async function pouvoirAchatFor(call: Call, location: Location, stats: Promise<MarketStats>): Promise<PouvoirAchat> {
  const { code, notice } = incomeCommune(location);
  const none = { available: false, ratio_prix_revenu: null, revenu_median_annuel_uc: null, annee_reference: null, code_commune: code };
  if (!code) return { ...none, message: 'pouvoir_achat applies to a postal code or a commune' };
  try {
    const [income, s] = await Promise.all([incomeOf(call, code), stats]);
    const message = incomeMessage(code, income) ?? (s.price.median === null ? 'no sale matches the filters' : undefined);
    return {
      available: message === undefined,
      ratio_prix_revenu: priceToIncome(s.price.median, income),
      revenu_median_annuel_uc: income?.revenu_median_annuel_uc ?? null,
      annee_reference: income?.annee_reference ?? null,
      code_commune: code,
      ...(message ? { message } : {}),
      ...(notice ? { notice } : {}),
    };
  } catch (e) {
    return { ...none, message: `income data could not be read (${(e as Error).message})` };
  }
}
