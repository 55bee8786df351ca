// GET /v1/stats/pouvoir-achat (5 credits): years of median income (INSEE Filosofi, per consumption unit) needed to buy
// the median property of a postal code or commune, with the income vintage and its gap to the sales.
import { getCommune } from '../../../lib/geo';
import { ApiError, invalidParams } from '../../errors';
import { incomeCommune, incomeMessage, incomeOf, priceToIncome, servedCommunes } from './income';
import { locationFields, RADIUS_PARAMS, resolveLocation } from '../../location';
import { dateParam, enumParam, inseeCodeParam, isoDay, round2, yearsBefore, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { cleanSales, dateWindow, DEFAULT_WINDOW_YEARS, salesWhere } from '../../sales/filter';

/** A zone is large when the communes it covers total this many inhabitants (Paris, Lyon, Marseille, big cities). */
const LARGE_ZONE_POPULATION = 100_000;
const LARGE_ZONE_WINDOW_YEARS = 1;

const query = z.object({
  ...locationFields,
  code_commune: inseeCodeParam('5-character INSEE code (2A/2B in Corsica); bypasses commune name resolution.', { examples: ['69383'] }).optional(),
  type_local: enumParam(['Maison', 'Appartement'], 'Maison or Appartement (default: both).').optional(),
  date_debut: dateParam(`First day of the sales window (default ${DEFAULT_WINDOW_YEARS} years before date_fin; capped to ${LARGE_ZONE_WINDOW_YEARS} year on large zones, with a notice).`, '2024-01-01').optional(),
  date_fin: dateParam('Last day of the sales window (default: today).', '2024-12-31').optional(),
});

const response = z.object({
  count: z.number().int().openapi({ description: 'DVF sales in the window.' }),
  prix_median: z.number().nullable(),
  prix_bien_median: z.number().nullable().openapi({ description: 'Same as prix_median.' }),
  prix_m2_median: z.number().nullable(),
  surface_median: z.number().nullable(),
  code_commune: z.string().nullable().openapi({ description: 'The commune (or arrondissement) whose income is used.' }),
  annee_reference: z.number().nullable().openapi({ description: 'Income vintage (Filosofi year); null when no income data is loaded.' }),
  revenu_median_annuel_uc: z.number().nullable(),
  nb_menages_fiscaux: z.number().nullable(),
  ratio_prix_revenu: z.number().nullable().openapi({ description: 'prix_median / revenu_median_annuel_uc.' }),
  message: z.string().optional().openapi({ description: 'Why ratio_prix_revenu is null (statistical secrecy, no income data, no sale).' }),
  dvf_period: z.object({ date_debut: z.string(), date_fin: z.string() }),
  vintage_gap_years: z.number().int().nullable().openapi({ description: 'Year of the latest sale in the window minus the income vintage.' }),
  vintage_note: z.string().optional(),
  filters: z.object({ code_postal: z.string().nullable(), commune: z.string().nullable(), code_commune: z.string().nullable(), type_local: z.string().nullable() }),
  notice: z.string().optional(),
});

export const statsPouvoirAchat = defineEndpoint({
  method: 'get',
  path: '/v1/stats/pouvoir-achat',
  tag: 'Market statistics',
  summary: 'Price-to-income ratio of a postal code or commune',
  description:
    'Median sale price (clean DVF sales: no bulk sale, outlier or VEFA) divided by the median disposable income per consumption unit ' +
    `(INSEE Filosofi) of the commune. Zones of ${LARGE_ZONE_POPULATION.toLocaleString('en-US')} inhabitants or more have their window capped to ` +
    `${LARGE_ZONE_WINDOW_YEARS} year. code_departement alone and latitude/longitude are unsupported_location.`,
  query,
  undocumentedQuery: RADIUS_PARAMS,
  response,
  credits: 5,
  errors: ['missing_location', 'unsupported_location'],
  prepare({ query: q }, { now }) {
    if (q.latitude !== undefined || q.longitude !== undefined) throw new ApiError('unsupported_location', 'latitude/longitude searches are not supported by pouvoir-achat (use code_postal, commune or code_commune)');
    if (q.commune !== undefined && q.code_commune !== undefined) throw invalidParams([{ param: 'code_commune', issue: 'give commune or code_commune, not both' }]);
    if (q.code_postal === undefined && q.commune === undefined && q.code_commune === undefined) {
      if (q.code_departement !== undefined) throw new ApiError('unsupported_location', 'code_departement alone is not supported by pouvoir-achat: add code_postal, commune or code_commune');
      throw new ApiError('missing_location', 'a location filter is required: one of code_postal, commune, code_commune');
    }
    const code = q.code_commune?.toUpperCase();
    // The code names its commune directly (75056 = all of Paris); a former code means today's commune nouvelle.
    const current = code === undefined ? undefined : getCommune(code);
    if (code && !current) throw invalidParams([{ param: 'code_commune', issue: `${code} names no commune of the reference geography` }]);
    const location = resolveLocation({ ...q, commune: current?.code ?? q.commune }, { accept: ['code_postal', 'commune', 'code_departement'] });
    const income = incomeCommune(location);
    const notices = [...location.notices, ...(income.notice ? [income.notice] : [])];
    if (current && current.code !== code) notices.push(`${code} is a former commune code: its commune today is ${current.code} (${current.nom}).`);

    const window = dateWindow(q, now, DEFAULT_WINDOW_YEARS);
    const population = (location.communes.length ? location.communes : servedCommunes(location)).reduce((a, c) => a + (c.population ?? 0), 0);
    const earliest = isoDay(yearsBefore(new Date(`${window.date_fin}T00:00:00Z`), LARGE_ZONE_WINDOW_YEARS));
    if (population >= LARGE_ZONE_POPULATION && window.date_debut < earliest) {
      notices.push(`large zone (${population.toLocaleString('en-US')} inhabitants): the window is limited to ${LARGE_ZONE_WINDOW_YEARS} year, date_debut set to ${earliest}.`);
      window.date_debut = earliest;
    } else if (window.notice) notices.push(window.notice);
    const filter = cleanSales(location, q.type_local ? [q.type_local] : ['Maison', 'Appartement'], window.date_debut, window.date_fin);
    const filters = { code_postal: q.code_postal ?? null, commune: code ? null : location.echo.commune, code_commune: current?.code ?? null, type_local: q.type_local ?? null };
    return { filter, incomeCode: income.code, filters, notices };
  },
  coverage: ({ filter }) => ({ zone: filter.location, window: filter, sources: ['filosofi'] }),
  async handler(p, call) {
    const { where, params } = salesWhere(p.filter);
    const [[s], income] = await Promise.all([
      call.ctx.db.query<{ count: number; prix: number | null; prix_m2: number | null; surface: number | null; last_sale: string | null }>(
        `select count(*) as count, median(valeur_fonciere) as prix, median(prix_m2) as prix_m2,
           median(surface_reelle_bati) filter (surface_reelle_bati > 0) as surface, max(date_mutation) as last_sale
         from ventes where ${where}`,
        params,
      ),
      p.incomeCode ? incomeOf(call, p.incomeCode) : Promise.resolve(null),
    ]);
    const prix = round2(s.prix);
    const ratio = priceToIncome(prix, income);
    const message = p.incomeCode
      ? incomeMessage(p.incomeCode, income) ?? (prix === null ? 'no sale matches the filters in the window' : undefined)
      : `no commune is served by postal code ${p.filters.code_postal}`;
    const gap = s.last_sale && income ? Number(String(s.last_sale).slice(0, 4)) - income.annee_reference : null;
    return {
      count: s.count,
      prix_median: prix,
      prix_bien_median: prix,
      prix_m2_median: round2(s.prix_m2),
      surface_median: round2(s.surface),
      code_commune: p.incomeCode,
      annee_reference: income?.annee_reference ?? null,
      revenu_median_annuel_uc: income?.revenu_median_annuel_uc ?? null,
      nb_menages_fiscaux: income?.nb_menages_fiscaux ?? null,
      ratio_prix_revenu: ratio,
      ...(message ? { message } : {}),
      dvf_period: { date_debut: p.filter.date_debut, date_fin: p.filter.date_fin },
      vintage_gap_years: gap,
      ...(gap !== null && gap > 0
        ? { vintage_note: `sales up to ${String(s.last_sale).slice(0, 4)} are compared with ${income!.annee_reference} incomes, the latest INSEE Filosofi vintage loaded (published with a delay of about two years); incomes have usually grown since, so the ratio tends to overstate the effort by ${gap} year(s) of income growth.` }
        : {}),
      filters: p.filters,
      ...(p.notices.length ? { notice: p.notices.join(' ') } : {}),
    };
  },
});
