// Reference geography (communes, départements, postal codes) shared by the pipeline, to validate and enrich DVF
// rows, and by the API, to resolve the `commune`, `code_postal` and `code_departement` query parameters.
// Sources are the pinned npm packages: @etalab/decoupage-administratif (INSEE COG: communes, mergers,
// arrondissements) and codes-postaux (DGFiP/BAN postal mapping, more complete than the La Poste lists carried by
// decoupage-administratif). Both are merged because neither alone is complete (see buildIndex).
import fs from 'node:fs';
import { createRequire } from 'node:module';

export type CommuneType = 'commune-actuelle' | 'arrondissement-municipal' | 'commune-deleguee' | 'commune-associee';

/** Objects are shared by every caller and frozen: copy before changing anything. */
export interface Commune {
  code: string;
  nom: string;
  nomNormalise: string;
  departement: string;
  type: CommuneType;
  codesPostaux: string[];
  /** Arrondissements: their city (75056, 69123, 13055). Communes déléguées/associées: the current commune. */
  parent?: string;
  population?: number;
  region?: string;
}

const require = createRequire(import.meta.url);
const DECOUPAGE_PKG = '@etalab/decoupage-administratif';
const CODES_POSTAUX_PKG = 'codes-postaux';

function readJson<T>(specifier: string): T {
  return JSON.parse(fs.readFileSync(require.resolve(specifier), 'utf8')) as T;
}

/** Versions actually installed, so that outputs can state which reference vintage they were built with. */
export const REFERENCE_VINTAGE: { decoupageAdministratif: string; codesPostaux: string } = Object.freeze({
  decoupageAdministratif: readJson<{ version: string }>(`${DECOUPAGE_PKG}/package.json`).version,
  codesPostaux: readJson<{ version: string }>(`${CODES_POSTAUX_PKG}/package.json`).version,
});

