// GET /v1/property-history: the shared contract, the street-name matching (three spellings of one street, a
// misspelling, the SQL key of the mart against the TypeScript one on every street of the demo and of the real
// samples), the choice of one property, cadastre mode and the annualised change, checked against the demo's planted
// resales (demo-truth.json) and against `ventes` rows read directly.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { priceEvolution, type SaleRow } from '../../../api/routes/property-history/property';
import { parseAddress, streetKey } from '../../../api/routes/property-history/street';
import { paths } from '../../../lib/config';
import type { DemoTruth, PlantedResale } from '../../../pipeline/demo/generate';
import { startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';
import { testData } from '../../helpers/data';

let demo: TestApi;
let sample: TestApi;
let truth: DemoTruth;
beforeAll(async () => {
  [demo, sample] = await Promise.all([startTestApi({ dataRoot: await testData('demo'), now: '2025-12-31T12:00:00Z' }), startTestApi()]);
  truth = JSON.parse(fs.readFileSync(path.join(paths.demoSource(demo.dataRoot), 'demo-truth.json'), 'utf8'));
}, 120_000);
afterAll(async () => {
  await demo?.close();
  await sample?.close();
});

describeContract('GET /v1/property-history', () => demo, {
  path: '/v1/property-history?address=rue%20de%20Vaugirard&code_postal=75015',
  cost: 20,
  invalid: { path: '/v1/property-history?address=rue%20de%20Vaugirard', param: 'code_postal' },
});

const history = (api: TestApi, q: string) => api.get(`/v1/property-history?${q}`, api.key());

interface VenteRow {
  id: number;
  date_mutation: string;
  type_local: string;
  surface_reelle_bati: number | null;
  lots: string[] | null;
  id_parcelle: string;
  valeur_fonciere: number;
}

/** The sales of built property (not bulk) on one parcel, newest first, read from `ventes` itself. */
const parcelSales = (api: TestApi, parcel: string) =>
  api.ctx.db.query<VenteRow>(
    `select id, date_mutation::VARCHAR as date_mutation, type_local, surface_reelle_bati, lots, id_parcelle, valeur_fonciere from ventes
     where id_parcelle = $p and type_local in ('Maison', 'Appartement', 'Local commercial') and not is_bulk_sale order by date_mutation desc, id desc`,
    { p: parcel },
  );

/**
 * Planted resales whose second sale is the latest built-property sale of the parcel and of its address (so that both
 * modes choose that property); half of them on a parcel holding other sales too.
 */
async function latestResales(n: number): Promise<Array<PlantedResale & { address: string; code_postal: string }>> {
  const out = [];
  for (const p of truth.plantedResales) {
    const [latest] = await demo.ctx.db.query<{ date: string; address: string; code_postal: string; sales: number; at_address: string }>(
      `with built as (select * from ventes where type_local in ('Maison', 'Appartement', 'Local commercial') and not is_bulk_sale),
       last as (select date_mutation::VARCHAR as date, address, code_postal, count(*) over () as sales from built
                where id_parcelle = $p order by date_mutation desc, id desc limit 1)
       select *, (select max(date_mutation)::VARCHAR from built b where b.code_postal = last.code_postal and b.address = last.address) as at_address from last`,
      { p: p.id_parcelle },
    );
    if (latest?.date !== p.second_date || latest.at_address !== p.second_date) continue;
    if (latest.sales > 2 === out.length < n / 2) out.push({ ...p, address: latest.address, code_postal: latest.code_postal });
    if (out.length === n) break;
  }
  return out;
}

describe('street-name normalisation', () => {
  it('ignores street type, articles, accents, case and punctuation', () => {
    for (const s of ['av de paris', 'AVENUE DE PARIS', 'Paris', 'Av. de Paris', 'boulevard de  Paris']) expect(streetKey(s)).toBe('PARIS');
    expect(streetKey("Place de l'Hôtel-de-Ville")).toBe('HOTEL VILLE');
    expect(streetKey('RTE D EGUZON')).toBe('EGUZON');
    expect(streetKey('Avenue du Général de Gaulle')).toBe(streetKey('AV DU GAL DE GAULLE'));
    expect(streetKey('rue Saint-Jacques')).toBe(streetKey('RUE ST JACQUES'));
    expect(streetKey('GRANDE RUE')).toBe('GDE RUE'); // a type that is not the first word is part of the name
    expect(streetKey('RUE')).toBe('RUE');
  });

  it('splits a house number and its suffix from the street, and drops a trailing postal code and city', () => {
    expect(parseAddress('12 bis, avenue de Paris 75015 Paris')).toEqual({ numero: 12, suffixe: 'B', street: 'avenue de Paris' });
    expect(parseAddress('12B rue Lecourbe')).toEqual({ numero: 12, suffixe: 'B', street: 'rue Lecourbe' });
    expect(parseAddress('7 ter rue Lecourbe')).toEqual({ numero: 7, suffixe: 'T', street: 'rue Lecourbe' });
    expect(parseAddress('rue Lecourbe')).toEqual({ numero: null, suffixe: null, street: 'rue Lecourbe' });
    expect(parseAddress('3 rue de Brest')).toEqual({ numero: 3, suffixe: null, street: 'rue de Brest' });
    expect(parseAddress('5 R DE LA PAIX')).toEqual({ numero: 5, suffixe: null, street: 'R DE LA PAIX' });
    expect(parseAddress('12 b rue Lecourbe')).toEqual({ numero: 12, suffixe: 'B', street: 'rue Lecourbe' });
  });

  it('gives the same key as the mart (SQL) for every street of the demo and of the real samples', async () => {
    for (const api of [demo, sample]) {
      const streets = await api.ctx.db.query<{ street: string; voie_cle: string }>('select distinct adresse_nom_voie as street, voie_cle from adresses_ventes where adresse_nom_voie is not null');
      expect(streets.length).toBeGreaterThan(50);
      expect(streets.filter((s) => streetKey(s.street) !== s.voie_cle)).toEqual([]);
    }
  });
});

describe('GET /v1/property-history by address on the demo data', () => {
  it('finds the same history for "av Félix Faure", "AVENUE FELIX FAURE" and "Félix-Faure" (exact, exact, fuzzy)', async () => {
    const [a, b, c] = await Promise.all(
      ['av Félix Faure', 'AVENUE FELIX FAURE', 'Félix-Faure'].map((s) => history(demo, `address=${encodeURIComponent(s)}&code_postal=75015`)),
    );
    for (const r of [a, b, c]) {
      expect(r.status).toBe(200);
      expect(r.body.query.matched_streets).toEqual(['AV FELIX FAURE']);
      expect(r.body.transactions.length).toBeGreaterThan(0);
    }
    expect(b.body.transactions).toEqual(a.body.transactions);
    expect(c.body.transactions).toEqual(a.body.transactions);
    expect(c.body.property).toEqual(a.body.property);
    expect([a, b, c].map((r) => r.body.query.match_type)).toEqual(['address_exact', 'address_exact', 'address_fuzzy']);
    // Lyon has an AV FELIX FAURE too: the postal code keeps them apart.
    const lyon = await history(demo, 'address=av%20Felix%20Faure&code_postal=69003');
    expect(lyon.body.property.code_commune).toBe('69383');
  });

  it('accepts a close misspelling and answers 200 without transactions when nothing matches', async () => {
    const typo = await history(demo, 'address=cours%20Victor%20Hugot&code_postal=33000');
    expect(typo.body.query).toMatchObject({ match_type: 'address_fuzzy', matched_streets: ['COURS VICTOR HUGO'] });
    const none = await history(demo, 'address=rue%20Inexistante&code_postal=33000');
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ property: null, transactions: [], price_evolution: null, query: { match_type: null } });
    expect(none.body.notice).toMatch(/no street matching "rue Inexistante"/);
    expect(none.body._credits.used).toBe(20);
  });

  it('with a house number, follows the most recent sale there: its parcel, type, lot and surface within ±10 %', async () => {
    const [at] = await demo.ctx.db.query<{ numero: string; n: number }>(
      `select adresse_numero as numero, count(distinct id_parcelle) as n from ventes
       where code_postal = '75015' and adresse_nom_voie = 'RUE DE VAUGIRARD' and adresse_suffixe is null and type_local in ('Maison', 'Appartement', 'Local commercial') and not is_bulk_sale
       group by 1 having n > 1 order by n desc, numero limit 1`,
    );
    const r = await history(demo, `address=${at.numero}%20rue%20de%20Vaugirard&code_postal=75015`);
    const [latest] = await demo.ctx.db.query<VenteRow>(
      `select id_parcelle, type_local, surface_reelle_bati, lots from ventes where code_postal = '75015' and adresse_nom_voie = 'RUE DE VAUGIRARD' and adresse_numero = $n
         and type_local in ('Maison', 'Appartement', 'Local commercial') and not is_bulk_sale order by date_mutation desc, id desc limit 1`,
      { n: at.numero },
    );
    const same = (await parcelSales(demo, latest.id_parcelle)).filter(
      (s) => s.type_local === latest.type_local && Math.abs(s.surface_reelle_bati! - latest.surface_reelle_bati!) <= 0.1 * latest.surface_reelle_bati! &&
        (!s.lots || !latest.lots || s.lots.some((l) => latest.lots!.includes(l))),
    );
    expect(r.body.property).toMatchObject({ id_parcelle: latest.id_parcelle, type_local: latest.type_local, surface_reelle_bati: latest.surface_reelle_bati });
    expect(r.body.transactions.map((t: { id: number }) => t.id)).toEqual(same.map((s) => s.id));
    expect(r.body.notice).toMatch(/other matched sales? belongs? to other properties/);
  });
});

