// SIRENE staging: the real StockEtablissement / StockUniteLegale samples, the real sièges of the recherche-entreprises
// sample written as géo-SIRENE rows, parsing by header name, the business-type filter and the partial-diffusion rule.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samplesDir } from '../../../lib/config';
import { all, openMemory, type DuckDBConnection, type DuckDBInstance } from '../../../lib/duck';
import { joinBusinesses, stageEtablissements, stageUnitesLegales } from '../../../pipeline/sources/sirene/stage';
import { tempDir } from '../../helpers/samples';

const DIR = path.join(samplesDir, 'sirene');
const ETAB_SAMPLE = path.join(DIR, 'sample_etablissements_OK.csv');
const UL_SAMPLE = path.join(DIR, 'sample_unites_legales_OK.csv');
const KIKOU = path.join(DIR, 'recherche-entreprises_search-Kikou.json');

// Independent reading of the samples: plain split (no quoted commas in these rows).
const etabLines = fs.readFileSync(ETAB_SAMPLE, 'utf8').trim().split('\n');
const ETAB_HEADER = etabLines[0].split(',');
const etabRows = etabLines.slice(1).map((l) => Object.fromEntries(l.split(',').map((v, i) => [ETAB_HEADER[i], v])));

type Rec = Record<string, string>;
const csvCell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
function csv(header: string[], rows: Rec[]): string {
  return [header.join(','), ...rows.map((r) => header.map((h) => csvCell(r[h] ?? '')).join(','))].join('\n') + '\n';
}

/** A géo-SIRENE row with the real header; `over` sets some columns. */
function etab(over: Rec): Rec {
  return { statutDiffusionEtablissement: 'O', etatAdministratifEtablissement: 'A', nomenclatureActivitePrincipaleEtablissement: 'NAFRev2', etablissementSiege: 'true', ...over };
}

let instance: DuckDBInstance;
let conn: DuckDBConnection;
let dir: string;
beforeAll(async () => {
  ({ instance, conn } = await openMemory({ threads: 1 }));
  dir = tempDir('foncier-sirene-');
});
afterAll(() => {
  conn.closeSync();
  instance.closeSync();
});

function write(name: string, text: string, gzip = false): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, gzip ? zlib.gzipSync(text) : text);
  return file;
}

const staged = () => all<Record<string, unknown>>(conn, 'SELECT * FROM sirene_etablissements_stg ORDER BY siret');

describe('real StockEtablissement sample (géo-SIRENE 2019 header, 57 columns)', () => {
  it('reads every line and keeps none: the three establishments are closed (F) with pre-1993 NAP codes', async () => {
    expect(ETAB_HEADER).toHaveLength(57);
    expect(etabRows.map((r) => r.etatAdministratifEtablissement)).toEqual(['F', 'F', 'F']);
    const report = await stageEtablissements(conn, [ETAB_SAMPLE]);
    expect(report.rowsRead).toBe(etabRows.length);
    expect(report.rowsKept).toBe(0);
    expect(report.anomalies.not_active).toBe(3);
    expect(report.absentColumns).toEqual([]);
    // The 2019 sample leaves dateDernierTraitementEtablissement empty on these old lines.
    expect(etabRows.map((r) => r.dateDernierTraitementEtablissement)).toEqual(['', '', '']);
    expect(report.latestTreatment).toBeNull();
  });
});

