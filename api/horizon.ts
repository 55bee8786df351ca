// What the loaded data covers, said the same way by every endpoint (docs/decisions.md, "Data horizon"):
// - a window of sales that reaches past the zone's last loaded sale (or starts before its first) gets a notice with
//   the last loaded date and how many of the window's months hold data; the window itself is left as defined;
// - a source the answer needs that has no data at all for the zone (DPE, BDNB, SIRENE, Filosofi, ANIL, or DVF itself)
//   gets a notice naming it and pointing to /v1/meta/sources, and the call is not charged.
// Endpoints declare what they read (EndpointSpec.coverage); the platform (callEndpoint) asks assessCoverage() before
// the charge and appends its notices to the answer's `notice`.
import { upgradeRecord, type PartitionRecord } from '../lib/lake';
import { communesOfPostalCode } from '../lib/geo';
import { sourceDeclaration } from '../lib/sources';
import { referenceDate } from '../lib/valuation/reference';
import { cacheKey } from './cache';
import type { Location } from './location';
import { isoDay } from './params';
import type { Call } from './platform';

export type SourceName = 'dvf' | 'dpe' | 'bdnb' | 'sirene' | 'filosofi' | 'anil';

/** How sources are named to users. */
export const SOURCE_LABELS: Record<SourceName, string> = {
  dvf: 'DVF (sales)',
  dpe: 'DPE (energy diagnostics)',
  bdnb: 'BDNB (buildings)',
  sirene: 'SIRENE (businesses)',
  filosofi: 'Filosofi (incomes)',
  anil: 'ANIL (rents)',
};

/** The zone an answer reads: a resolved location, département codes, or a point. */
export type CoverageZone = Location | { departements: string[] } | { latitude: number; longitude: number };

/** What an answer reads, declared by its endpoint. */
export interface Coverage {
  zone: CoverageZone;
  /** The window of sales (days, both included) the answer reads, if any: checked against the zone's loaded sales. */
  window?: { date_debut: string; date_fin: string };
  /** The sources the answer needs; DVF is implied by `window`. */
  sources?: SourceName[];
}

export interface CoverageAssessment {
  notices: string[];
  /** The names of the needed sources with no data for the zone: the call is then not charged. */
  missing: SourceName[];
}

/** Entries computed from the serving file live as long as it does (the file is part of the key); an hour is plenty. */
const TTL_SECONDS = 3600;

async function cached<T>(call: Call, parts: unknown[], compute: () => Promise<T>): Promise<T> {
  const key = cacheKey(['coverage', call.ctx.db.file, ...parts]);
  const hit = call.ctx.cache.get(key);
  if (hit) return hit.value as T;
  const value = await compute();
  call.ctx.cache.set(key, value, TTL_SECONDS);
  return value;
}

/** The départements a zone spans: the finest filter's (a code_departement narrows everything else to itself). */
export async function zoneDepartements(call: Call, zone: CoverageZone): Promise<string[]> {
  if ('departements' in zone) return [...new Set(zone.departements)].sort();
  const point = 'echo' in zone ? zone.echo : zone;
  if ('echo' in zone) {
    const loc = zone;
    if (loc.echo.code_departement) return [loc.echo.code_departement];
    if (loc.communes.length) return [...new Set(loc.communes.map((c) => c.departement))].sort();
    if (loc.echo.code_postal) return [...new Set(communesOfPostalCode(loc.echo.code_postal).map((c) => c.departement))].sort();
  }
  if (point.latitude !== null && point.longitude !== null) {
    const { latitude, longitude } = point;
    // The département of the point as the valuation horizon finds it (its cell's, else its nearest sale's).
    const ref = await cached(call, ['point', Math.floor(latitude * 100), Math.floor(longitude * 100)], () =>
      referenceDate((sql, params) => call.ctx.db.query(sql, params), { latitude, longitude, codePostal: null, communeCodes: [] }, isoDay(call.now)),
    );
    return ref.departement ? [ref.departement] : [];
  }
  return [];
}

