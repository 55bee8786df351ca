// The portfolio's estimate says which DPE class and construction year it used and where they came from
// (estimate_inputs): on the demo data, a property placed on a sold house whose sale is matched to a diagnostic and a
// building borrows their class and year (read here from the matching marts' Parquet files), and its estimate is
// /v1/estimate's with those two values; on the DVF-only sample nothing is borrowed and the estimate is /v1/estimate's.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api';
import { testData } from '../../helpers/data';
import { queryParquet } from '../../helpers/samples';

let demo: TestApi;
let sample: TestApi;
beforeAll(async () => {
  [demo, sample] = await Promise.all([startTestApi({ dataRoot: await testData('demo'), now: '2026-01-15T12:00:00Z' }), startTestApi()]);
}, 600_000);
afterAll(async () => {
  await demo?.close();
  await sample?.close();
});

async function post(api: TestApi, key: string, body: unknown) {
  const res = await fetch(`${api.url}/v1/portfolio`, { method: 'POST', headers: { 'X-API-Key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

describe('estimate_inputs', () => {
  it('names the class and year borrowed from the sale at the property’s point, and the estimate is /v1/estimate’s with them', async () => {
    const marts = path.join(demo.dataRoot, 'marts');
    // A clean house sale matched to a diagnostic and a building, alone at its point (no other house within ~50 m with
    // a surface within ±10 %), so that the sale the portfolio finds is this one.
    const [sale] = await queryParquet(
      `with m as (
         select v.id, v.latitude, v.longitude, v.surface_reelle_bati as surface, v.date_mutation, d.classe_energie, b.annee_construction
         from '${marts}/ventes.parquet' v join '${marts}/dpe_ventes.parquet' d using (id) join '${marts}/bdnb_ventes.parquet' b using (id)
         where v.type_local = 'Maison' and not (v.is_bulk_sale or v.is_outlier or v.is_vefa) and v.prix_m2 is not null
           and d.classe_energie is not null and b.annee_construction is not null and v.latitude is not null)
       select m.* from m
       where (select count(*) from '${marts}/ventes.parquet' o where o.type_local = 'Maison' and o.id <> m.id
                and abs(o.latitude - m.latitude) < 0.0005 and abs(o.longitude - m.longitude) < 0.0007
                and o.surface_reelle_bati between m.surface / 1.1 and m.surface * 1.1) = 0
       order by m.id limit 1`,
    );
    expect(sale).toBeDefined();
    const key = demo.key();
    const subject = { latitude: sale.latitude as number, longitude: sale.longitude as number, type_local: 'Maison', surface: Number(sale.surface) };
    const r = await post(demo, key, subject);
    expect(r.status).toBe(201);
    const p = r.body.property;
    expect(p.estimate_inputs).toEqual({ classe_dpe: sale.classe_energie, annee_construction: Number(sale.annee_construction), source: 'dpe', distance_m: 0 });
    const q = new URLSearchParams({ latitude: String(subject.latitude), longitude: String(subject.longitude), type_local: 'Maison', surface: String(subject.surface) });
    const withInputs = await demo.get(`/v1/estimate?${q}&classe_dpe=${sale.classe_energie}&annee_construction=${sale.annee_construction}`, key);
    expect(withInputs.status).toBe(200);
    expect(p.estimate_mid).toBe(withInputs.body.estimate?.price_range.mid ?? null);
  });

  it('says nothing was borrowed where the data holds no diagnostic or building (source user)', async () => {
    const key = sample.key();
    const house = { latitude: 45.022262, longitude: -0.149933, type_local: 'Maison', surface: 100, code_postal: '33230' };
    const r = await post(sample, key, house);
    expect(r.status).toBe(201);
    expect(r.body.property.estimate_inputs).toEqual({ classe_dpe: null, annee_construction: null, source: 'user', distance_m: null });
  });
});
