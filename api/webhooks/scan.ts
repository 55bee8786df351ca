// The alert scan: newly imported sales (by `imported_at`, their first import time: DVF is published months after the
// sale) matched against every active alert in ONE DuckDB query, the matches enqueued in the state ((alert, transaction)
// unique). Runs right after every import (the serving database's on-swap hook), over what that import added, and daily
// at 06:00 UTC over the last 48 hours of imports.
import path from 'node:path';
import type { AppContext } from '../context';
import type { Match } from './queue';

/** The service_state row holding the latest `imported_at` already scanned (ISO, UTC). */
const WATERMARK = 'alerts.scan.imported_at';
export const DAILY_WINDOW_MS = 48 * 3600 * 1000;

const ALERT_STRUCT = JSON.stringify([
  {
    id: 'VARCHAR', code_postal: 'VARCHAR', commune: 'VARCHAR', code_departement: 'VARCHAR', type_local: 'VARCHAR',
    prix_min: 'DOUBLE', prix_max: 'DOUBLE', surface_min: 'DOUBLE', surface_max: 'DOUBLE',
  },
]);

// The alerts come in as one JSON parameter (the serving database is read-only and attaches nothing). Each alert is
// joined by equality on its most specific location field (hash joins, not a cross product of alerts × sales), then
// every criterion is applied; the commune is compared upper case without accents, or as an INSEE code.
export const SCAN_SQL = `
with a as (
    select unnest(from_json($alerts::JSON, '${ALERT_STRUCT}'), recursive := true)
),
v as (
    select id, date_mutation, valeur_fonciere, prix_m2, type_local, surface_reelle_bati, nombre_pieces_principales,
        commune, upper(strip_accents(commune)) as commune_norm, code_commune, code_postal, code_departement, latitude, longitude
    from ventes
    where imported_at > $since::TIMESTAMP
),
-- Each alert takes exactly one branch, and a commune name never equals an INSEE code: no pair comes twice, so no
-- deduplication is needed (union all).
pairs as (
    select a.id as alert_id, v.id as sale_id from a join v on v.code_postal = a.code_postal
    union all
    select a.id, v.id from a join v on v.commune_norm = a.commune where a.code_postal is null
    union all
    select a.id, v.id from a join v on v.code_commune = a.commune where a.code_postal is null
    union all
    select a.id, v.id from a join v on v.code_departement = a.code_departement where a.code_postal is null and a.commune is null
)
select a.id as alert_id, v.*
from pairs p
join a on a.id = p.alert_id
join v on v.id = p.sale_id
where (a.commune is null or v.commune_norm = a.commune or v.code_commune = a.commune)
  and (a.code_departement is null or v.code_departement = a.code_departement)
  and (a.type_local is null or v.type_local = a.type_local)
  and (a.prix_min is null or v.valeur_fonciere >= a.prix_min)
  and (a.prix_max is null or v.valeur_fonciere <= a.prix_max)
  and (a.surface_min is null or v.surface_reelle_bati >= a.surface_min)
  and (a.surface_max is null or v.surface_reelle_bati <= a.surface_max)
`;

// The matches (SCAN_SQL) as plain columns (cast here so that DuckDB's own conversion yields strings and numbers): reading a
// million rows as row objects of DuckDB values took most of a scan's time.
export const SCAN_COLUMNS_SQL = `
select alert_id, id::VARCHAR as id, date_mutation::VARCHAR as date_mutation, valeur_fonciere::DOUBLE as valeur_fonciere,
    prix_m2::DOUBLE as prix_m2, type_local, surface_reelle_bati::DOUBLE as surface_reelle_bati,
    nombre_pieces_principales::DOUBLE as nombre_pieces_principales, commune, code_postal,
    latitude::DOUBLE as latitude, longitude::DOUBLE as longitude
from (${SCAN_SQL})
-- By alert, then transaction id as text: the queue's (alert, transaction) index takes its new rows in order (enqueue
-- twice as fast as in sale order).
order by alert_id, id
`;

type Column<T> = Array<T | null>;
export interface ScanColumns extends Record<string, unknown[]> {
  alert_id: string[];
  id: string[];
  date_mutation: string[];
  valeur_fonciere: Column<number>;
  prix_m2: Column<number>;
  type_local: string[];
  surface_reelle_bati: Column<number>;
  nombre_pieces_principales: Column<number>;
  commune: Column<string>;
  code_postal: Column<string>;
  latitude: Column<number>;
  longitude: Column<number>;
}

