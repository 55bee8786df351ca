// Pins lib/geo.ts (reference geography) to real values. Expected values were checked against INSEE COG 2026 and
// the La Poste postal-code base in ../shared/data/reference, not taken from the module's output; the last block
// re-reads those independent files, when present, and compares them with the module as a whole.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { samplesDir } from '../../lib/config';
import {
  REFERENCE_VINTAGE,
  buildInseeCode,
  communesOfPostalCode,
  currentCommuneCode,
  departementOfCommune,
  getCommune,
  isDepartement,
  loadReference,
  normalizeName,
  normalizePostalCode,
  postalCodesOfCommune,
  referenceStats,
  resolveCommune,
} from '../../lib/geo';

const codes = (list: { code: string }[]) => list.map((c) => c.code);
const range = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => prefix + String(from + i).padStart(2, '0'));

describe('loading', () => {
  it('loads the packages once, on first use', () => {
    const ms = loadReference();
    expect(ms).toBeGreaterThan(0);
    console.log(`geo reference loaded in ${ms.toFixed(0)} ms`);
    expect(loadReference()).toBe(0);
    const stats = referenceStats();
    // COG 2026: 34,875 COM + 45 ARM; the package adds 94 communes of the collectivités d'outre-mer.
    expect(stats.communes).toBe(34_875 + 45 + 94);
    expect(stats.unmappedPostalEntries).toBe(0);
  });

  it('states the installed package versions', () => {
    expect(REFERENCE_VINTAGE).toEqual({ decoupageAdministratif: '6.0.0', codesPostaux: '4.1.2' });
  });
});

describe('normalizeName', () => {
  it.each([
    ['Saint-Étienne', 'SAINT ETIENNE'],
    ['ST ETIENNE', 'SAINT ETIENNE'],
    ['st-etienne', 'SAINT ETIENNE'],
    ['Ste-Foy-lès-Lyon', 'SAINTE FOY LES LYON'],
    ['STES MARIES DE LA MER', 'SAINTES MARIES DE LA MER'],
    ['L’Haÿ-les-Roses', 'L HAY LES ROSES'],
    ["L'Abergement-Clémenciat", 'L ABERGEMENT CLEMENCIAT'],
    ['Crèvecœur-en-Auge', 'CREVECOEUR EN AUGE'],
    ['  Mont.  St   Martin ', 'MONT SAINT MARTIN'],
    ['Paris 15e Arrondissement', 'PARIS 15E ARRONDISSEMENT'],
    // ST only as a whole word
    ['Strasbourg', 'STRASBOURG'],
    ['Estissac', 'ESTISSAC'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeName(input)).toBe(expected);
  });
});

describe('codes', () => {
  it('recognises départements', () => {
    for (const d of ['01', '09', '19', '21', '2A', '2B', '75', '95', '971', '972', '973', '974', '976']) {
      expect(isDepartement(d), d).toBe(true);
    }
    // 975 is Saint-Pierre-et-Miquelon, a collectivité, not a département
    for (const d of ['00', '20', '96', '99', '1', '2C', '2a', '970', '975', '977', '984', '', '075']) {
      expect(isDepartement(d), d).toBe(false);
    }
  });

  it('normalises postal codes from the DGFiP raw file', () => {
    expect(normalizePostalCode('1250')).toBe('01250');
    expect(normalizePostalCode('01250')).toBe('01250');
    expect(normalizePostalCode(' 75015 ')).toBe('75015');
    for (const bad of ['', '123', '123456', 'ABCDE', '7501A', '00123', '750 15']) {
      expect(normalizePostalCode(bad), bad).toBeUndefined();
    }
  });

  it('builds INSEE codes from DGFiP département + commune parts', () => {
    expect(buildInseeCode('01', '72')).toBe('01072');
    expect(buildInseeCode('1', '72')).toBe('01072');
    expect(buildInseeCode('75', '115')).toBe('75115');
    expect(buildInseeCode('2A', '4')).toBe('2A004');
    expect(buildInseeCode('2b', '33')).toBe('2B033');
    expect(buildInseeCode('971', '1')).toBe('97101');
    expect(buildInseeCode('974', '11')).toBe('97411');
    // the 3-digit form of the overseas commune part repeats the département's last digit
    expect(buildInseeCode('974', '411')).toBe('97411');
    expect(() => buildInseeCode('974', '111')).toThrow();
    expect(() => buildInseeCode('01', 'A2')).toThrow();
    expect(() => buildInseeCode('01', '1234')).toThrow();
    expect(() => buildInseeCode('XX', '1')).toThrow();
  });

  it('gives the département of a commune', () => {
    expect(departementOfCommune('2A004')).toBe('2A');
    expect(departementOfCommune('97411')).toBe('974');
    expect(departementOfCommune('75115')).toBe('75');
    expect(departementOfCommune('33001')).toBe('33');
    // Escaufourt (02) is a commune associée of Saint-Souplet, in the Nord
    expect(departementOfCommune('02285')).toBe('59');
    expect(departementOfCommune('nope')).toBeUndefined();
  });
});