describe('price_evolution', () => {
  const sale = (date: string, prix_m2: number) => ({ date_mutation: date, prix_m2 }) as SaleRow;
  it('annualises from 365 days apart only: a few days of change compounded to a year is meaningless', () => {
    const close = priceEvolution([sale('2024-01-11', 1300), sale('2024-01-01', 1000)])!;
    expect(close.total_change_pct).toBe(30);
    expect(close.annualized_change_pct).toBeNull();
    const twoYears = priceEvolution([sale('2024-01-01', 1210), sale('2022-01-01', 1000)])!;
    expect(twoYears.annualized_change_pct).toBeCloseTo((1.21 ** (365.25 / 730) - 1) * 100, 2);
  });
});

describe('GET /v1/property-history by cadastral parcel on the demo data', () => {
  it('returns both sales of planted resales, by parcel and by address, with the annualised change of €/m²', async () => {
    const resales = await latestResales(6);
    expect(resales.length).toBe(6);
    let checkedFormula = 0;
    for (const p of resales) {
      const section = p.id_parcelle.slice(8, 10);
      const plan = p.id_parcelle.slice(10);
      const r = await history(demo, `section=${section}&no_plan=${Number(plan)}&code_commune=${p.code_commune}`);
      expect(r.status).toBe(200);
      expect(r.body.query.match_type).toBe('cadastre');
      expect(r.body.property).toMatchObject({ id_parcelle: p.id_parcelle, type_local: p.type_local, code_commune: p.code_commune });
      const dates = r.body.transactions.map((t: { date_mutation: string }) => t.date_mutation);
      expect(dates).toEqual(expect.arrayContaining([p.second_date, p.first_date]));
      expect(dates[0]).toBe(p.second_date);
      expect(r.body.transactions[0].valeur_fonciere).toBe(p.second_price);
      expect(r.body.transactions.find((t: { date_mutation: string }) => t.date_mutation === p.first_date).valeur_fonciere).toBe(p.first_price);
      const ev = r.body.price_evolution;
      expect(ev.last_transaction.date).toBe(p.second_date);
      if (dates.length === 2) {
        // Same surface both times: the €/m² ratio is the price ratio.
        const days = (Date.parse(p.second_date) - Date.parse(p.first_date)) / 86_400_000;
        expect(ev.first_transaction.date).toBe(p.first_date);
        expect(ev.total_change_pct).toBeCloseTo((p.second_price / p.first_price - 1) * 100, 1);
        expect(ev.annualized_change_pct).toBeCloseTo(((p.second_price / p.first_price) ** (365.25 / days) - 1) * 100, 1);
        checkedFormula++;
      }
      // The same property by its address, padded section and plan also accepted.
      const byAddress = await history(demo, `address=${encodeURIComponent(p.address)}&code_postal=${p.code_postal}`);
      expect(byAddress.body.query.match_type).toBe('address_exact');
      expect(byAddress.body.transactions).toEqual(r.body.transactions);
      const padded = await history(demo, `section=${section.padStart(2, '0')}&no_plan=${plan}&code_commune=${p.code_commune}`);
      expect(padded.body.transactions).toEqual(r.body.transactions);
    }
    expect(checkedFormula).toBeGreaterThanOrEqual(3);
  });

  it('refuses mixed or incomplete modes, naming the parameters', async () => {
    const bad = async (q: string, params: string[]) => {
      const r = await history(demo, q);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('invalid_params');
      expect(r.body.error.details.map((d: { param: string }) => d.param)).toEqual(params);
    };
    await bad('', ['address']);
    await bad('code_postal=75015', ['address']);
    await bad('section=AB&no_plan=12', ['code_commune']);
    await bad('section=AB&no_plan=12&code_commune=75115&address=rue%20Lecourbe', ['address']);
    await bad('section=ABC&no_plan=12&code_commune=75115', ['section']);
    await bad('section=AB&no_plan=12345&code_commune=75115', ['no_plan']);
    await bad('section=AB&no_plan=12&code_commune=99999', ['code_commune']);
    await bad('address=12&code_postal=75015', ['address']);
  });
});