/** The matches of the scan's columns, their transaction in the payload's shape. */
export function matchesOf(c: ScanColumns): Match[] {
  const out: Match[] = new Array(c.alert_id.length);
  for (let i = 0; i < out.length; i++) {
    const prix = c.prix_m2[i];
    out[i] = {
      alert_id: c.alert_id[i],
      transaction: {
        id: c.id[i],
        date_mutation: String(c.date_mutation[i]).slice(0, 10),
        valeur_fonciere: Number(c.valeur_fonciere[i]),
        prix_m2: prix === null ? null : Math.round(prix * 100) / 100,
        type_local: c.type_local[i],
        surface_reelle_bati: c.surface_reelle_bati[i],
        nombre_pieces_principales: c.nombre_pieces_principales[i],
        commune: c.commune[i],
        code_postal: c.code_postal[i],
        latitude: c.latitude[i],
        longitude: c.longitude[i],
      },
    };
  }
  return out;
}

export interface ScanReport {
  alerts: number;
  matches: number;
  enqueued: number;
  since: string;
  /** Set when this replica left the scan to the one that claimed it (replicas on PostgreSQL). */
  skipped?: 'claimed by another replica';
}

/** Matches the sales imported after `since` against the active alerts and enqueues what is new. */
export async function scanSince(ctx: AppContext, since: Date): Promise<ScanReport> {
  const alerts = await ctx.state.alerts.active();
  const report = { alerts: alerts.length, matches: 0, enqueued: 0, since: since.toISOString() };
  if (!alerts.length) return report;
  // A scan is a batch job: it may take longer than a request's budget.
  const cols = await ctx.db.queryColumns<ScanColumns>(SCAN_COLUMNS_SQL, { alerts: JSON.stringify(alerts), since: toTimestamp(since) }, { timeoutMs: 600_000 });
  const matches = matchesOf(cols);
  report.matches = matches.length;
  report.enqueued = await ctx.state.deliveries.enqueue(matches, ctx.clock.now());
  return report;
}

/** DuckDB TIMESTAMP literal of an instant (imported_at is a UTC TIMESTAMP without zone). */
export function toTimestamp(d: Date): string {
  return d.toISOString().replace('T', ' ').replace('Z', '');
}

async function latestImport(ctx: AppContext): Promise<Date | undefined> {
  const [r] = await ctx.db.query<{ t: string | null }>(`select strftime(max(imported_at), '%Y-%m-%dT%H:%M:%S.%gZ') as t from ventes`);
  return r?.t ? new Date(r.t) : undefined;
}

async function readWatermark(ctx: AppContext): Promise<Date | undefined> {
  const v = await ctx.state.serviceState.get(WATERMARK);
  return v ? new Date(v) : undefined;
}

/** Only ever moves forward (two processes may scan the same import). */
async function writeWatermark(ctx: AppContext, t: Date): Promise<void> {
  await ctx.state.serviceState.setForward(WATERMARK, t.toISOString());
}

/**
 * At start-up: the data already served was imported before this service watched it; the first scan after a new
 * import only looks past it. A service that starts without data has no watermark: its first import is all new.
 */
export async function initWatermark(ctx: AppContext): Promise<void> {
  if ((await readWatermark(ctx)) || !ctx.db.file) return;
  const latest = await latestImport(ctx);
  if (latest) await writeWatermark(ctx, latest);
}

/** How long a replica may take over a scan whose replica died before finishing it. */
const SCAN_LEASE_MS = 15 * 60_000;

/**
 * Runs `scan` once for the whole service, as the state decides (api/store, JobStore): on SQLite each process runs it
 * (the queue dedups); with replicas on PostgreSQL, only the replica that claims the job `name` (the serving build, or
 * the day) runs it, the others skip it.
 */
async function once(ctx: AppContext, name: string, scan: () => Promise<ScanReport>): Promise<ScanReport> {
  const owner = ctx.state.credits.owner;
  if (!(await ctx.state.jobs.claim(name, owner, SCAN_LEASE_MS))) return { alerts: 0, matches: 0, enqueued: 0, since: '', skipped: 'claimed by another replica' };
  const report = await scan();
  await ctx.state.jobs.finish(name, owner);
  return report;
}

/** After an import (on-swap): the sales imported after the previous scanned import (all of them the first time). */
export async function scanNewImport(ctx: AppContext): Promise<ScanReport> {
  // Named by the serving file, the same on every replica that receives that build.
  return once(ctx, `alerts.scan.import:${path.basename(ctx.db.file ?? 'none')}`, async () => {
    const since = (await readWatermark(ctx)) ?? new Date(0);
    const latest = await latestImport(ctx);
    const report = await scanSince(ctx, since);
    if (latest) await writeWatermark(ctx, latest);
    return report;
  });
}

/** The daily scan (06:00 UTC): the last 48 hours of imports, whatever was scanned before (the queue dedups). */
export function scanDaily(ctx: AppContext): Promise<ScanReport> {
  const now = ctx.clock.now();
  return once(ctx, `alerts.scan.daily:${now.toISOString().slice(0, 10)}`, () => scanSince(ctx, new Date(now.getTime() - DAILY_WINDOW_MS)));
}
