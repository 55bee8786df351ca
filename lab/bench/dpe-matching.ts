// DVF × DPE matching at France scale, without the 45-minute bench dataset:
//   npm run bench -- dpe-matching [--sales 20000000] [--diagnostics 13000000] [--deps 75,33,...] [--dir data-bench-dpe]
// builds (once, kept in DIR/synthetic-*.duckdb) a synthetic `ventes` (the columns the DPE models read) and
// `dpe_diagnostics` (every column of the mart) laid out like France, then runs marts/models/marts/dpe_ventes.sql and
// dpe_ventes_200m.sql as the marts runner does (same connection settings: 2 threads, memory_limit 8GB; the
// haversine_m macro; create table … order by the model's `-- sort:`, its indexes, its checks) and prints, per model,
// wall seconds, CPU seconds (user+sys of this process, DuckDB's threads included) and the load average.
//
// The layout (generateSynthetic): every real commune and arrondissement (lib/geo: INSEE code, postal codes,
// population), placed around its département's centroid (lab/bench/pipeline.ts), holds 0.55 dwellings per
// inhabitant in buildings spread as a Gaussian around the commune's centre (σ = √(population / 2π·15,000) km, at least
// 600 m: town centres at 15,000 inhabitants/km², villages sparser). Houses are one dwelling; flats are in buildings of 4–40, their share
// growing with the commune's size. Sales and 80 % of the diagnostics are drawn per dwelling (so a building's flats
// share one sale point, its parcel's, and one diagnostic point, its BAN address a few metres away); the other 20 % of
// the diagnostics are spread over the commune, away from any building. `--deps` keeps only some départements at the
// same density (the France totals scaled by their share), for a run the machine can afford; the CPU time then
// extrapolates linearly (the work is per cell of the grid, and the cells of a département do not see another's).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkQuery, loadModels, MODELS_DIR, type Model } from '../../marts/runner';
import { repoRoot } from '../../lib/config';
import { HAVERSINE_MACRO_SQL } from '../../lib/distance';
import { all, DuckDBInstance, lit, run, type DuckDBConnection } from '../../lib/duck';
import { allCommunes } from '../../lib/geo';
import { depProfiles } from './pipeline';

export interface SyntheticOptions {
  /** France totals; a subset of départements gets its population share. */
  sales: number;
  diagnostics: number;
  /** Départements to generate (default: all of DVF's). */
  deps?: string[];
}

/** Share of the diagnostics placed at a building's address point (the rest spread over the commune). */
const AT_BUILDINGS = 0.8;
const DWELLINGS_PER_INHABITANT = 0.55;

/** Writes the communes (real codes, postal codes, population; a synthetic centre) and returns the France totals. */
function communeRows(deps: Set<string> | null): { rows: object[]; francePop: number } {
  const centroid = new Map(depProfiles().map((d) => [d.dep, d]));
  const cities = new Set(allCommunes().filter((c) => c.type === 'arrondissement-municipal').map((c) => c.parent));
  const all = allCommunes().filter((c) => (c.type === 'commune-actuelle' || c.type === 'arrondissement-municipal')
    && !cities.has(c.code) && centroid.has(c.departement) && (c.population ?? 0) > 0 && c.codesPostaux.length > 0);
  const francePop = all.reduce((a, c) => a + c.population!, 0);
  // A stable pseudo-random offset per commune (hash of the code), wider for a large rural département than a city's
  // arrondissements.
  const h = (s: string, k: number) => {
    let x = 2166136261 ^ k;
    for (const ch of s) x = Math.imul(x ^ ch.charCodeAt(0), 16777619);
    return ((x >>> 0) % 1_000_000) / 1_000_000;
  };
  const rows = all.filter((c) => !deps || deps.has(c.departement)).map((c) => {
    const d = centroid.get(c.departement)!;
    const spread = c.type === 'arrondissement-municipal' ? 0.04 : c.departement === '75' ? 0.04 : 0.45;
    const lat = d.lat + (h(c.code, 1) - 0.5) * 2 * spread;
    const lon = d.lon + ((h(c.code, 2) - 0.5) * 2 * spread) / Math.cos((d.lat * Math.PI) / 180);
    const pop = c.population!;
    const pFlat = c.type === 'arrondissement-municipal' || pop >= 100_000 ? 0.9 : pop >= 30_000 ? 0.6 : pop >= 10_000 ? 0.4 : pop >= 2_000 ? 0.2 : 0.08;
    return {
      code: c.code, nom: c.nom.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase(), dep: c.departement,
      cps: c.codesPostaux, pop, lat, lon, sigma_km: Math.max(0.6, Math.sqrt(pop / (2 * Math.PI * 15_000))), p_flat: pFlat,
      prix: d.prixM2,
    };
  });
  return { rows, francePop };
}

