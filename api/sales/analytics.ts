// Helpers shared by the analytics endpoints: the sales they read (types, default cleaning), the calendar months
// their monthly windows cover, and the percentage and direction rules (docs/methods.md).
import { cacheKey } from '../cache';
import type { Location } from '../location';
import { round2, z } from '../params';
import type { Call } from '../platform';
import { cleanSales, DEFAULT_TYPES, memoryIndexFor, salesWhere, zoneQueryOf } from './filter';

/** DEFAULT_TYPES as the `selection` of the ventes_mensuelles_departements mart. */
const DEFAULT_SELECTION = 'sauf_terrain';

export function typesOf(typeLocal: string | undefined): string[] {
  return typeLocal ? [typeLocal] : DEFAULT_TYPES;
}

/** A calendar month as a number of months since year 0 (2024-01 → 2024 × 12), so that windows are plain arithmetic. */
export type MonthIndex = number;

export const monthOf = (isoDate: string): MonthIndex => Number(isoDate.slice(0, 4)) * 12 + Number(isoDate.slice(5, 7)) - 1;
export const monthLabel = (m: MonthIndex): string => `${Math.floor(m / 12)}-${String((m % 12) + 1).padStart(2, '0')}`;
export const firstDay = (m: MonthIndex): string => `${monthLabel(m)}-01`;
export function lastDay(m: MonthIndex): string {
  const d = new Date(Date.UTC(Math.floor(m / 12), (m % 12) + 1, 0));
  return d.toISOString().slice(0, 10);
}

/**
 * The last month a monthly window may end on: the last complete calendar month before today, or the last month the
 * served sales reach when DVF's publication lags behind (otherwise every recent month would read as zero activity).
 */
export async function lastCompleteMonth(call: Call): Promise<MonthIndex> {
  const beforeToday = monthOf(call.now.toISOString()) - 1;
  // One row that only changes with the serving file (part of the key): kept in the response cache for an hour.
  const key = cacheKey(['ventes_mensuelles_couverture', call.ctx.db.file]);
  let last = call.ctx.cache.get(key)?.value as string | null | undefined;
  if (last === undefined) {
    const [row] = await call.ctx.db.query<{ dernier_mois: string | null }>('select dernier_mois from ventes_mensuelles_couverture');
    last = row?.dernier_mois ?? null;
    call.ctx.cache.set(key, last, 3600);
  }
  return last ? Math.min(beforeToday, monthOf(last)) : beforeToday;
}

interface MonthStats {
  mois: string;
  n: number;
  m_med: number | null;
}

/**
 * Clean sales and their median €/m² per month (months without sales have no row). A postal code or a commune is read
 * from the sales (a few row groups of the sorted `ventes`); a whole département, up to 5 years of hundreds of thousands
 * of sales at France scale, from the ventes_mensuelles_departements mart, which holds the same exact figures.
 */
export async function monthlyStats(call: Call, location: Location, types: string[], from: MonthIndex, to: MonthIndex): Promise<MonthStats[]> {
  const filter = cleanSales(location, types, firstDay(from), lastDay(to));
  const memory = memoryIndexFor(call, filter);
  if (memory) return memory.byPeriod(zoneQueryOf(filter), 1).map(({ start, stats }) => ({ mois: start, n: stats.count, m_med: stats.price_per_m2.median }));
  return monthlyStatsSql(call, location, types, from, to);
}

/** monthlyStats in SQL (the mart for a département, `ventes` otherwise): the path of radius searches, and the
 * independent computation the tests compare to. */
export async function monthlyStatsSql(call: Call, location: Location, types: string[], from: MonthIndex, to: MonthIndex): Promise<MonthStats[]> {
  if (location.kind === 'code_departement') {
    return call.ctx.db.query<MonthStats>(
      `select mois, nb_ventes as n, prix_m2_median as m_med from ventes_mensuelles_departements
       where code_departement = $loc_dep and selection = $selection and mois between $from::DATE and $to::DATE`,
      { loc_dep: location.params.loc_dep, selection: types.length === 1 ? types[0] : DEFAULT_SELECTION, from: firstDay(from), to: firstDay(to) },
    );
  }
  const { where, params } = salesWhere(cleanSales(location, types, firstDay(from), lastDay(to)));
  return call.ctx.db.query<MonthStats>(
    `select date_trunc('month', date_mutation)::DATE as mois, count(*) as n, median(prix_m2) as m_med
     from ventes where ${where} group by mois`,
    params,
  );
}


/** Variation from `before` to `after` in percent, rounded to the hundredth; null when either is missing or before is 0. */
export function pctChange(after: number | null | undefined, before: number | null | undefined): number | null {
  if (after == null || before == null || before === 0) return null;
  return round2((after / before - 1) * 100);
}

export const DIRECTIONS = ['increasing', 'decreasing', 'stable'] as const;
type Direction = (typeof DIRECTIONS)[number];

/** increasing above +2 %, decreasing below −2 %, stable otherwise (specification, market-overview). */
export function direction(pct: number | null): Direction | null {
  if (pct === null) return null;
  return pct > 2 ? 'increasing' : pct < -2 ? 'decreasing' : 'stable';
}

export const zoneSchema = z
  .object({
    code_postal: z.string().nullable(),
    commune: z.string().nullable(),
    code_departement: z.string().nullable(),
  })
  .openapi('Zone');

export function zoneOf(location: Location): z.output<typeof zoneSchema> {
  const { code_postal, commune, code_departement } = location.echo;
  return { code_postal, commune, code_departement };
}
