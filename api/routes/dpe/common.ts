// What the DPE endpoints share: the energy classes, their location rules (code_postal, commune, code_departement;
// never a radius), the two-value type_local, and per-class price statistics over the matched-sales marts.
import type { Params } from '../../../lib/duck';
import { ApiError } from '../../errors';
import { locationFields, resolveLocation, type Location, type LocationInput, type LocationKind } from '../../location';
import { enumParam, round2, z } from '../../params';
import type { Call } from '../../platform';

export const CLASSES = ['A', 'B', 'C', 'D', 'E', 'F', 'G'] as const;
export type Classe = (typeof CLASSES)[number];

/** Below this many sales a class's figures are flagged statistically fragile; class D needs it for prime_verte. */
export const MIN_CLASS_SALES = 30;

/** latitude/longitude are parsed only to answer unsupported_location, not silently ignored. */
export const dpeLocationFields = locationFields;

export const typeLocal2 = enumParam(['Maison', 'Appartement'], 'Maison or Appartement (default: both); filters the DVF side.').optional();

/** The zone of a DPE endpoint: latitude/longitude are unsupported_location; `accept` lists the accepted filters. */
function dpeLocation(q: LocationInput & Record<string, unknown>, accept: LocationKind[] = ['code_postal', 'commune', 'code_departement']): Location {
  if (q.latitude !== undefined || q.longitude !== undefined) {
    throw new ApiError('unsupported_location', `latitude/longitude searches are not supported here (use ${accept.join(', ')})`);
  }
  return resolveLocation(q, { accept });
}

/** The zone as the responses' `filters` echo it. */
function zoneEcho(location: Location): { code_postal: string | null; commune: string | null; code_departement: string | null } {
  return { code_postal: location.echo.code_postal, commune: location.echo.commune, code_departement: location.echo.code_departement };
}

export interface ClassRow {
  classe: Classe;
  nb: number;
  median: number | null;
  p25: number | null;
  p75: number | null;
}

/** Count and €/m² quartiles per class of `table` (dpe_ventes or dpe_ventes_200m) under a WHERE; absent classes nb 0. */
export async function classStats(call: Call, table: 'dpe_ventes' | 'dpe_ventes_200m', where: string, params: Params): Promise<Map<Classe, ClassRow>> {
  // One list quantile (the median is the 0.5 quantile) rather than three aggregates: the values are gathered once.
  const rows = await call.ctx.db.query<{ classe: Classe; nb: number; q: number[] }>(
    `select classe_energie as classe, count(*) as nb, quantile_cont(prix_m2, [0.25, 0.5, 0.75]) as q
     from ${table} where ${where} and classe_energie is not null and prix_m2 is not null group by 1`,
    params,
  );
  const out = new Map<Classe, ClassRow>(CLASSES.map((c) => [c, { classe: c, nb: 0, median: null, p25: null, p75: null }]));
  for (const r of rows) out.set(r.classe, { classe: r.classe, nb: r.nb, p25: r.q[0], median: r.q[1], p75: r.q[2] });
  return out;
}

/** Relative gap of a class's median over class D's (0.1 = 10 % more per m²), to 4 decimals; null without data. */
export function gapVsD(stats: Map<Classe, ClassRow>, c: Classe): number | null {
  const d = stats.get('D')!.median;
  const x = stats.get(c)!.median;
  return d === null || x === null ? null : Math.round((x / d - 1) * 10_000) / 10_000;
}

export const pct = (part: number, total: number) => (total > 0 ? round2((part / total) * 100) : null);

/** Conditions over a sales mart (dpe_ventes, dpe_ventes_200m): the zone and, when given, the dwelling type. */
function martWhere(location: Location, typeLocal: string | undefined, extra: string[] = []): { where: string; params: Params } {
  const params: Params = { ...location.params };
  const where = [location.where, ...extra];
  if (typeLocal) {
    where.push('type_local = $type_local');
    params.type_local = typeLocal;
  }
  return { where: where.join(' and '), params };
}

/** What every DPE endpoint's `prepare` returns: the SQL condition of its zone (and filters), the location's notices,
 * and the zone as the responses' `filters` echo it. */
export interface DpeZone {
  where: string;
  params: Params;
  notices: string[];
  zone: ReturnType<typeof zoneEcho>;
  /** The resolved location, for the coverage check (api/horizon.ts). */
  location: Location;
}

/**
 * The zone of a DPE endpoint resolved (`accept`: the location filters it takes), with `type_local` when given and
 * further conditions (`where`, their `params` bound alongside).
 */
export function dpeZone(
  q: LocationInput & Record<string, unknown>,
  opts: { accept?: LocationKind[]; typeLocal?: string; where?: string[]; params?: Params } = {},
): DpeZone {
  const location = dpeLocation(q, opts.accept);
  const { where, params } = martWhere(location, opts.typeLocal, opts.where);
  return { where, params: { ...params, ...opts.params }, notices: location.notices, zone: zoneEcho(location), location };
}

/** The responses' optional `notice`: the location's notices joined, or nothing. */
export const noticeOf = (notices: string[]): { notice?: string } => (notices.length ? { notice: notices.join(' ') } : {});

export const classStatsSchema = z.object({
  nb: z.number().int(),
  prix_m2_median: z.number().nullable(),
  prix_m2_p25: z.number().nullable(),
  prix_m2_p75: z.number().nullable(),
});