/** Creates `ventes` and `dpe_diagnostics` on `conn` (deterministic: every draw is a hash). */
export async function generateSynthetic(conn: DuckDBConnection, dir: string, opts: SyntheticOptions): Promise<{ sales: number; diagnostics: number; share: number }> {
  const { rows, francePop } = communeRows(opts.deps ? new Set(opts.deps) : null);
  const file = path.join(dir, 'communes.ndjson');
  fs.writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await run(conn, `create or replace table syn_communes as select row_number() over (order by code) as ci, * from read_json(${lit(file)}, format = 'newline_delimited')`);
  const franceUnits = francePop * DWELLINGS_PER_INHABITANT;
  const salesPerUnit = opts.sales / franceUnits;
  const diagsPerUnit = (opts.diagnostics * AT_BUILDINGS) / franceUnits;
  const spreadPerInhabitant = (opts.diagnostics * (1 - AT_BUILDINGS)) / francePop;
  // u(k, x): a uniform draw in [0, 1) from a hash; g(k, x): a standard normal one (Box–Muller).
  const u = (k: number, x: string) => `((hash(${k}, ${x}) % 1000003) / 1000003.0)`;
  const g = (k: number, x: string) => `(sqrt(-2 * ln(1 - ${u(k, x)})) * cos(2 * pi() * ${u(k + 1, x)}))`;
  await run(conn, `create or replace table syn_buildings as
    with c as (
      select *, round(pop * ${DWELLINGS_PER_INHABITANT} * (1 - p_flat))::bigint as houses,
        round(pop * ${DWELLINGS_PER_INHABITANT} * p_flat / 22)::bigint as flat_buildings from syn_communes
    ),
    b as (select c.*, unnest(range(houses + flat_buildings)) as j from c)
    select ci * 10000000 + j as bid, code, nom, dep, prix, j >= houses as is_flat,
      case when j >= houses then 4 + hash(ci, j, 3) % 37 else 1 end as units,
      cps[1 + (hash(ci, j, 4) % len(cps))::bigint] as cp,
      lat + sigma_km / 111.32 * ${g(10, 'ci, j')} as latitude,
      lon + sigma_km / (111.32 * cos(radians(lat))) * ${g(20, 'ci, j')} as longitude,
      code || '000' || chr(65 + (j % 26)::integer) || chr(65 + (j // 26 % 26)::integer) || lpad((j // 676)::varchar, 4, '0') as id_parcelle
    from b`);
  // Sales: per dwelling, Poisson-like by a floor and a remainder draw; a building's sales share its parcel's point.
  await run(conn, `create or replace table ventes as
    with k as (
      select *, floor(units * ${salesPerUnit} + ${u(30, 'bid')})::bigint as n from syn_buildings
    ),
    s as (select k.*, unnest(range(n)) as r from k where n > 0),
    d as (
      select *, hash(bid, r, 31) % units as unit, DATE '2020-01-01' + (hash(bid, r, 32) % 2192)::integer as date_mutation,
        ${u(33, 'bid, r')} as w from s
    )
    select row_number() over (order by bid, r) as id, date_mutation, year(date_mutation) as annee,
      case when is_flat then 'Appartement' else 'Maison' end as type_local,
      round(surface * prix * (0.7 + 0.6 * ${u(34, 'bid, r')}), -2) as valeur_fonciere,
      round(surface * prix * (0.7 + 0.6 * ${u(34, 'bid, r')}), -2) / surface as prix_m2,
      surface as surface_reelle_bati, id_parcelle, latitude, longitude, cp as code_postal, code as code_commune_actuel, nom as commune,
      dep as code_departement, w < 0.02 as is_bulk_sale, w >= 0.02 and w < 0.045 as is_outlier, w >= 0.045 and w < 0.075 as is_vefa
    from (select *, case when is_flat then 18 + hash(bid, unit, 5) % 100 else 60 + hash(bid, unit, 5) % 140 end::double as surface from d)`);
  // Diagnostics at buildings: the BAN address point a few metres off the parcel's (the same for the whole building).
  await run(conn, `create or replace table dpe_diagnostics as
    with at_b as (
      select bid, code, dep, cp, is_flat, units, id_parcelle,
        latitude + (${u(40, 'bid')} - 0.5) * 0.0003 as latitude, longitude + (${u(41, 'bid')} - 0.5) * 0.0004 as longitude,
        unnest(range(floor(units * ${diagsPerUnit} + ${u(42, 'bid')})::bigint)) as r
      from syn_buildings
    ),
    spread as (
      select ci * 10000000 + 9000000 + j as bid, code, dep, cps[1 + (hash(ci, j, 43) % len(cps))::bigint] as cp,
        ${u(44, 'ci, j')} < p_flat as is_flat, 1 as units, null::varchar as id_parcelle,
        lat + 1.5 * sigma_km / 111.32 * ${g(50, 'ci, j')} as latitude,
        lon + 1.5 * sigma_km / (111.32 * cos(radians(lat))) * ${g(60, 'ci, j')} as longitude, 0 as r
      from (select *, unnest(range(floor(pop * ${spreadPerInhabitant} + ${u(45, 'ci')})::bigint)) as j from syn_communes)
    ),
    d as (
      select *, hash(bid, r, 46) % units as unit, ${u(47, 'bid, r')} as w,
        DATE '2013-07-01' + (hash(bid, r, 48) % 4566)::integer as date_etablissement_dpe
      from (select * from at_b union all select * from spread)
    )
    select 'D' || bid || '-' || r as dpe_id, '2' || lpad((hash(bid, r, 49) % 1000000000000)::varchar, 12, '0') as numero_dpe,
      case when date_etablissement_dpe < DATE '2021-07-01' then 'dpe-france' else 'dpe03existant' end as source_dataset,
      date_etablissement_dpe, date_etablissement_dpe < DATE '2021-07-01' as avant_reforme_2021,
      case when w < 0.01 then null else ['A', 'B', 'C', 'D', 'E', 'F', 'G'][1 + (
        case when w < 0.04 then 0 when w < 0.09 then 1 when w < 0.29 then 2 when w < 0.59 then 3 when w < 0.81 then 4 when w < 0.93 then 5 else 6 end)] end as classe_energie,
      ['A', 'B', 'C', 'D', 'E', 'F', 'G'][1 + (hash(bid, r, 51) % 7)::integer] as classe_ges,
      case when w < 0.01 then 'N' end as etiquette_dpe_brute,
      50 + (hash(bid, r, 52) % 400)::double as conso_energie_kwh_m2_an, 2 + (hash(bid, r, 53) % 80)::double as emission_ges_kg_m2_an,
      round((case when is_flat then 18 + hash(bid, unit, 5) % 100 else 60 + hash(bid, unit, 5) % 140 end) * (0.9 + 0.2 * ${u(54, 'bid, r')}), 1) as surface_habitable,
      1900 + (hash(bid, 55) % 124)::integer as annee_construction, null::varchar as periode_construction,
      case when w > 0.985 then 'immeuble' when is_flat then 'appartement' else 'maison' end as type_batiment,
      code as code_insee, code as code_commune_actuel, cp as code_postal, dep as code_departement,
      code || '_' || lpad((bid % 100000)::varchar, 5, '0') as identifiant_ban,
      case when ${u(56, 'bid')} < 0.5 then id_parcelle end as id_parcelle,
      (hash(bid, 57) % 120)::varchar || ' RUE DU BENCH ' || code as address, latitude, longitude,
      '3CL-DPE 2021' as methode, '2.4' as version_dpe, null::varchar as numero_dpe_remplace, w > 0.97 and w <= 0.985 as est_remplace
    from d`);
  const [r] = await all<{ sales: number; diagnostics: number }>(conn, 'select (select count(*) from ventes) as sales, (select count(*) from dpe_diagnostics) as diagnostics');
  const pop = rows.reduce((a, c) => a + (c as { pop: number }).pop, 0);
  return { sales: Number(r.sales), diagnostics: Number(r.diagnostics), share: pop / francePop };
}