describe('getCommune / currentCommuneCode', () => {
  it('finds current communes and arrondissements', () => {
    expect(getCommune('2A004')).toMatchObject({ nom: 'Ajaccio', departement: '2A', type: 'commune-actuelle' });
    expect(getCommune('2a004')?.code).toBe('2A004');
    expect(getCommune('97411')).toMatchObject({ nom: 'Saint-Denis', departement: '974' });
    expect(getCommune('75115')).toMatchObject({
      nom: 'Paris 15e Arrondissement',
      nomNormalise: 'PARIS 15E ARRONDISSEMENT',
      type: 'arrondissement-municipal',
      parent: '75056',
      departement: '75',
    });
    expect(getCommune('42218')).toMatchObject({ nom: 'Saint-Étienne', nomNormalise: 'SAINT ETIENNE' });
    expect(getCommune('99999')).toBeUndefined();
  });

  it('maps old codes of merged communes to the current commune', () => {
    // Pierrefitte-sur-Seine: commune déléguée of the commune nouvelle Saint-Denis since 2025-01-01
    expect(currentCommuneCode('93059')).toBe('93066');
    expect(getCommune('93059')).toMatchObject({ code: '93066', nom: 'Saint-Denis', type: 'commune-actuelle' });
    // Moutonneau: merged into Aunac-sur-Charente on 2025-01-01 without becoming a commune déléguée
    expect(currentCommuneCode('16238')).toBe('16023');
    // Rochetaillée: commune associée of Saint-Étienne
    expect(currentCommuneCode('42190')).toBe('42218');
    // Lamarche-en-Woëvre: COG COMPARENT 55386, although the package's anciensCodes put it under 55245
    expect(currentCommuneCode('55273')).toBe('55386');
    // Pierrefitte's pre-1968 Seine code
    expect(currentCommuneCode('75059')).toBe('93066');
    expect(currentCommuneCode('75056')).toBe('75056');
    expect(currentCommuneCode('99999')).toBeUndefined();
  });
});

