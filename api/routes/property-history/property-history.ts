// GET /v1/property-history (20 credits): the sales of one property, found by address (street type, articles,
// accents and case ignored) or by cadastral parcel, with the change of its price per m² over time.
import { departementOfCommune } from '../../../lib/geo';
import { invalidParams } from '../../errors';
import { locationFields } from '../../location';
import { inseeCodeParam, round2, stringParam, z } from '../../params';
import { defineEndpoint, type Call } from '../../platform';
import { parseAddress, streetFull, streetKey } from './street';
import { priceEvolution, priceEvolutionSchema, resolveProperty, SALE_COLUMNS, type SaleRow } from './property';

/** Below this Jaro-Winkler similarity a street is not taken for a misspelling of the one asked. */
const MIN_SIMILARITY = 0.9;

const query = z.object({
  address: stringParam({ description: 'Number and street, e.g. "12 rue de Vaugirard" (requires code_postal).', example: '12 rue de Vaugirard' }).optional(),
  code_postal: locationFields.code_postal,
  section: stringParam({ description: 'Cadastral section (e.g. AB, or D / 0D).', pattern: /^[0-9A-Za-z]{1,2}$/, issue: 'must be a cadastral section of 1 or 2 letters or digits' }).optional(),
  no_plan: stringParam({ description: 'Parcel number in its section (e.g. 123 or 0123).', pattern: /^\d{1,4}$/, issue: 'must be a parcel number of 1 to 4 digits' }).optional(),
  code_commune: inseeCodeParam('INSEE code of the parcel’s commune (5 characters).').optional(),
});

type Query = z.output<typeof query>;

const MATCH_TYPES = ['address_exact', 'address_fuzzy', 'cadastre'] as const;

type Prepared =
  | { mode: 'address'; address: string; code_postal: string; numero: number | null; suffixe: string | null; key: string; full: string }
  | { mode: 'cadastre'; section: string; no_plan: string; code_commune: string; dep: string };

/** Which of the two modes the parameters ask for; a mixed or partial request names what is wrong. */
function parseRequest(q: Query): Prepared {
  const cadastre = { section: q.section, no_plan: q.no_plan, code_commune: q.code_commune };
  const given = Object.entries(cadastre).filter(([, v]) => v !== undefined);
  if (given.length > 0) {
    const extra = (['address', 'code_postal'] as const).filter((k) => q[k] !== undefined);
    if (extra.length) throw invalidParams(extra.map((param) => ({ param, issue: 'give either address + code_postal, or section + no_plan + code_commune, not both' })));
    const missing = Object.entries(cadastre).filter(([, v]) => v === undefined);
    if (missing.length) throw invalidParams(missing.map(([param]) => ({ param, issue: 'required for a search by cadastral parcel (section, no_plan, code_commune)' })));
    const code_commune = q.code_commune!.toUpperCase();
    const dep = departementOfCommune(code_commune);
    if (!dep) throw invalidParams([{ param: 'code_commune', issue: `"${q.code_commune}" is not a French commune code` }]);
    return { mode: 'cadastre', section: q.section!.toUpperCase(), no_plan: q.no_plan!, code_commune, dep };
  }
  if (q.address === undefined) {
    throw invalidParams([{ param: 'address', issue: q.code_postal ? 'required with code_postal' : 'give address + code_postal, or section + no_plan + code_commune' }]);
  }
  if (q.code_postal === undefined) throw invalidParams([{ param: 'code_postal', issue: 'required with address' }]);
  const parsed = parseAddress(q.address);
  const key = streetKey(parsed.street);
  if (!key) throw invalidParams([{ param: 'address', issue: 'must contain a street name' }]);
  return { mode: 'address', address: q.address, code_postal: q.code_postal, numero: parsed.numero, suffixe: parsed.suffixe, key, full: streetFull(parsed.street) };
}

/** The sales at the address asked, the streets they were matched on and how. */
async function salesAtAddress(call: Call, p: Extract<Prepared, { mode: 'address' }>) {
  const streets = await call.ctx.db.query<{ street: string; voie_cle: string; sim: number }>(
    `select adresse_nom_voie as street, voie_cle, jaro_winkler_similarity(voie_cle, $key) as sim
     from adresses_voies where code_postal = $cp order by sim desc, street`,
    { cp: p.code_postal, key: p.key },
  );
  // The street key itself, else the closest key when it is close enough to be a misspelling.
  const best = streets.find((s) => s.voie_cle === p.key) ?? (streets[0]?.sim >= MIN_SIMILARITY ? streets[0] : undefined);
  if (!best) return { sales: [] as SaleRow[], streets: [] as string[], matchType: null, why: `no street matching "${p.address}" has sales in ${p.code_postal}.` };
  let matched = streets.filter((s) => s.voie_cle === best.voie_cle).map((s) => s.street);
  const exact = matched.filter((s) => streetFull(s) === p.full);
  if (exact.length) matched = exact;
  const params: Record<string, string | number> = { cp: p.code_postal };
  matched.forEach((s, i) => (params[`s${i}`] = s));
  const conditions = [`code_postal = $cp`, `adresse_nom_voie in (${matched.map((_, i) => `$s${i}`).join(', ')})`];
  if (p.numero !== null) {
    conditions.push('numero = $numero');
    params.numero = p.numero;
    if (p.suffixe !== null) {
      conditions.push('adresse_suffixe = $suffixe');
      params.suffixe = p.suffixe;
    }
  }
  const sales = await call.ctx.db.query<SaleRow>(`select ${SALE_COLUMNS} from adresses_ventes where ${conditions.join(' and ')} order by date_mutation desc, id desc`, params);
  const number = p.numero === null ? '' : `number ${p.numero}${p.suffixe ?? ''} of `;
  return {
    sales,
    streets: matched,
    matchType: exact.length ? ('address_exact' as const) : ('address_fuzzy' as const),
    why: `no sale of a house, flat or commercial premises at ${number}${matched.join(' / ')} (${p.code_postal}).`,
  };
}