export interface ModelTiming { model: string; rows: number; build_s: number; build_cpu_s: number; index_check_s: number; index_check_cpu_s: number; load: number[] }

const cpuSeconds = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/** Runs one model of marts/models exactly as marts/runner.ts does (refs replaced by table names), timed. */
export async function buildModel(conn: DuckDBConnection, name: string, opts: { checks?: boolean } = {}): Promise<ModelTiming> {
  const model = loadModels(MODELS_DIR).find((m: Model) => m.name === name);
  if (!model) throw new Error(`no model ${name}`);
  const body = model.sql.replace(/\{\{\s*ref\('(\w+)'\)\s*\}\}/g, (_, r: string) => r);
  const load = [os.loadavg()[0]];
  const t0 = performance.now();
  const c0 = cpuSeconds();
  const order = model.sort.length ? ` order by ${model.sort.join(', ')}` : '';
  await run(conn, `create or replace table ${model.name} as select * from (${body})${order}`);
  const t1 = performance.now();
  const c1 = cpuSeconds();
  for (const col of model.indexes) await run(conn, `create index ${model.name}_${col}_idx on ${model.name} (${col})`);
  if (opts.checks !== false) {
    for (const check of model.checks) {
      const [row] = await all<Record<string, number>>(conn, checkQuery(model.name, check));
      if (Number(Object.values(row)[0]) > 0) throw new Error(`check failed on ${model.name}: ${check}`);
    }
  }
  load.push(os.loadavg()[0]);
  const [{ n }] = await all<{ n: number }>(conn, `select count(*) as n from ${model.name}`);
  return {
    model: name, rows: Number(n), build_s: (t1 - t0) / 1000, build_cpu_s: c1 - c0,
    index_check_s: (performance.now() - t1) / 1000, index_check_cpu_s: cpuSeconds() - c1, load,
  };
}