describe('real sièges of the recherche-entreprises "Kikou" sample written as géo-SIRENE rows', () => {
  // The open API's siège fields mapped to StockEtablissement columns, in the test, independently of the code.
  const results = (JSON.parse(fs.readFileSync(KIKOU, 'utf8')) as { result: { results: Array<Record<string, unknown>> } }).result.results;
  const sieges = results.map((r) => r.siege as Record<string, string | boolean | null>);
  const rows = sieges.map((s) =>
    etab({
      siren: String(s.siret).slice(0, 9), nic: String(s.siret).slice(9), siret: String(s.siret),
      statutDiffusionEtablissement: String(s.statut_diffusion_etablissement), dateCreationEtablissement: String(s.date_creation),
      etablissementSiege: String(s.est_siege), numeroVoieEtablissement: String(s.numero_voie ?? ''),
      typeVoieEtablissement: String(s.type_voie ?? ''), libelleVoieEtablissement: String(s.libelle_voie ?? ''),
      codePostalEtablissement: String(s.code_postal), libelleCommuneEtablissement: String(s.libelle_commune),
      codeCommuneEtablissement: String(s.commune), etatAdministratifEtablissement: String(s.etat_administratif),
      activitePrincipaleEtablissement: String(s.activite_principale), latitude: String(s.latitude), longitude: String(s.longitude),
      geo_score: '0.9',
    }),
  );

  it('keeps the active sièges whose NAF is a business type: 68.20A (bailleur) and 68.10Z (marchand), not 68.20B', async () => {
    const expected = sieges.filter((s) => ['68.20A', '68.10Z'].includes(String(s.activite_principale)));
    expect(expected).toHaveLength(2);
    const report = await stageEtablissements(conn, [write('kikou.csv', csv(ETAB_HEADER, rows))]);
    expect(report.rowsRead).toBe(10);
    expect(report.rowsKept).toBe(2);
    expect(report.anomalies.other_activity).toBe(8);
    const out = await staged();
    expect(out.map((r) => r.siret)).toEqual(expected.map((s) => s.siret).sort());
    expect(out[0]).toMatchObject({
      siret: '50330286100029', siren: '503302861', naf_code: '6810Z', business_type: 'marchand',
      adresse: '27 CHEMIN DE SAINT-JEAN', code_postal: '31850', code_commune: '31389', commune: 'MONTRABE', code_departement: '31',
      latitude: 43.647450162, longitude: 1.5341871442, position_precision: 'adresse', date_creation: '2017-06-01', is_siege: true,
      diffusion_partielle: false,
    });
    expect(out[1]).toMatchObject({
      siret: '82179528300018', naf_code: '6820A', business_type: 'bailleur', adresse: '85 RUE BRANCION', code_postal: '75015',
      code_commune: '75115', code_departement: '75', latitude: 48.831365163, longitude: 2.302618593,
    });
  });

  it('reads the same rows from a .csv.gz whose header has a later column and another column order', async () => {
    const header = ['activitePrincipaleNAF25Etablissement', ...[...ETAB_HEADER].reverse()];
    const file = write('kikou-later.csv.gz', csv(header, rows.map((r) => ({ ...r, activitePrincipaleNAF25Etablissement: '68.20H' }))), true);
    await stageEtablissements(conn, [file]);
    expect((await staged()).map((r) => [r.siret, r.business_type, r.latitude])).toEqual([
      ['50330286100029', 'marchand', 43.647450162],
      ['82179528300018', 'bailleur', 48.831365163],
    ]);
  });

  it('treats Saint-Barthélemy (97701) as département 977', async () => {
    const stb = rows.find((r) => r.codeCommuneEtablissement === '97701')!;
    await stageEtablissements(conn, [write('stb.csv', csv(ETAB_HEADER, [{ ...stb, activitePrincipaleEtablissement: '68.31Z' }]))]);
    expect((await staged())[0]).toMatchObject({ code_departement: '977', business_type: 'agence', adresse: 'MARIGOT' });
  });
});