export const propertyHistory = defineEndpoint({
  method: 'get',
  path: '/v1/property-history',
  tag: 'Market analytics',
  summary: 'Sales history of one property',
  description:
    'Every sale since 2014 of one property (house, flat or commercial premises; bulk sales excluded), newest first. ' +
    'By address: address + code_postal; the street type (rue, av, boulevard…), articles (de, la, l’…), accents, case and ' +
    'punctuation are ignored, so "av de Paris", "AVENUE DE PARIS" and "Paris" find the same street; a close misspelling is ' +
    'accepted. match_type is address_exact when the street is spelled as DVF spells it (type abbreviations aside), ' +
    'address_fuzzy otherwise. By cadastral parcel: section + no_plan + code_commune, exact (match_type cadastre). ' +
    'When the match holds several properties, the history is that of the most recent sale’s property (same parcel, type, ' +
    'lot and built surface within ±10 %), and a notice says how many sales were left out. No match answers 200 with no ' +
    'transactions and a notice. annualized_change_pct = ((last prix_m2 / first prix_m2)^(365.25 / days between them) − 1) × 100, null under 365 days.',
  query,
  response: z.object({
    query: z.object({
      address: z.string().nullable(),
      code_postal: z.string().nullable(),
      section: z.string().nullable(),
      no_plan: z.string().nullable(),
      code_commune: z.string().nullable(),
      match_type: z.enum(MATCH_TYPES).nullable().openapi({ description: 'null when no street matches the address.' }),
      matched_streets: z.array(z.string()).openapi({ description: 'The DVF street names the address was matched on.' }),
    }),
    property: z
      .object({
        commune: z.string().nullable(),
        code_commune: z.string(),
        code_postal: z.string().nullable(),
        address: z.string().nullable(),
        section: z.string().nullable(),
        no_plan: z.string().nullable(),
        id_parcelle: z.string().nullable(),
        type_local: z.string(),
        surface_reelle_bati: z.number().nullable(),
      })
      .nullable()
      .openapi({ description: 'As recorded by its most recent sale; null without a match.' }),
    transactions: z.array(
      z.object({
        id: z.number().int(),
        date_mutation: z.string(),
        valeur_fonciere: z.number(),
        prix_m2: z.number().nullable(),
        surface_reelle_bati: z.number().nullable(),
        nombre_pieces_principales: z.number().nullable(),
        type_local: z.string(),
      }),
    ),
    price_evolution: priceEvolutionSchema.nullable().openapi({ description: 'null with fewer than two sales with a price per m².' }),
    notice: z.string().optional(),
  }),
  credits: 20,
  errors: [],
  prepare: ({ query: q }) => parseRequest(q),
  async handler(p, call) {
    const found =
      p.mode === 'address'
        ? await salesAtAddress(call, p)
        : {
            sales: await call.ctx.db.query<SaleRow>(
              `select ${SALE_COLUMNS} from adresses_ventes
               where code_departement = $dep and (code_commune = $c or code_commune_actuel = $c) and section_cle = $s and plan_num = $n
               order by date_mutation desc, id desc`,
              { dep: p.dep, c: p.code_commune, s: p.section.replace(/^0+/, ''), n: Number(p.no_plan) },
            ),
            streets: [] as string[],
            matchType: 'cadastre' as const,
            why: `no sale of a house, flat or commercial premises on parcel ${p.section} ${p.no_plan} of ${p.code_commune}.`,
          };
    const resolved = found.sales.length ? await resolveProperty(call, found.sales, { numberGiven: p.mode === 'cadastre' || p.numero !== null }) : undefined;
    const a = resolved?.anchor;
    return {
      query: {
        address: p.mode === 'address' ? p.address : null,
        code_postal: p.mode === 'address' ? p.code_postal : null,
        section: p.mode === 'cadastre' ? p.section : null,
        no_plan: p.mode === 'cadastre' ? p.no_plan : null,
        code_commune: p.mode === 'cadastre' ? p.code_commune : null,
        match_type: found.matchType,
        matched_streets: found.streets,
      },
      property: a
        ? { commune: a.commune, code_commune: a.code_commune, code_postal: a.code_postal, address: a.address, section: a.section, no_plan: a.no_plan, id_parcelle: a.id_parcelle, type_local: a.type_local, surface_reelle_bati: a.surface_reelle_bati }
        : null,
      transactions: (resolved?.sales ?? []).map((s) => ({
        id: s.id,
        date_mutation: s.date_mutation,
        valeur_fonciere: s.valeur_fonciere,
        prix_m2: round2(s.prix_m2),
        surface_reelle_bati: s.surface_reelle_bati,
        nombre_pieces_principales: s.nombre_pieces_principales,
        type_local: s.type_local,
      })),
      price_evolution: priceEvolution(resolved?.sales ?? []),
      ...(resolved?.notice ? { notice: resolved.notice } : !resolved ? { notice: found.why } : {}),
    };
  },
});