// Shapes of the package files (only the fields used here).
interface RawCommune {
  code: string;
  nom: string;
  type: CommuneType;
  departement: string;
  region?: string;
  codesPostaux?: string[];
  population?: number;
  anciensCodes?: string[];
  chefLieu?: string;
  commune?: string;
}
interface RawPostal {
  codePostal: string;
  codeCommune: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Normalisation helpers (pure, no data needed)

/**
 * Matching key for commune names: upper case, no accents, punctuation as spaces, ST/STE expanded.
 * Every non-alphanumeric character becomes a space (not only apostrophes, hyphens and dots) so that a few names
 * with parentheses ("Bors (Canton de Charente-Sud)") and typographic apostrophes (’) match their plain spelling.
 */
export function normalizeName(s: string): string {
  // NFD is the costly step of the index build; most names are plain ASCII and skip it.
  const ascii = /^[\x20-\x7e]*$/.test(s);
  return (ascii ? s : s.normalize('NFD').replace(/[\u0300-\u036f]/g, ''))
    .toUpperCase()
    // NFD does not decompose ligatures, and COG names use œ (Œuilly, Crèvecœur-en-Auge).
    .replace(/Œ/g, 'OE')
    .replace(/Æ/g, 'AE')
    .replace(/[^A-Z0-9]+/g, ' ')
    .trim()
    // DGFiP and users abbreviate Saint(e)(s); no current commune name contains these words otherwise.
    .replace(/(^| )ST(E?)(S?)(?= )/g, (_m, pre: string, e: string, plural: string) => `${pre}SAINT${e}${plural}`);
}

const DEPARTEMENT_RE = /^(0[1-9]|1\d|2[1-9]|[3-8]\d|9[0-5]|2A|2B|97[1-46])$/;

/**
 * Départements of France: 01–95 (no 20), 2A, 2B, and the DROM 971–974 and 976. 975 (Saint-Pierre-et-Miquelon)
 * is a collectivité d'outre-mer, not a département, although decoupage-administratif files its communes under
 * a '975' pseudo-département (as it does for 977, 978 and 98x).
 */
export function isDepartement(code: string): boolean {
  return DEPARTEMENT_RE.test(code);
}

/** '1' → '01', '2a' → '2A', ' 974 ' → '974'; anything else is returned trimmed and upper-cased. */
function normalizeDepartementInput(dep: string): string {
  const d = dep.trim().toUpperCase();
  return /^\d$/.test(d) ? `0${d}` : d;
}

/** The DGFiP raw file stores postal codes as numbers, dropping the leading zero ('1250' for 01250). */
export function normalizePostalCode(raw: string): string | undefined {
  const s = String(raw ?? '').trim();
  const padded = /^\d{4}$/.test(s) ? `0${s}` : s;
  // No postal code starts with 00 (the first two digits follow the département numbering).
  return /^\d{5}$/.test(padded) && !padded.startsWith('00') ? padded : undefined;
}

/**
 * INSEE code from the DGFiP raw file's separate "Code departement" / "Code commune" columns, which drop leading
 * zeros. Overseas départements have 3 characters and a 2-digit commune part; some files nevertheless give that
 * part on 3 digits, repeating the département's last digit ('971' + '101'), which is accepted too.
 * Throws on input that cannot form a commune code, so that a shifted column surfaces instead of yielding codes.
 */
export function buildInseeCode(dep: string, communeInDep: string): string {
  const d = normalizeDepartementInput(dep);
  const c = communeInDep.trim();
  if (!/^\d{1,3}$/.test(c)) throw new Error(`buildInseeCode: invalid commune part '${communeInDep}'`);
  if (/^97\d$/.test(d)) {
    if (c.length === 3) {
      if (c[0] !== d[2]) throw new Error(`buildInseeCode: commune part '${c}' does not belong to département ${d}`);
      return `97${c}`;
    }
    return d + c.padStart(2, '0');
  }
  if (!/^(\d{2}|2[AB])$/.test(d)) throw new Error(`buildInseeCode: invalid département '${dep}'`);
  return d + c.padStart(3, '0');
}

const INSEE_CODE_RE = /^(\d{5}|2[AB]\d{3})$/;

function normalizeCode(code: string): string {
  return String(code ?? '').trim().toUpperCase();
}

// ---------------------------------------------------------------------------------------------------------------
// Index, built once on first use: parsing the two files (12.5 MB of JSON) and indexing them takes a few hundred
// milliseconds, which a process that never asks a geographic question should not pay at start-up.

interface GeoIndex {
  /** Current communes and arrondissements municipaux by code. */
  current: Map<string, Commune>;
  /** Any code ever seen (old codes, communes déléguées/associées) → current code. */
  toCurrent: Map<string, string>;
  /** City code (75056, 69123, 13055) → its arrondissements, by code. */
  arrondissements: Map<string, Commune[]>;
  /** normalised name → current communes / arrondissements. */
  byName: Map<string, Commune[]>;
  /** normalised name of a commune déléguée/associée → current communes it belongs to. */
  formerByName: Map<string, Commune[]>;
  /** looser name key (no leading article, no parenthesised suffix) → current communes. */
  byLooseName: Map<string, Commune[]>;
  /** postal code → current communes, arrondissement level (city communes with arrondissements excluded). */
  byPostalCode: Map<string, Commune[]>;
  /** codes-postaux entries whose commune code decoupage-administratif does not know (0 with the pinned versions). */
  unmappedPostalEntries: number;
}

let index: GeoIndex | undefined;

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) {
    if (!list.includes(value)) list.push(value);
  } else map.set(key, [value]);
}

/** COG's NCC form drops the article ("ABERGEMENT CLEMENCIAT"); a parenthesised suffix separates homonyms. */
function looseKey(name: string, normalised = normalizeName(name)): string {
  const base = name.includes('(') ? normalizeName(name.replace(/\s*\(.*\)\s*$/, '')) : normalised;
  return base.replace(/^(LE|LA|LES|L) /, '');
}

const byCode = (a: Commune, b: Commune): number => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0);

