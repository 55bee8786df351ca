// What makes "one property" among the sales an address or a parcel matches, and the change of its price per m²
// between its first and last sale (GET /v1/property-history).
import { round2, z } from '../../params';
import type { Call } from '../../platform';

/** Two sales are of the same property when their built surfaces differ by at most this share (re-measurement, works). */
const SURFACE_TOLERANCE = 0.1;

export interface SaleRow {
  id: number;
  date_mutation: string;
  valeur_fonciere: number;
  prix_m2: number | null;
  surface_reelle_bati: number | null;
  nombre_pieces_principales: number | null;
  type_local: string;
  id_parcelle: string | null;
  section: string | null;
  no_plan: string | null;
  code_commune: string;
  commune: string | null;
  code_postal: string | null;
  code_departement: string;
  address: string | null;
  adresse_nom_voie: string | null;
  lots: string[] | null;
}

export const SALE_COLUMNS = `id, date_mutation, valeur_fonciere, prix_m2, surface_reelle_bati, nombre_pieces_principales, type_local,
  id_parcelle, section, no_plan, code_commune, commune, code_postal, code_departement, address, adresse_nom_voie, lots`;

/** Same parcel and type, built surface within the tolerance, and a common lot number when both sales list lots. */
function sameProperty(anchor: SaleRow, s: SaleRow): boolean {
  if (s.id_parcelle !== anchor.id_parcelle || s.type_local !== anchor.type_local) return false;
  const a = anchor.surface_reelle_bati;
  const b = s.surface_reelle_bati;
  if (a === null || b === null ? a !== b : Math.abs(b - a) > SURFACE_TOLERANCE * a) return false;
  if (anchor.lots?.length && s.lots?.length && !s.lots.some((l) => anchor.lots!.includes(l))) return false;
  return true;
}

/**
 * The property is that of the most recent matched sale (the first: sales come newest first). Its history also takes
 * the sales of the same property recorded on its parcel (and postal code) under another address spelling or number.
 */
export async function resolveProperty(call: Call, matched: SaleRow[], opts: { numberGiven?: boolean } = {}): Promise<{ anchor: SaleRow; sales: SaleRow[]; notice?: string }> {
  const anchor = matched[0];
  // The mart is sorted by département then postal code: naming both lets DuckDB read one row group, not the département.
  const zone = anchor.code_postal === null ? '' : 'and code_postal = $cp';
  const onParcel = anchor.id_parcelle
    ? await call.ctx.db.query<SaleRow>(
        `select ${SALE_COLUMNS} from adresses_ventes
         where code_departement = $dep ${zone} and id_parcelle = $parcel and type_local = $type
         order by date_mutation desc, id desc`,
        { dep: anchor.code_departement, parcel: anchor.id_parcelle, type: anchor.type_local, ...(anchor.code_postal === null ? {} : { cp: anchor.code_postal }) },
      )
    : matched;
  const sales = onParcel.filter((s) => sameProperty(anchor, s));
  const others = matched.filter((m) => !sameProperty(anchor, m)).length;
  if (others === 0) return { anchor, sales };
  const surface = anchor.surface_reelle_bati === null ? '' : ` of ${anchor.surface_reelle_bati} m²`;
  // Say how to pick another property with what the request does not already hold (the number, when it was not given;
  // else the parcel), naming the other parcels so the client can ask for one.
  const parcels = [
    ...new Set(matched.filter((m) => !sameProperty(anchor, m) && m.id_parcelle !== anchor.id_parcelle && m.section && m.no_plan).map((m) => `section ${m.section} no_plan ${m.no_plan} code_commune ${m.code_commune}`)),
  ];
  const shown = parcels.slice(0, 5).join('; ') + (parcels.length > 5 ? '; …' : '');
  const byParcel = parcels.length ? `give the parcel of the one you mean (section + no_plan + code_commune; other parcels matched: ${shown})` : '';
  const how = [opts.numberGiven ? '' : 'add the house number', byParcel].filter(Boolean).join(', or ');
  const tail = how ? ` To pick another, ${how}.` : ' The others share its parcel (other lots or types) and cannot be chosen by address or parcel.';
  const notice =
    `several properties match: ${others} other matched sale${others > 1 ? 's' : ''} belong${others > 1 ? '' : 's'} to other properties (another parcel, type, lot or ` +
    `surface); this is the history of the most recent sale's property (${anchor.type_local}${surface}, parcel ${anchor.id_parcelle ?? 'unknown'}).${tail}`;
  return { anchor, sales, notice };
}

export const priceEvolutionSchema = z.object({
  first_transaction: z.object({ date: z.string(), prix_m2: z.number() }),
  last_transaction: z.object({ date: z.string(), prix_m2: z.number() }),
  total_change_pct: z.number(),
  annualized_change_pct: z.number().nullable().openapi({ description: 'Compound annual rate over the elapsed days / 365.25; null when the sales are less than 365 days apart (read total_change_pct).' }),
});

const DAY_MS = 86_400_000;

/** From the oldest to the newest sale with a price per m² (sales newest first); null with fewer than two. */
export function priceEvolution(sales: SaleRow[]): z.output<typeof priceEvolutionSchema> | null {
  const priced = sales.filter((s) => s.prix_m2 !== null);
  if (priced.length < 2) return null;
  const last = priced[0];
  const first = priced[priced.length - 1];
  const ratio = last.prix_m2! / first.prix_m2!;
  const days = (Date.parse(last.date_mutation) - Date.parse(first.date_mutation)) / DAY_MS;
  return {
    first_transaction: { date: first.date_mutation, prix_m2: round2(first.prix_m2!) },
    last_transaction: { date: last.date_mutation, prix_m2: round2(last.prix_m2!) },
    total_change_pct: round2((ratio - 1) * 100),
    // Compounding a few days' change to a year gives absurd rates: under a year, the total change is the figure to read.
    annualized_change_pct: days >= 365 ? round2((ratio ** (365.25 / days) - 1) * 100) : null,
  };
}