/**
 * Lays `ventes` and `dpe_diagnostics` out as the marts runner materializes those models (rows in the order of their
 * `-- sort:` header, their `-- index:` indexes), once (marked by the table bench_layout): what the DPE models read and
 * what the API's queries prune on.
 */
export async function layOutAsMarts(conn: DuckDBConnection, log: (m: string) => void = console.log): Promise<void> {
  const [{ n }] = await all<{ n: number }>(conn, `select count(*) as n from duckdb_tables() where table_name = 'bench_layout'`);
  if (Number(n) > 0) return;
  const t0 = performance.now();
  for (const model of loadModels(MODELS_DIR).filter((m) => m.name === 'ventes' || m.name === 'dpe_diagnostics')) {
    await run(conn, `create or replace table ${model.name} as select * from ${model.name} order by ${model.sort.join(', ')}`);
    for (const col of model.indexes) await run(conn, `create index ${model.name}_${col}_idx on ${model.name} (${col})`);
  }
  await run(conn, 'create table bench_layout as select now() as at');
  await run(conn, 'checkpoint');
  log(`ventes and dpe_diagnostics sorted and indexed as the runner does in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

/** Opens (generating it when absent) the synthetic database for these options, with the runner's settings. */
export async function openSynthetic(dir: string, opts: SyntheticOptions, log: (m: string) => void = console.log) {
  fs.mkdirSync(dir, { recursive: true });
  const tag = `${opts.sales}-${opts.diagnostics}-${opts.deps?.join('_') ?? 'france'}`;
  const file = path.join(dir, `synthetic-${tag}.duckdb`);
  const fresh = !fs.existsSync(file);
  const instance = await DuckDBInstance.create(file, { threads: '2', memory_limit: '8GB' });
  const conn = await instance.connect();
  await run(conn, HAVERSINE_MACRO_SQL);
  if (fresh) {
    const t0 = performance.now();
    try {
      const r = await generateSynthetic(conn, dir, opts);
      await layOutAsMarts(conn, log);
      log(`generated ${r.sales} sales, ${r.diagnostics} diagnostics (${(r.share * 100).toFixed(1)} % of France's population) in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    } catch (e) {
      conn.closeSync();
      instance.closeSync();
      fs.rmSync(file, { force: true });
      throw e;
    }
  }
  return { instance, conn, file };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { sales: { type: 'string' }, diagnostics: { type: 'string' }, deps: { type: 'string' }, dir: { type: 'string' }, models: { type: 'string' } } });
  const opts: SyntheticOptions = { sales: Number(values.sales ?? 20_000_000), diagnostics: Number(values.diagnostics ?? 13_000_000), deps: values.deps?.split(',') };
  const dir = path.resolve(values.dir ?? path.join(repoRoot, 'data-bench-dpe'));
  const { instance, conn } = await openSynthetic(dir, opts);
  await layOutAsMarts(conn);
  const [s] = await all<Record<string, number>>(conn, `select (select count(*) from ventes) as sales,
    (select count(*) from ventes where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa) as clean,
    (select count(distinct (latitude, longitude)) from ventes) as sale_points,
    (select count(*) from dpe_diagnostics) as diagnostics, (select count(distinct (latitude, longitude)) from dpe_diagnostics) as diagnostic_points`);
  const share = opts.sales / Number(s.sales);
  console.log(`data: ${JSON.stringify(s)}; France / this run = ${share.toFixed(2)}; ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  let total = 0;
  for (const name of (values.models ?? 'dpe_ventes,dpe_ventes_200m').split(',')) {
    const t = await buildModel(conn, name);
    const cpu = t.build_cpu_s + t.index_check_cpu_s;
    total += cpu;
    console.log(`${name}: ${t.rows} rows; build ${t.build_s.toFixed(1)} s wall / ${t.build_cpu_s.toFixed(1)} CPU-s; indexes + checks ${t.index_check_s.toFixed(1)} s / ${t.index_check_cpu_s.toFixed(1)} CPU-s; load ${t.load.map((l) => l.toFixed(1)).join(' → ')}; × ${share.toFixed(2)} → ${(cpu * share).toFixed(0)} CPU-s for France`);
  }
  console.log(`both: ${total.toFixed(1)} CPU-s here, ≈ ${(total * share).toFixed(0)} CPU-s for France (target ≤ 600: 5 minutes on 2 busy cores)`);
  const rates = await all(conn, `select count(*) filter (methode_match = 'cadastre') as cadastre, count(*) filter (methode_match = 'proximity') as proximity from dpe_ventes`).catch(() => []);
  console.log(`matches: ${JSON.stringify(rates[0] ?? {})}`);
  conn.closeSync();
  instance.closeSync();
}

if (path.resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  main().catch((e: Error) => {
    console.error(e.stack ?? e.message);
    process.exit(1);
  });
}