describe('business-type filter', () => {
  const base = { codeCommuneEtablissement: '33063', codePostalEtablissement: '33000', latitude: '44.84', longitude: '-0.58' };
  const cases: Array<[string, string | null, Rec?]> = [
    ['68.31Z', 'agence'], ['6831Z', 'agence'], ['69.10Z', 'notaire'], ['41.10A', 'promoteur'], ['4110D', 'promoteur'],
    ['68.32A', 'gestionnaire'], ['68.32B', 'gestionnaire'], ['68.10Z', 'marchand'], ['66.12Z', 'courtier'], ['68.20A', 'bailleur'],
    ['68.20B', null], ['41.20A', null], ['68.31Z', null, { etatAdministratifEtablissement: 'F' }],
    ['68.31Z', null, { nomenclatureActivitePrincipaleEtablissement: 'NAFRev1' }],
  ];

  it('maps each NAF code, with or without its dot, and drops closed establishments and other nomenclatures', async () => {
    const rows = cases.map(([naf, , over], i) => etab({ ...base, siren: String(100000000 + i), nic: '00012', activitePrincipaleEtablissement: naf, ...over }));
    const report = await stageEtablissements(conn, [write('types.csv', csv(ETAB_HEADER, rows))]);
    const got = new Map((await staged()).map((r) => [r.siren, r.business_type]));
    cases.forEach(([, type], i) => expect(got.get(String(100000000 + i)) ?? null).toBe(type));
    expect(report.anomalies).toMatchObject({ not_active: 1, other_activity: 2, old_nomenclature: 1 });
  });

  it('refuses a file without a required column, naming it', async () => {
    const header = ETAB_HEADER.filter((h) => h !== 'activitePrincipaleEtablissement');
    await expect(stageEtablissements(conn, [write('bad.csv', csv(header, []))])).rejects.toThrow(/activitePrincipaleEtablissement/);
  });
});

describe('partial diffusion (privacy): commune-level information only', () => {
  // Two fully diffusible establishments of Guéret (any activity) give the commune's reference point.
  const other = (siren: string, lat: string, lon: string) =>
    etab({ siren, nic: '00011', activitePrincipaleEtablissement: '47.11B', codeCommuneEtablissement: '23096', latitude: lat, longitude: lon });
  const partial = etab({
    siren: '200000001', nic: '00015', statutDiffusionEtablissement: 'P', activitePrincipaleEtablissement: '68.31Z',
    codeCommuneEtablissement: '23096', codePostalEtablissement: '23000', libelleCommuneEtablissement: 'GUERET',
    numeroVoieEtablissement: '[ND]', typeVoieEtablissement: '[ND]', libelleVoieEtablissement: '[ND]', latitude: '[ND]', longitude: '[ND]',
    enseigne1Etablissement: '[ND]',
  });
  // The same with values present (a file that does not mask them): they must not pass either.
  const leaky = {
    ...partial, siren: '200000002', numeroVoieEtablissement: '3', typeVoieEtablissement: 'RUE', libelleVoieEtablissement: 'DES PRES',
    latitude: '46.1711', longitude: '1.8712', enseigne1Etablissement: 'CABINET JEAN MARTIN', denominationUsuelleEtablissement: 'JEAN MARTIN IMMOBILIER',
  };

  it('hides address, sign, usual name and position, keeping commune, postal code and the commune point', async () => {
    const rows = [other('300000001', '46.1600', '1.8600'), other('300000002', '46.1700', '1.8800'), other('300000003', '46.1800', '1.8700'), partial, leaky];
    const report = await stageEtablissements(conn, [write('partial.csv', csv(ETAB_HEADER, rows))]);
    expect(report.anomalies.partial_diffusion).toBe(2);
    const out = await staged();
    expect(out).toHaveLength(2);
    for (const r of out) {
      expect(r).toMatchObject({
        adresse: null, enseigne: null, denomination_usuelle: null, geo_score: null, diffusion_partielle: true,
        code_commune: '23096', code_postal: '23000', commune: 'GUERET', code_departement: '23', position_precision: 'commune',
        // The median of the three diffusible positions, computed here by hand.
        latitude: 46.17, longitude: 1.87,
      });
    }
    const text = JSON.stringify(await all(conn, 'SELECT * FROM sirene_etablissements_stg'));
    for (const secret of ['46.1711', '1.8712', 'JEAN', 'MARTIN', 'DES PRES', '[ND]']) expect(text).not.toContain(secret);
  });

  it('treats a blank or unknown diffusion status as partial', async () => {
    await stageEtablissements(conn, [write('blank.csv', csv(ETAB_HEADER, [{ ...leaky, statutDiffusionEtablissement: '' }]))]);
    expect((await staged())[0]).toMatchObject({ diffusion_partielle: true, adresse: null, latitude: null, position_precision: null });
  });
});

