// SIRENE rules shared by the pipeline (géo-SIRENE stock), the marts and the API (search and live registry lookup):
// which NAF codes are which business type, what a valid SIREN is, and the privacy rule of partial diffusion.

/** The specification's business types and the NAF rev. 2 codes (written without their dot) each one covers. */
export const NAF_BY_TYPE = {
  agence: ['6831Z'],
  notaire: ['6910Z'],
  promoteur: ['4110A', '4110B', '4110C', '4110D'],
  gestionnaire: ['6832A', '6832B'],
  marchand: ['6810Z'],
  courtier: ['6612Z'],
  bailleur: ['6820A'],
} as const;

export type BusinessType = keyof typeof NAF_BY_TYPE;

export const BUSINESS_TYPES = Object.keys(NAF_BY_TYPE) as [BusinessType, ...BusinessType[]];

const TYPE_BY_NAF = new Map<string, BusinessType>(
  Object.entries(NAF_BY_TYPE).flatMap(([type, codes]) => codes.map((c) => [c, type as BusinessType] as const)),
);

/** INSEE writes `68.31Z`, the specification `6831Z`: both (any case, spaces around) become `6831Z`. */
export function normalizeNaf(raw: string | null | undefined): string | undefined {
  const s = raw?.trim().toUpperCase().replace('.', '');
  return s && /^\d{4}[A-Z]$/.test(s) ? s : undefined;
}

export function businessTypeOfNaf(raw: string | null | undefined): BusinessType | undefined {
  const naf = normalizeNaf(raw);
  return naf ? TYPE_BY_NAF.get(naf) : undefined;
}

/** `(naf, type)` pairs as SQL VALUES rows, so the staging SQL and this module cannot disagree. */
export function nafTypeValuesSql(): string {
  return [...TYPE_BY_NAF].map(([naf, type]) => `('${naf}', '${type}')`).join(', ');
}

/** Luhn check over the 9 digits (every second digit from the right doubled). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/**
 * Why a SIREN is refused before any registry call, or undefined when it is well-formed. Every SIREN satisfies the
 * Luhn check, La Poste's 356000000 included: La Poste's exception concerns its SIRETs (356000000 + NIC), whose
 * 14 digits follow another rule, and SIRETs are not looked up here.
 */
export function sirenIssue(siren: string): string | undefined {
  if (!/^\d{9}$/.test(siren)) return 'must be exactly 9 digits';
  if (!luhnValid(siren)) return 'is not a valid SIREN (its check digit is wrong)';
  return undefined;
}

/** INSEE's marker for a value hidden by partial diffusion; it and blanks are absent values. */
export const NOT_DIFFUSED = '[ND]';

export function present(v: string | null | undefined): string | undefined {
  const s = v?.trim();
  return s && s !== NOT_DIFFUSED ? s : undefined;
}

/** Only an explicit `O` is full diffusion: `P`, a blank or anything unknown is treated as partial (privacy first). */
export function isPartialDiffusion(...statuts: Array<string | null | undefined>): boolean {
  return statuts.some((s) => s?.trim().toUpperCase() !== 'O');
}

/** Legal entities have a legal category not starting with 1 (1xxx: natural persons, whose names are people's
 * names). An unknown category is not known to be a legal entity. */
export function isLegalEntity(categorieJuridique: string | null | undefined): boolean {
  const c = present(categorieJuridique);
  return c !== undefined && !c.startsWith('1');
}

export interface NameParts {
  denominationUniteLegale?: string | null;
  denominationUsuelleEtablissement?: string | null;
  enseigne?: string | null;
  prenom?: string | null;
  nom?: string | null;
  categorieJuridique?: string | null;
  partial: boolean;
}

/**
 * The business's name: the legal unit's name, else the establishment's usual name or sign, else (sole traders) first
 * name and last name. Under partial diffusion only a legal entity's registered name is shown: a sole trader's usual
 * name or sign is often the person's own name, so it is withheld with the names (null).
 */
export function denominationOf(p: NameParts): string | null {
  const legal = present(p.denominationUniteLegale);
  if (p.partial) return legal && isLegalEntity(p.categorieJuridique) ? legal : null;
  const person = [present(p.prenom), present(p.nom)].filter(Boolean).join(' ');
  return legal ?? present(p.denominationUsuelleEtablissement) ?? present(p.enseigne) ?? (person || null);
}