function buildIndex(): GeoIndex {
  const raw = readJson<RawCommune[]>(`${DECOUPAGE_PKG}/data/communes.json`);
  const postal = readJson<RawPostal[]>(`${CODES_POSTAUX_PKG}/codes-postaux.json`);

  const current = new Map<string, Commune>();
  const former: Commune[] = [];
  const postalSets = new Map<string, Set<string>>();
  for (const r of raw) {
    const isCurrent = r.type === 'commune-actuelle' || r.type === 'arrondissement-municipal';
    const parent = r.type === 'arrondissement-municipal' ? r.commune : isCurrent ? undefined : r.chefLieu;
    const c: Commune = {
      code: r.code,
      nom: r.nom,
      nomNormalise: normalizeName(r.nom),
      departement: r.departement,
      type: r.type,
      codesPostaux: [],
    };
    if (parent) c.parent = parent;
    if (r.population !== undefined) c.population = r.population;
    if (r.region) c.region = r.region;
    if (isCurrent) {
      current.set(c.code, c);
      postalSets.set(c.code, new Set(r.codesPostaux ?? []));
    } else former.push(c);
  }

  // Precedence: a current code stays itself (a commune déléguée often keeps its commune nouvelle's code), then the
  // chef-lieu of communes déléguées/associées, then anciensCodes. The chef-lieu comes before anciensCodes because
  // it is INSEE's current COMPARENT, whereas anciensCodes disagrees with it twice, following older history
  // (55273 → 55245 instead of 55386, 60455 → 60054 instead of 60694).
  const toCurrent = new Map<string, string>();
  for (const code of current.keys()) toCurrent.set(code, code);
  for (const f of former) if (f.parent && !toCurrent.has(f.code) && current.has(f.parent)) toCurrent.set(f.code, f.parent);
  for (const r of raw) {
    if (r.type !== 'commune-actuelle') continue;
    for (const old of r.anciensCodes ?? []) if (!toCurrent.has(old)) toCurrent.set(old, r.code);
  }

  const arrondissements = new Map<string, Commune[]>();
  for (const c of current.values()) if (c.type === 'arrondissement-municipal' && c.parent) push(arrondissements, c.parent, c);

  // codes-postaux predates some mergers (its source, FIMOCT, stopped in 2023): map its codes to current communes.
  let unmappedPostalEntries = 0;
  for (const p of postal) {
    const code = toCurrent.get(p.codeCommune);
    const set = code ? postalSets.get(code) : undefined;
    if (set) set.add(p.codePostal);
    else unmappedPostalEntries++;
  }
  // A city with arrondissements is served by all of its arrondissements' postal codes.
  for (const [city, arrs] of arrondissements) {
    const set = postalSets.get(city);
    if (set) for (const a of arrs) for (const cp of postalSets.get(a.code) ?? []) set.add(cp);
  }

  const byPostalCode = new Map<string, Commune[]>();
  for (const c of current.values()) {
    c.codesPostaux = [...(postalSets.get(c.code) ?? [])].sort();
    Object.freeze(c.codesPostaux);
    // DVF records sales at arrondissement level, so the city itself is never a postal-code answer.
    if (arrondissements.has(c.code)) continue;
    for (const cp of c.codesPostaux) push(byPostalCode, cp, c);
  }

  const byName = new Map<string, Commune[]>();
  const byLooseName = new Map<string, Commune[]>();
  for (const c of current.values()) {
    push(byName, c.nomNormalise, c);
    push(byLooseName, looseKey(c.nom, c.nomNormalise), c);
  }
  const formerByName = new Map<string, Commune[]>();
  for (const f of former) {
    const target = f.parent ? current.get(f.parent) : undefined;
    if (target) push(formerByName, f.nomNormalise, target);
  }

  for (const map of [byName, byLooseName, formerByName, byPostalCode, arrondissements]) {
    for (const list of map.values()) list.sort(byCode);
  }
  for (const c of current.values()) Object.freeze(c);

  return { current, toCurrent, arrondissements, byName, formerByName, byLooseName, byPostalCode, unmappedPostalEntries };
}

function geo(): GeoIndex {
  index ??= buildIndex();
  return index;
}

/** Forces the lazy load (e.g. at API warm-up) and returns the time it took in milliseconds (0 if already loaded). */
export function loadReference(): number {
  if (index) return 0;
  const t0 = performance.now();
  geo();
  return performance.now() - t0;
}

// ---------------------------------------------------------------------------------------------------------------
// Lookups

export function currentCommuneCode(code: string): string | undefined {
  return geo().toCurrent.get(normalizeCode(code));
}

/** The current commune (or arrondissement municipal) for a current or former INSEE code. */
export function getCommune(code: string): Commune | undefined {
  const g = geo();
  const cur = g.toCurrent.get(normalizeCode(code));
  return cur ? g.current.get(cur) : undefined;
}

/**
 * Département of the commune the code designates today (a former code follows its commune nouvelle, which may
 * lie in another département: 02285 Escaufourt is now part of 59545). Unknown but well-formed codes fall back
 * to their prefix, so that the pipeline can still file rows whose commune vanished before the COG vintage.
 */