describe('StockUniteLegale', () => {
  const ulLines = fs.readFileSync(UL_SAMPLE, 'utf8').trim().split('\n');
  const UL_HEADER = ulLines[0].split(',');

  it('reads the real sample: a sole trader named by first name and last name, only the wanted SIRENs', async () => {
    const report = await stageUnitesLegales(conn, [UL_SAMPLE], `SELECT unnest(['000325175', '005410220', '999999999']) AS siren`);
    expect(report.rowsKept).toBe(2);
    expect(report.anomalies.unit_not_found).toBe(1);
    const out = await all(conn, 'SELECT * FROM sirene_unites_legales_stg ORDER BY siren');
    expect(out).toEqual([
      { siren: '000325175', denomination: null, prenom: 'THIERRY', nom: 'JANOYER', categorie_juridique: '1000', etat: 'A', date_creation: '2000-09-26', diffusion_partielle: false },
      { siren: '005410220', denomination: null, prenom: 'GEORGES', nom: 'WATTEBLED', categorie_juridique: '1000', etat: 'C', date_creation: '1954-12-25', diffusion_partielle: false },
    ]);
  });

  it('never stores a partially diffusible unit’s person names, nor a natural person’s registered name', async () => {
    const u = (siren: string, over: Rec): Rec => ({ siren, statutDiffusionUniteLegale: 'P', etatAdministratifUniteLegale: 'A', ...over });
    const rows = [
      u('400000001', { categorieJuridiqueUniteLegale: '1000', nomUniteLegale: 'DUPONT', prenom1UniteLegale: 'MARIE', prenomUsuelUniteLegale: 'MARIE' }),
      u('400000002', { categorieJuridiqueUniteLegale: '1000', denominationUniteLegale: 'MARIE DUPONT' }),
      u('400000003', { categorieJuridiqueUniteLegale: '5499', denominationUniteLegale: 'IMMO SUD' }),
      u('400000004', { denominationUniteLegale: 'UNKNOWN CATEGORY SARL' }),
      u('400000005', { statutDiffusionUniteLegale: 'O', categorieJuridiqueUniteLegale: '1000', nomUniteLegale: 'DURAND', nomUsageUniteLegale: 'LEROY', prenom1UniteLegale: 'ANNE' }),
    ];
    await stageUnitesLegales(conn, [write('ul.csv', csv(UL_HEADER, rows))], `SELECT siren FROM read_csv(${`'${path.join(dir, 'ul.csv')}'`}, all_varchar = true)`);
    const out = await all<Record<string, unknown>>(conn, 'SELECT siren, denomination, prenom, nom FROM sirene_unites_legales_stg ORDER BY siren');
    expect(out).toEqual([
      { siren: '400000001', denomination: null, prenom: null, nom: null },
      { siren: '400000002', denomination: null, prenom: null, nom: null },
      { siren: '400000003', denomination: 'IMMO SUD', prenom: null, nom: null },
      { siren: '400000004', denomination: null, prenom: null, nom: null },
      { siren: '400000005', denomination: null, prenom: 'ANNE', nom: 'LEROY' },
    ]);
  });
});