describe('resolveCommune', () => {
  it('expands Paris, Lyon and Marseille to their arrondissements', () => {
    expect(codes(resolveCommune('PARIS'))).toEqual(range('751', 1, 20));
    expect(codes(resolveCommune('paris'))).toEqual(range('751', 1, 20));
    expect(codes(resolveCommune('Lyon'))).toEqual(Array.from({ length: 9 }, (_, i) => `6938${i + 1}`));
    expect(codes(resolveCommune('MARSEILLE'))).toEqual(range('132', 1, 16));
    for (const c of [...resolveCommune('paris'), ...resolveCommune('lyon'), ...resolveCommune('marseille')]) {
      expect(c.type).toBe('arrondissement-municipal');
    }
    // the city codes and Lyon's pre-1963 absorbed commune (Saint-Rambert-l'Île-Barbe) too
    expect(codes(resolveCommune('75056'))).toEqual(range('751', 1, 20));
    expect(resolveCommune('69232')).toHaveLength(9);
  });

  it.each([
    ['PARIS 15', '75115'],
    ['PARIS 15E', '75115'],
    ['PARIS 15E ARRONDISSEMENT', '75115'],
    ['Paris 15e Arrondissement', '75115'],
    ['paris 15ème', '75115'],
    ['PARIS 1ER', '75101'],
    ['PARIS 01', '75101'],
    ['Paris 1er Arrondissement', '75101'],
    ['PARIS 16', '75116'], // La Poste's spelling
    ['LYON 3E', '69383'],
    ['LYON 03', '69383'],
    ['MARSEILLE 8E ARRONDISSEMENT', '13208'],
    ['MARSEILLE 04', '13204'],
    ['Marseille 16e', '13216'],
  ])('%s → %s', (input, code) => {
    expect(codes(resolveCommune(input))).toEqual([code]);
  });

  it('rejects arrondissements that do not exist', () => {
    expect(resolveCommune('PARIS 21')).toEqual([]);
    expect(resolveCommune('LYON 10E')).toEqual([]);
  });

  it('matches names whatever the accents, case and abbreviations', () => {
    for (const v of ['Saint-Étienne', 'SAINT ETIENNE', 'saint-etienne', 'ST ETIENNE', 'St-Étienne', 'SAINT-ÉTIENNE']) {
      expect(codes(resolveCommune(v)), v).toEqual(['42218']);
    }
    expect(codes(resolveCommune('Ajaccio'))).toEqual(['2A004']);
    expect(codes(resolveCommune('CREVECOEUR EN AUGE'))).toEqual(codes(resolveCommune('Crèvecœur-en-Auge')));
  });

  it('returns every homonym, optionally restricted to a département', () => {
    expect(codes(resolveCommune('SAINT-DENIS'))).toEqual(['11339', '30247', '93066', '97411']);
    expect(codes(resolveCommune('Saint-Denis', { departement: '974' }))).toEqual(['97411']);
    expect(codes(resolveCommune('saint denis', { departement: '93' }))).toEqual(['93066']);
    expect(resolveCommune('SAINT-DENIS', { departement: '13' })).toEqual([]);
    expect(codes(resolveCommune('Ajaccio', { departement: '2a' }))).toEqual(['2A004']);
    expect(codes(resolveCommune('PARIS', { departement: '75' }))).toHaveLength(20);
    expect(resolveCommune('PARIS', { departement: '92' })).toEqual([]);
  });

  it('resolves INSEE codes, current or old', () => {
    expect(codes(resolveCommune('75115'))).toEqual(['75115']);
    expect(codes(resolveCommune('2A004'))).toEqual(['2A004']);
    expect(codes(resolveCommune('93059'))).toEqual(['93066']);
    expect(resolveCommune('2A004', { departement: '2B' })).toEqual([]);
    expect(resolveCommune('99999')).toEqual([]);
  });

  it('falls back to communes déléguées/associées only when no current commune has the name', () => {
    // Rochetaillée is a current commune in the Haute-Marne and a commune associée of Saint-Étienne
    expect(codes(resolveCommune('Rochetaillée'))).toEqual(['52431']);
    expect(codes(resolveCommune('Rochetaillée', { departement: '42' }))).toEqual(['42218']);
    expect(codes(resolveCommune('Pierrefitte-sur-Seine'))).toEqual(['93066']);
    expect(codes(resolveCommune('MOUTONNEAU'))).toEqual([]); // merged without a commune déléguée
  });

  it('accepts names without their article or parenthesised suffix (COG NCC form)', () => {
    expect(codes(resolveCommune('ABERGEMENT CLEMENCIAT'))).toEqual(['01001']);
    expect(codes(resolveCommune('Bors'))).toEqual(['16052', '16053']);
    expect(codes(resolveCommune('BORS (CANTON DE CHARENTE-SUD)'))).toEqual(['16053']);
  });

  it('returns [] for nothing', () => {
    expect(resolveCommune('')).toEqual([]);
    expect(resolveCommune('   ')).toEqual([]);
    expect(resolveCommune('Atlantis')).toEqual([]);
  });
});