/** The départements where a source has data; 'all' for a national source that is loaded; [] when not loaded. */
export async function loadedDepartements(call: Call, source: SourceName): Promise<string[] | 'all'> {
  return cached(call, ['loaded', source], async () => {
    const decl = sourceDeclaration(source);
    if (!decl) return [];
    if (decl.partitioning === 'snapshot' || !decl.partitioning.startsWith('departement')) {
      // A snapshot (SIRENE) or a national file: its served table says where it has rows.
      const table = decl.served?.table;
      if (!table) return [];
      const tables = await call.ctx.db.query<{ n: number }>("select count(*)::INTEGER as n from information_schema.tables where table_schema = 'main' and table_name = $t", { t: table });
      if (!tables[0]?.n) return [];
      if (decl.partitioning !== 'snapshot') {
        const [row] = await call.ctx.db.query<{ n: number }>(`select count(*)::INTEGER as n from (select 1 from ${table} limit 1)`);
        return row?.n ? 'all' : [];
      }
      const rows = await call.ctx.db.query<{ d: string }>(`select distinct code_departement as d from ${table} where code_departement is not null`);
      return rows.map((r) => r.d).sort();
    }
    const [meta] = await call.ctx.db.query<{ manifest: string }>('select manifest from meta_manifest');
    const manifest = JSON.parse(meta?.manifest ?? '{}') as { sources?: Record<string, { partitions?: Record<string, PartitionRecord> }> };
    const parts = Object.values(manifest.sources?.[source]?.partitions ?? {}).map(upgradeRecord);
    return [...new Set(parts.filter((p) => p.rows_kept > 0).map((p) => String(p.partition.code_departement)))].sort();
  });
}

/** The first and last loaded sale of some départements (null when none). */
export async function salesSpan(call: Call, departements: string[]): Promise<{ first: string; last: string } | null> {
  if (!departements.length) return null;
  return cached(call, ['span', departements], async () => {
    const [row] = await call.ctx.db.query<{ first: string | null; last: string | null }>(
      `select min(date_mutation)::VARCHAR as first, max(date_mutation)::VARCHAR as last from ventes
       where code_departement in (${departements.map((_, i) => `$d${i}`).join(', ')})`,
      Object.fromEntries(departements.map((d, i) => [`d${i}`, d])),
    );
    return row?.first && row.last ? { first: row.first, last: row.last } : null;
  });
}

const DAY_MS = 86_400_000;
const MONTH_DAYS = 365.25 / 12;

/** Whole months (rounded) of the days from `a` to `b`, both included. */
export function monthsBetween(a: string, b: string): number {
  const days = (Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS + 1;
  return Math.max(0, Math.round(days / MONTH_DAYS));
}

const depLabel = (deps: string[]) => `département${deps.length > 1 ? 's' : ''} ${deps.join(', ')}`;

/**
 * The one wording of a window that reaches past the loaded sales (pure, tested on its own): undefined when the window
 * lies within them. Calendar months decide: a window ending on 31 December of data whose last sale is on the 29th
 * reaches no month without data, and says nothing.
 */
export function horizonNotice(departements: string[], span: { first: string; last: string }, window: { date_debut: string; date_fin: string }): string | undefined {
  const late = window.date_fin.slice(0, 7) > span.last.slice(0, 7);
  const early = window.date_debut.slice(0, 7) < span.first.slice(0, 7);
  if (!late && !early) return undefined;
  const from = early ? span.first : window.date_debut;
  const to = late ? span.last : window.date_fin;
  const held = from <= to ? monthsBetween(from, to) : 0;
  const total = monthsBetween(window.date_debut, window.date_fin);
  const ends = [early ? `start on ${span.first}` : '', late ? `end on ${span.last}` : ''].filter(Boolean).join(' and ');
  return `The loaded sales of ${depLabel(departements)} ${ends}: ${held} of the window's ${total} month${total === 1 ? '' : 's'} hold data.`;
}

/** The one wording of a needed source with no data for the zone. */
export function missingSourceNotice(sources: SourceName[], departements: string[]): string {
  const names = sources.map((s) => SOURCE_LABELS[s]).join(' and ');
  const where = departements.length ? ` for ${depLabel(departements)}` : '';
  return `No ${names} data is loaded${where} (see GET /v1/meta/sources): the figures are empty and this call is not charged.`;
}

/** What the loaded data lacks for an answer: its notices, and the needed sources that have no data for the zone. */
export async function assessCoverage(call: Call, coverage: Coverage): Promise<CoverageAssessment> {
  const departements = await zoneDepartements(call, coverage.zone);
  const needed = [...new Set<SourceName>([...(coverage.window ? ['dvf' as const] : []), ...(coverage.sources ?? [])])];
  const missing: SourceName[] = [];
  if (departements.length) {
    for (const source of needed) {
      const loaded = await loadedDepartements(call, source);
      if (loaded !== 'all' && !departements.some((d) => loaded.includes(d))) missing.push(source);
    }
  }
  const notices = missing.length ? [missingSourceNotice(missing, departements)] : [];
  if (coverage.window && !missing.includes('dvf')) {
    // The départements of the zone whose sales are loaded (a postal code may reach into a département that is not).
    const loaded = await loadedDepartements(call, 'dvf');
    const withSales = loaded === 'all' ? departements : departements.filter((d) => loaded.includes(d));
    const span = await salesSpan(call, withSales);
    const notice = span && horizonNotice(withSales, span, coverage.window);
    if (notice) notices.push(notice);
  }
  return { notices, missing };
}
