// Walk-forward search, step 2 (see search.ts): from a data folder kept by `npm run lab -- backtest-real --keep`,
// every clean single sale from FROM on (a PCT % sample by hash) as a target, screened by the fences of the years before,
// with ALL its candidates within 1,000 m and 24 months (surface ×/÷ 1.5, strictly before it, not bulk) and every feature
// a variant might use (distance, age, surfaces, rooms, land, dependencies, same parcel, address, street and section,
// coordinates, index slopes and level).
// Usage: npm run lab -- walk-forward-extract --data-root DIR --out PREFIX --from DATE --pct PCT [--history MONTHS]
//          [--history-radius M] [--same-surface RATIO]  →  PREFIX_targets.parquet, PREFIX_pairs.parquet
import { parseArgs } from 'node:util';
import { all, DuckDBInstance, lit, run } from '../../../lib/duck';
import { haversineSql } from '../../../lib/distance';
import { currentServingFile } from '../../../lib/serving';

async function main(): Promise<void> {
  const text = { type: 'string' } as const;
  const { values } = parseArgs({
    options: { 'data-root': text, out: text, from: text, pct: text, history: text, 'history-radius': text, 'same-surface': text },
  });
  const { 'data-root': dataRoot, out, from, pct, history, 'history-radius': historyRadius, 'same-surface': sameSurface } = values;
  if (!dataRoot || !out || !from || !pct) throw new Error('--data-root, --out, --from and --pct are required');
  // sales within HISTORY_RADIUS m of the target (default 1: its very location, the same parcel's centroid) are kept
  // up to HISTORY months back (default 24, as every candidate)
  const historyMonths = Number(history ?? 24);
  const historyRadiusM = Number(historyRadius ?? 1);
  // sales at the target's very location (< 1 m) are kept with a surface within ×/÷ SAME_SURFACE (default 1.5, as every candidate)
  const sameSurfaceRatio = Number(sameSurface ?? 1.5);
  const serving = currentServingFile(dataRoot)!;
  const inst = await DuckDBInstance.create(serving, { access_mode: 'READ_ONLY', threads: '2' });
  const conn = await inst.connect();
  await run(conn, `create temp table t as
    with past as (select code_departement, type_local, year(date_mutation) y, ln(prix_m2) l from ventes where prix_m2 > 0 and not is_bulk_sale and type_local in ('Maison','Appartement')),
    f as (select p.y + 1 as y, p.type_local, quantile_cont(l, 0.25) q1, quantile_cont(l, 0.75) q3 from past p group by all),
    e as (select v.id as target_id, v.type_local, v.surface_reelle_bati as surface, v.valeur_fonciere as actual,
      coalesce(v.valeur_fonciere < 1000 or v.prix_m2 < 100 or v.prix_m2 > 60000 or ln(v.prix_m2) not between f.q1 - 1.5 * (f.q3 - f.q1) and f.q3 + 1.5 * (f.q3 - f.q1), true) as screened_out,
      v.date_mutation, strftime(v.date_mutation, '%Y-%m') as ym, v.id_mutation, v.latitude, v.longitude, v.id_parcelle, v.address, v.nombre_pieces_principales as rooms, v.surface_terrain as terrain,
      v.nb_dependances as deps, v.surface_carrez as carrez, v.code_commune_actuel, v.code_departement,
      v.adresse_code_voie as code_voie, v.adresse_numero as numero, v.section, v.nombre_lots as lots
      from ventes v left join f on f.y = year(v.date_mutation) and f.type_local = v.type_local
      where v.type_local in ('Maison', 'Appartement') and v.prix_m2 is not null and not v.is_vefa and v.date_mutation >= $from::DATE
        and not v.is_bulk_sale and v.latitude is not null and v.surface_reelle_bati between 5 and 5000)
    select * from e where hash(target_id) % 100 < $pct`, { from, pct: Number(pct ?? 100) });
  const d = haversineSql('t.latitude', 't.longitude', 'c.latitude', 'c.longitude');
  await run(conn, `copy (select t.target_id, c.id as cid, c.prix_m2, c.surface_reelle_bati as cs, ${d} as dist,
      date_diff('day', c.date_mutation, t.date_mutation) as age, v.nombre_pieces_principales as crooms, v.surface_terrain as cterrain,
      v.nb_dependances as cdeps, v.surface_carrez as ccarrez, (v.id_parcelle = t.id_parcelle) as same_parcel, (v.address = t.address) as same_address,
      (v.adresse_code_voie = t.code_voie and v.code_commune_actuel = t.code_commune_actuel) as same_street,
      (v.section = t.section and v.code_commune_actuel = t.code_commune_actuel) as same_section,
      c.latitude as clat, c.longitude as clon, v.nombre_lots as clots,
      td.pente_mensuelle as slope_d, tc.pente_mensuelle as slope_c, td.prix_m2_tendance as tend_d, tm.prix_m2_tendance as tend_at_sale
    from t join valuation_ventes c on c.type_local = t.type_local and c.latitude between t.latitude - 0.0095 and t.latitude + 0.0095
      and c.longitude between t.longitude - 0.014 and t.longitude + 0.014
    join ventes v on v.id = c.id
    left join valuation_indice_prix td on td.niveau = 'departement' and td.zone = c.code_departement and td.type_local = c.type_local and td.mois = date_trunc('month', t.date_mutation)::DATE
    left join valuation_indice_prix tm on tm.niveau = 'departement' and tm.zone = c.code_departement and tm.type_local = c.type_local and tm.mois = date_trunc('month', c.date_mutation)::DATE
    left join valuation_indice_prix tc on tc.niveau = 'commune' and tc.zone = c.code_commune_actuel and tc.type_local = c.type_local and tc.mois = date_trunc('month', t.date_mutation)::DATE
    where c.date_mutation < t.date_mutation and (c.date_mutation >= (t.date_mutation - interval 24 month)::DATE
        or (${d} < ${historyRadiusM} and c.date_mutation >= (t.date_mutation - to_months(${historyMonths}))::DATE)) and not c.is_bulk_sale
      and c.id_mutation <> t.id_mutation and (c.surface_reelle_bati between t.surface / 1.5 and t.surface * 1.5
        or (${d} < 1 and c.surface_reelle_bati between t.surface / ${sameSurfaceRatio} and t.surface * ${sameSurfaceRatio})) and ${d} <= 1000
    order by t.target_id) to ${lit(out + '_pairs.parquet')} (format parquet)`);
  await run(conn, `copy (select * from t) to ${lit(out + '_targets.parquet')} (format parquet)`);
  console.log(await all(conn, `select count(*) n, count(distinct target_id) t from read_parquet(${lit(out + '_pairs.parquet')})`));
}
main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
