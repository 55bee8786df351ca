// Street-name normalisation for GET /v1/property-history: the key an address is matched on, and the parsing of a
// free-text address into house number, suffix and street. streetKey() mirrors the SQL of
// marts/models/marts/adresses_ventes.sql (voie_cle); test/api/property-history/property-history.test.ts checks they agree on every street.

/** Street types, long forms and DVF/FANTOIR abbreviations, each with the abbreviation DVF writes. */
const STREET_TYPES: Record<string, string> = {
  ALL: 'ALL', ALLEE: 'ALL', ALLEES: 'ALL', AV: 'AV', AVE: 'AV', AVENUE: 'AV', BD: 'BD', BLD: 'BD', BOUL: 'BD',
  BOULEVARD: 'BD', CAR: 'CAR', CARREFOUR: 'CAR', CHE: 'CHE', CHEM: 'CHE', CHEMIN: 'CHE', CHS: 'CHS', CHAUSSEE: 'CHS',
  CITE: 'CITE', CLOS: 'CLOS', CRS: 'CRS', COURS: 'CRS', DOM: 'DOM', DOMAINE: 'DOM', DSC: 'DSC', DESCENTE: 'DSC',
  ESP: 'ESP', ESPLANADE: 'ESP', FG: 'FG', FBG: 'FG', FAUBOURG: 'FG', HAM: 'HAM', HAMEAU: 'HAM', IMP: 'IMP',
  IMPASSE: 'IMP', LD: 'LD', LOT: 'LOT', LOTISSEMENT: 'LOT', MTE: 'MTE', MONTEE: 'MTE', PAS: 'PAS', PASS: 'PAS',
  PASSAGE: 'PAS', PL: 'PL', PLACE: 'PL', PLT: 'PLT', PLATEAU: 'PLT', PRV: 'PRV', PARVIS: 'PRV', PROM: 'PROM',
  PROMENADE: 'PROM', QUA: 'QUA', QUAI: 'QUAI', QUAR: 'QUA', QUARTIER: 'QUA', R: 'RUE', RUE: 'RUE', RES: 'RES',
  RESIDENCE: 'RES', RLE: 'RLE', RUELLE: 'RLE', RPT: 'RPT', RTE: 'RTE', ROUTE: 'RTE', SEN: 'SEN', SENT: 'SEN',
  SENTE: 'SEN', SENTIER: 'SEN', SQ: 'SQ', SQUARE: 'SQ', TRA: 'TRA', TRAVERSE: 'TRA', VLA: 'VLA', VILLA: 'VLA',
  VOIE: 'VOIE',
};

/** Words DVF abbreviates inside street names. */
const WORDS: Record<string, string> = {
  SAINT: 'ST', SAINTE: 'STE', SAINTS: 'STS', SAINTES: 'STES', GRAND: 'GD', GRANDE: 'GDE', GRANDES: 'GDES',
  GENERAL: 'GAL', MARECHAL: 'MAL', PRESIDENT: 'PDT', DOCTEUR: 'DR', PROFESSEUR: 'PROF',
};

const ARTICLES = new Set(['DE', 'DU', 'DES', 'LA', 'LE', 'LES', 'L', 'D', 'AU', 'AUX']);

const SUFFIXES: Record<string, string> = { BIS: 'B', TER: 'T', QUATER: 'Q', B: 'B', T: 'T', Q: 'Q' };

function words(s: string): string[] {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/Œ/g, 'OE')
    .split(/[^A-Z0-9]+/)
    .filter(Boolean);
}

/** The word list with its leading street type dropped (kept when it is the only word) and DVF abbreviations applied. */
function untyped(w: string[]): string[] {
  return (w.length > 1 && w[0] in STREET_TYPES ? w.slice(1) : w).map((x) => WORDS[x] ?? x);
}

/** Matching key of a street name: type, articles, accents, case and punctuation ignored ('AV DE PARIS' → 'PARIS'). */
export function streetKey(name: string): string {
  const w = untyped(words(name));
  const core = w.filter((x) => !ARTICLES.has(x));
  return (core.length ? core : w).join(' ');
}

/** The street spelled as DVF would: type abbreviated, articles kept ('avenue de Paris' → 'AV DE PARIS'). */
export function streetFull(name: string): string {
  const w = words(name);
  if (w.length > 1 && w[0] in STREET_TYPES) return [STREET_TYPES[w[0]], ...w.slice(1).map((x) => WORDS[x] ?? x)].join(' ');
  return w.map((x) => WORDS[x] ?? x).join(' ');
}

interface ParsedAddress {
  numero: number | null;
  suffixe: string | null;
  street: string;
}

/**
 * '12 bis, avenue de Paris 75015 Paris' → {numero: 12, suffixe: 'B', street: 'avenue de Paris'}: a leading number
 * (with a glued letter or BIS/TER/QUATER), and anything from a 5-digit postal code on is dropped.
 */
export function parseAddress(input: string): ParsedAddress {
  let s = input.trim().replace(/\s*,?\s*\b\d{5}\b.*$/, '');
  let numero: number | null = null;
  let suffixe: string | null = null;
  // Only a letter glued to the number is a suffix here ('12B'); '5 R DE LA PAIX' keeps R, a street type, in the street.
  const m = /^(\d{1,5})([A-Za-z])?(?=[\s,]|$)[\s,]*/.exec(s);
  if (m) {
    numero = Number(m[1]);
    suffixe = m[2] ? m[2].toUpperCase() : null;
    s = s.slice(m[0].length);
    const sfx = /^([A-Za-z]+)\b[\s,]*/.exec(s);
    if (!suffixe && sfx && SUFFIXES[sfx[1].toUpperCase()] && s.slice(sfx[0].length).trim()) {
      suffixe = SUFFIXES[sfx[1].toUpperCase()];
      s = s.slice(sfx[0].length);
    }
  }
  return { numero, suffixe, street: s.trim() };
}
