// The DVF × DPE marts on the demo dataset, against a brute-force matcher written here in TypeScript (no grid: every
// diagnostic of the département is compared with each sampled sale), so a candidate the SQL grid misses is caught.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paths } from '../../lib/config';
import { testData } from '../helpers/data';
import { queryParquet } from '../helpers/samples';
import { median } from '../helpers/stats';

interface Sale { id: number; date: string; type: string; surface: number; parcel: string | null; lat: number; lon: number; dep: string; prix_m2: number | null; commune: string }
interface Diag { dpe_id: string; date: string; kind: string | null; surface: number | null; parcel: string | null; lat: number; lon: number; dep: string; classe: string | null; replaced: boolean }
interface Match { id: number; dpe_id: string; methode_match: string; distance_m: number; surface_gap_pct: number | null; classe_energie: string | null; prix_m2: number; code_commune_actuel: string; annee: number }

let sales: Sale[];
let diags: Diag[];
let matches: Map<number, Match>;
let near200: Map<number, { dpe_id: string; distance_m: number }>;
let marts: string;

beforeAll(async () => {
  const root = await testData('demo');
  marts = paths.marts(root);
  sales = (await queryParquet(`select id, strftime(date_mutation, '%Y-%m-%d') as date, type_local as type, surface_reelle_bati as surface,
      id_parcelle as parcel, latitude as lat, longitude as lon, code_departement as dep, prix_m2, code_commune_actuel as commune
    from read_parquet('${marts}/ventes.parquet')
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier and not is_vefa
      and latitude is not null and surface_reelle_bati > 0`)) as unknown as Sale[];
  diags = (await queryParquet(`select dpe_id, strftime(date_etablissement_dpe, '%Y-%m-%d') as date, type_batiment as kind, surface_habitable as surface,
      id_parcelle as parcel, latitude as lat, longitude as lon, code_departement as dep, classe_energie as classe, est_remplace as replaced
    from read_parquet('${marts}/dpe_diagnostics.parquet') where latitude is not null`)) as unknown as Diag[];
  matches = new Map(((await queryParquet(`select * from read_parquet('${marts}/dpe_ventes.parquet')`)) as unknown as Match[]).map((m) => [m.id, m]));
  near200 = new Map(((await queryParquet(`select id, dpe_id, distance_m from read_parquet('${marts}/dpe_ventes_200m.parquet')`)) as unknown as Array<{ id: number; dpe_id: string; distance_m: number }>).map((m) => [m.id, m]));
}, 180_000);
afterAll(() => undefined);

function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const h = Math.sin(((lat2 - lat1) * r) / 2) ** 2 + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.sin(((lon2 - lon1) * r) / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.sqrt(h));
}
const days = (a: string, b: string) => Math.round((Date.parse(a) - Date.parse(b)) / 86_400_000);
const addYears = (d: string, k: number) => `${Number(d.slice(0, 4)) + k}${d.slice(4)}`;

/** The rule of docs/decisions.md ("DPE"), written independently of the SQL. */
function bestMatch(s: Sale): { dpe_id: string; methode: string } | null {
  const kind = s.type === 'Maison' ? 'maison' : 'appartement';
  const lo = addYears(s.date, -10);
  const cands = diags.flatMap((d) => {
    if (d.replaced || d.kind !== kind || d.dep.length === 0 || d.date < lo || days(d.date, s.date) > 90) return [];
    const dist = haversine(s.lat, s.lon, d.lat, d.lon);
    if (dist > 50) return [];
    const gap = d.surface === null ? null : ((d.surface - s.surface) / s.surface) * 100;
    const surfaceOk = gap !== null && Math.abs(gap) <= 35;
    const cadastre = d.parcel !== null && d.parcel === s.parcel && (kind === 'maison' || surfaceOk);
    if (!cadastre && !surfaceOk) return [];
    return [{ d, dist, cadastre, before: d.date <= s.date, gap: Math.abs(days(d.date, s.date)) }];
  });
  cands.sort((a, b) => Number(b.cadastre) - Number(a.cadastre) || Number(b.before) - Number(a.before) || a.gap - b.gap || a.dist - b.dist || (a.d.dpe_id < b.d.dpe_id ? -1 : 1));
  return cands.length ? { dpe_id: cands[0].d.dpe_id, methode: cands[0].cadastre ? 'cadastre' : 'proximity' } : null;
}