describe('names and privacy of the snapshot rows (establishment joined to its legal unit)', () => {
  const ulHeader = fs.readFileSync(UL_SAMPLE, 'utf8').split('\n')[0].split(',');
  const geo = { codeCommuneEtablissement: '33063', codePostalEtablissement: '33000', libelleCommuneEtablissement: 'BORDEAUX', activitePrincipaleEtablissement: '68.31Z',
    numeroVoieEtablissement: '12', typeVoieEtablissement: 'CRS', libelleVoieEtablissement: 'DE L INTENDANCE' };
  const at = (lat: string, lon: string) => ({ latitude: lat, longitude: lon });
  const etabs = [
    etab({ ...geo, ...at('44.8400', '-0.5800'), siren: '500000001', nic: '00011', enseigne1Etablissement: 'AGENCE DES QUAIS' }),
    etab({ ...geo, ...at('44.8410', '-0.5810'), siren: '500000002', nic: '00011' }),
    etab({ ...geo, ...at('44.8420', '-0.5820'), siren: '500000003', nic: '00011', enseigne1Etablissement: 'MAISON ROUGE', denominationUsuelleEtablissement: 'IMMO ROUGE' }),
    // Establishment published in full but its unit partially diffusible: the unit's status wins.
    etab({ ...geo, ...at('44.8430', '-0.5830'), siren: '500000004', nic: '00011', enseigne1Etablissement: 'PAUL DURAND IMMOBILIER' }),
    etab({ ...geo, ...at('44.8440', '-0.5840'), siren: '500000005', nic: '00011', statutDiffusionEtablissement: 'P' }),
  ];
  const units: Rec[] = [
    { siren: '500000001', statutDiffusionUniteLegale: 'O', categorieJuridiqueUniteLegale: '5499', denominationUniteLegale: 'QUAIS IMMOBILIER SARL' },
    { siren: '500000002', statutDiffusionUniteLegale: 'O', categorieJuridiqueUniteLegale: '1000', nomUniteLegale: 'MARTIN', prenom1UniteLegale: 'LUC' },
    { siren: '500000003', statutDiffusionUniteLegale: 'O', categorieJuridiqueUniteLegale: '1000', nomUniteLegale: 'ROUGE', prenom1UniteLegale: 'EMMA' },
    { siren: '500000004', statutDiffusionUniteLegale: 'P', categorieJuridiqueUniteLegale: '1000', nomUniteLegale: '[ND]', prenom1UniteLegale: '[ND]' },
    { siren: '500000005', statutDiffusionUniteLegale: 'O', categorieJuridiqueUniteLegale: '5710', denominationUniteLegale: 'GIRONDE TRANSACTIONS' },
  ];

  it('names each establishment by the rule and hides what partial diffusion hides, whichever of the two is partial', async () => {
    await stageEtablissements(conn, [write('join-e.csv', csv(ETAB_HEADER, etabs))]);
    await stageUnitesLegales(conn, [write('join-u.csv', csv(ulHeader, units))], 'SELECT siren FROM sirene_etablissements_stg');
    expect(await joinBusinesses(conn)).toBe(5);
    const rows = await all<Record<string, unknown>>(conn, 'SELECT siren, denomination, adresse, round(latitude, 6) AS latitude, round(longitude, 6) AS longitude, position_precision, diffusion_partielle FROM sirene_businesses ORDER BY siren');
    // The commune point: median of the four establishments whose own status is full diffusion (44.8400 … 44.8430).
    const point = { latitude: 44.8415, longitude: -0.5815 };
    expect(rows).toEqual([
      { siren: '500000001', denomination: 'QUAIS IMMOBILIER SARL', adresse: '12 COURS DE L INTENDANCE', latitude: 44.84, longitude: -0.58, position_precision: 'adresse', diffusion_partielle: false },
      { siren: '500000002', denomination: 'LUC MARTIN', adresse: '12 COURS DE L INTENDANCE', latitude: 44.841, longitude: -0.581, position_precision: 'adresse', diffusion_partielle: false },
      { siren: '500000003', denomination: 'IMMO ROUGE', adresse: '12 COURS DE L INTENDANCE', latitude: 44.842, longitude: -0.582, position_precision: 'adresse', diffusion_partielle: false },
      { siren: '500000004', denomination: null, adresse: null, ...point, position_precision: 'commune', diffusion_partielle: true },
      { siren: '500000005', denomination: 'GIRONDE TRANSACTIONS', adresse: null, ...point, position_precision: 'commune', diffusion_partielle: true },
    ]);
  });
});