describe('postal codes', () => {
  it('maps communes to postal codes and back', () => {
    expect(postalCodesOfCommune('33001')).toContain('33230');
    expect(codes(communesOfPostalCode('33230'))).toContain('33001');
    // La Poste's base lists these twelve communes for 33230 (not Lapouyade, whose INSEE code is 33230)
    expect(codes(communesOfPostalCode('33230'))).toEqual([
      '33001', '33034', '33124', '33138', '33154', '33166', '33198', '33218', '33264', '33315', '33385', '33447',
    ]);
    expect(postalCodesOfCommune('16238')).toEqual(postalCodesOfCommune('16023'));
    expect(postalCodesOfCommune('16023')).toContain('16460');
    expect(postalCodesOfCommune('99999')).toEqual([]);
  });

  it('answers at arrondissement level for Paris, Lyon and Marseille', () => {
    const paris16 = communesOfPostalCode('75016');
    expect(codes(paris16.filter((c) => c.departement === '75'))).toEqual(['75116']);
    expect(codes(communesOfPostalCode('75116'))).toEqual(['75116']);
    expect(codes(communesOfPostalCode('69003'))).toEqual(['69383']);
    expect(codes(communesOfPostalCode('13008'))).toEqual(['13208']);
    expect(postalCodesOfCommune('75116')).toEqual(['75016', '75116']);
    expect(postalCodesOfCommune('75056')).toContain('75116');
    for (const city of ['PARIS', 'LYON', 'MARSEILLE']) {
      for (const arr of resolveCommune(city)) {
        expect(arr.codesPostaux.length, arr.code).toBeGreaterThan(0);
        for (const cp of arr.codesPostaux) expect(codes(communesOfPostalCode(cp))).toContain(arr.code);
      }
    }
    for (const cp of ['75001', '75116', '69001', '13001']) {
      expect(codes(communesOfPostalCode(cp))).not.toContain(cp.startsWith('75') ? '75056' : cp.startsWith('69') ? '69123' : '13055');
    }
  });

  it('keeps the few streets of another commune that the DGFiP files under a Paris postal code', () => {
    // codes-postaux (FIMOCT) puts 3 voies of Boulogne-Billancourt under 75016; La Poste's base does not
    expect(codes(communesOfPostalCode('75016'))).toEqual(['75116', '92012']);
  });

  it('accepts the raw 4-digit form and rejects invalid codes', () => {
    expect(codes(communesOfPostalCode('1250'))).toContain('01072'); // Ceyzériat
    expect(communesOfPostalCode('99999')).toEqual([]);
    expect(communesOfPostalCode('abc')).toEqual([]);
  });
});

// Independent cross-check against the INSEE and La Poste files (skipped where ../shared is absent).
const REF = join(samplesDir, 'reference');
const COG = join(REF, 'insee_cog2026_v_commune_2026.csv.gz');
const LAPOSTE = join(REF, 'laposte_datanova_base_officielle_codes_postaux_20250619.csv.gz');

function readQuotedCsv(file: string): string[][] {
  // A naive split: the columns read here (the leading ones, and COMPARENT as the last) never contain commas.
  return gunzipSync(readFileSync(file))
    .toString('utf8')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.split(',').map((f) => f.replace(/^"|"$/g, '')));
}

describe.skipIf(!existsSync(COG))('agreement with INSEE COG 2026', () => {
  const rows = existsSync(COG) ? readQuotedCsv(COG) : [];

  it('knows every current commune and arrondissement with its département', () => {
    const current = rows.filter((r) => r[0] === 'COM' || r[0] === 'ARM');
    expect(current).toHaveLength(34_920);
    const wrong = current.filter(([, com, , dep]) => getCommune(com)?.code !== com || getCommune(com)?.departement !== dep);
    expect(wrong).toEqual([]);
  });

  it('maps every commune déléguée/associée to its COMPARENT', () => {
    const former = rows.filter((r) => r[0] === 'COMD' || r[0] === 'COMA');
    expect(former).toHaveLength(2_105 + 471);
    expect(former.filter((r) => currentCommuneCode(r[1]) !== r[r.length - 1])).toEqual([]);
  });

  it('has the same arrondissements', () => {
    const arm = rows.filter((r) => r[0] === 'ARM');
    const byParent = (p: string) => arm.filter((r) => r[r.length - 1] === p).map((r) => r[1]).sort();
    expect(codes(resolveCommune('Paris'))).toEqual(byParent('75056'));
    expect(codes(resolveCommune('Lyon'))).toEqual(byParent('69123'));
    expect(codes(resolveCommune('Marseille'))).toEqual(byParent('13055'));
  });
});

describe.skipIf(!existsSync(LAPOSTE))('agreement with La Poste postal codes', () => {
  it('includes every (commune, postal code) pair of France (outside New Caledonia and Monaco)', () => {
    const missing = new Set<string>();
    for (const [code, , cp] of readQuotedCsv(LAPOSTE)) {
      if (code.startsWith('98') || code.startsWith('99')) continue;
      if (!postalCodesOfCommune(code).includes(cp)) missing.add(`${code} ${cp}`);
    }
    expect([...missing]).toEqual([]);
  });
});