export function departementOfCommune(code: string): string | undefined {
  const c = getCommune(code);
  if (c) return c.departement;
  const k = normalizeCode(code);
  if (!INSEE_CODE_RE.test(k)) return undefined;
  const dep = k.startsWith('97') ? k.slice(0, 3) : k.slice(0, 2);
  return isDepartement(dep) ? dep : undefined;
}

/** The city of Paris, Lyon or Marseille stands for its arrondissements, which is where DVF files its sales. */
function expandCities(communes: Commune[]): Commune[] {
  const g = geo();
  const out: Commune[] = [];
  for (const c of communes) for (const x of g.arrondissements.get(c.code) ?? [c]) if (!out.includes(x)) out.push(x);
  return out.sort(byCode);
}

const ARRONDISSEMENT_RE = /^(.+?) 0?(\d{1,2}) ?(E|EME|IEME|ER|ERE)?( ARRONDISSEMENT| ARRT| ARR)?$/;

/** 'PARIS 15', 'PARIS 1ER', 'MARSEILLE 08 ARRT' → the COG spelling 'PARIS 15E ARRONDISSEMENT'. */
function arrondissementKey(key: string): string | undefined {
  const m = ARRONDISSEMENT_RE.exec(key);
  if (!m) return undefined;
  const n = Number(m[2]);
  return `${m[1]} ${n}${n === 1 ? 'ER' : 'E'} ARRONDISSEMENT`;
}

/**
 * Communes matching a user or source input: an INSEE code (current or former) or a name, accent- and
 * case-insensitive. Paris, Lyon and Marseille (by name or by their city code) give their arrondissements.
 * Name matching tries, in order, current communes, then communes déléguées/associées (mapped to their current
 * commune), then a looser key without leading article or parenthesised suffix; the first step with a result
 * (after the optional département filter) wins. Results are sorted by code.
 */
export function resolveCommune(input: string, opts: { departement?: string } = {}): Commune[] {
  const g = geo();
  const dep = opts.departement ? normalizeDepartementInput(opts.departement) : undefined;
  const keep = (list: Commune[] | undefined): Commune[] => {
    const expanded = expandCities(list ?? []);
    return dep ? expanded.filter((c) => c.departement === dep) : expanded;
  };

  const code = normalizeCode(input);
  if (INSEE_CODE_RE.test(code)) {
    const c = getCommune(code);
    return c ? keep([c]) : [];
  }

  const key = normalizeName(input);
  if (!key) return [];
  const arrKey = arrondissementKey(key);
  const steps: (Commune[] | undefined)[] = [
    g.byName.get(key),
    arrKey ? g.byName.get(arrKey) : undefined,
    g.formerByName.get(key),
    g.byLooseName.get(looseKey(input)),
  ];
  for (const step of steps) {
    const found = keep(step);
    if (found.length) return found;
  }
  return [];
}

/** Postal codes of a commune (current or former code), decoupage-administratif and codes-postaux merged. */
export function postalCodesOfCommune(code: string): string[] {
  return [...(getCommune(code)?.codesPostaux ?? [])];
}

/**
 * Communes using a postal code, at arrondissement level for Paris/Lyon/Marseille. Includes communes of another
 * département served by that code: codes-postaux maps a few streets of Boulogne-Billancourt to 75016 and of
 * Issy-les-Moulineaux to 75015, and e.g. 39102 Chancia is only served by 01590.
 */
export function communesOfPostalCode(cp: string): Commune[] {
  const norm = normalizePostalCode(cp);
  return norm ? [...(geo().byPostalCode.get(norm) ?? [])] : [];
}

/** All current communes and arrondissements municipaux (including the collectivités d'outre-mer in the package). */
export function allCommunes(): Commune[] {
  return [...geo().current.values()];
}

/** Counts useful in data reports: what the merge could not place. */
export function referenceStats(): { communes: number; formerCodes: number; unmappedPostalEntries: number } {
  const g = geo();
  return {
    communes: g.current.size,
    formerCodes: g.toCurrent.size - g.current.size,
    unmappedPostalEntries: g.unmappedPostalEntries,
  };
}

/** Every known INSEE code (current, arrondissement, délégué, associé, former) with the current commune it maps to. */
export function codeMappings(): Array<{ code: string; code_actuel: string }> {
  return [...geo().toCurrent.entries()].map(([code, code_actuel]) => ({ code, code_actuel })).sort((a, b) => (a.code < b.code ? -1 : 1));
}