/** Deterministic sample: every k-th sale. */
const sample = <T>(xs: T[], n: number) => xs.filter((_, i) => i % Math.max(1, Math.floor(xs.length / n)) === 0);

describe('dpe_ventes (DVF × DPE matching)', () => {
  it('matches a good share of the clean sales, by both methods', () => {
    expect(matches.size / sales.length).toBeGreaterThan(0.5);
    const methods = new Set([...matches.values()].map((m) => m.methode_match));
    expect(methods).toEqual(new Set(['cadastre', 'proximity']));
  });

  it('picks, for sampled sales, exactly the diagnostic the brute-force rule picks (and none when it finds none)', () => {
    const picked = sample(sales, 250);
    let withMatch = 0;
    for (const s of picked) {
      const expected = bestMatch(s);
      const got = matches.get(s.id);
      expect(got ? { dpe_id: got.dpe_id, methode: got.methode_match } : null, `sale ${s.id}`).toEqual(expected);
      if (expected) withMatch++;
    }
    expect(withMatch).toBeGreaterThan(100);
  });

  it('keeps the distance and surface gap of each match, within the rule', () => {
    const byId = new Map(diags.map((d) => [d.dpe_id, d]));
    const saleById = new Map(sales.map((s) => [s.id, s]));
    for (const m of sample([...matches.values()], 500)) {
      const s = saleById.get(m.id)!;
      const d = byId.get(m.dpe_id)!;
      expect(m.distance_m).toBeCloseTo(haversine(s.lat, s.lon, d.lat, d.lon), 0);
      expect(m.distance_m).toBeLessThanOrEqual(50);
      if (m.surface_gap_pct !== null) expect(m.surface_gap_pct).toBeCloseTo(((d.surface! - s.surface) / s.surface) * 100, 0);
      expect(d.replaced).toBe(false);
    }
  });
});

describe('dpe_ventes_200m (the looser crossing of stats/dpe-premium)', () => {
  it('finds the nearest classed diagnostic of the département within 200 m for sampled sales', () => {
    const priced = sales.filter((s) => s.prix_m2 !== null);
    for (const s of sample(priced, 150)) {
      let best = Infinity;
      for (const d of diags) {
        if (d.replaced || d.classe === null || d.dep !== s.dep) continue;
        best = Math.min(best, haversine(s.lat, s.lon, d.lat, d.lon));
      }
      const got = near200.get(s.id);
      if (best > 200) expect(got, `sale ${s.id}`).toBeUndefined();
      else expect(got?.distance_m, `sale ${s.id}`).toBeCloseTo(best, 0);
    }
  });
});

describe('dpe_communes (precomputed commune statistics)', () => {
  it('counts crossings and computes the G vs D gap like a computation over dpe_ventes', async () => {
    const rows = (await queryParquet(`select * from read_parquet('${marts}/dpe_communes.parquet')`)) as Array<Record<string, any>>;
    expect(rows.length).toBeGreaterThan(5);
    const all = [...matches.values()].filter((m) => m.prix_m2 !== null);
    for (const r of rows) {
      const mine = all.filter((m) => m.code_commune_actuel === r.code_commune_actuel);
      expect(r.nb_transactions_avec_dpe).toBe(mine.length);
      const of = (k: string) => mine.filter((m) => m.classe_energie === k).map((m) => m.prix_m2);
      const d = of('D');
      const g = of('G');
      if (d.length >= 30 && g.length) expect(r.prime_verte_g_vs_d).toBeCloseTo(median(g) / median(d) - 1, 9);
      else expect(r.prime_verte_g_vs_d).toBeNull();
      const since = mine.filter((m) => m.annee >= 2022);
      expect(r.nb_passoires_3ans).toBe(since.filter((m) => m.classe_energie === 'F' || m.classe_energie === 'G').length);
    }
    const counts = new Map<string, number>();
    for (const m of all) counts.set(m.code_commune_actuel, (counts.get(m.code_commune_actuel) ?? 0) + 1);
    expect(rows.length).toBe([...counts.values()].filter((n) => n >= 30).length);
  });
});
