// The valuation horizon's end (docs/decisions.md, "Valuation horizon"): the latest sale loaded for the zone's
// département when that is earlier than today. DVF is published months after the sales, so a horizon that ends today
// would hold few or no sales on data that lags, and every estimate would go blank.
import type { Params, Row } from '../duck';
import { communesOfPostalCode, departementOfCommune } from '../geo';

export interface ReferenceZone {
  latitude: number;
  longitude: number;
  codePostal: string | null;
  communeCodes: string[];
}

export interface ReferenceDate {
  /** YYYY-MM-DD: the day max_age_months counts back from. */
  date: string;
  /** The département whose latest sale set it (null when none could be found near the subject). */
  departement: string | null;
  /** True when the data ends before today (the response then carries a notice). */
  lagging: boolean;
}

type QueryFn = (sql: string, params: Params) => Promise<Row[]>;

/** Degrees around the subject searched for its département's nearest sale (~11 km). */
const NEAR_DEGREES = 0.1;
/**
 * A first, small box (~1.1 km) answers most subjects after reading a few row groups instead of a whole city's: its
 * nearest sale is THE nearest whenever it lies within the box's half-height (in latitude-scaled degrees), since any
 * sale outside the box is farther than that. Otherwise the full box is searched.
 */
const FIRST_DEGREES = 0.01;

/** The reference day from today and the latest sale of the zone's département (pure, tested on its own). */
export function referenceDay(today: string, latestSale: string | null | undefined): string {
  return latestSale && latestSale < today ? latestSale : today;
}

/**
 * The département of the subject is the one holding most of the loaded sales of its 0.01° cell (one point lookup in
 * `valuation_reference_cellules`), else, in a cell without sales, the one of its nearest loaded sale (within ~11 km),
 * else the département of its postal-code or commune fallback; its latest sale ends the horizon when earlier than today.
 */
export async function referenceDate(query: QueryFn, zone: ReferenceZone, today: string): Promise<ReferenceDate> {
  const cos = Math.max(0.01, Math.cos((zone.latitude * Math.PI) / 180));
  const nearest = async (d: number) => (await query(
    `with nearest as (
       select code_departement, pow(latitude - $lat, 2) + pow((longitude - $lon) * $cos, 2) as d2 from valuation_ventes
       where latitude between $lat - $d and $lat + $d and longitude between $lon - $d / $cos and $lon + $d / $cos
         and code_departement is not null
       order by d2, id
       limit 1)
     select n.code_departement, n.d2, h.derniere_date::VARCHAR as derniere_date
     from nearest n left join ventes_horizon_departements h using (code_departement)`,
    { lat: zone.latitude, lon: zone.longitude, d, cos },
  ))[0];
  let [near] = await query(
    `select code_departement, derniere_date::VARCHAR as derniere_date from valuation_reference_cellules
     where cell_lat = $cell_lat and cell_lon = $cell_lon`,
    { cell_lat: Math.floor(zone.latitude * 100), cell_lon: Math.floor(zone.longitude * 100) },
  );
  if (!near) {
    near = await nearest(FIRST_DEGREES);
    if (!near || (near.d2 as number) > FIRST_DEGREES ** 2) near = await nearest(NEAR_DEGREES);
  }
  let departement = (near?.code_departement as string | undefined) ?? null;
  let latest = (near?.derniere_date as string | null | undefined) ?? null;
  if (!departement) {
    const commune = zone.codePostal ? communesOfPostalCode(zone.codePostal)[0]?.code : zone.communeCodes[0];
    departement = (commune && departementOfCommune(commune)) ?? null;
    if (departement) {
      const [row] = await query('select derniere_date::VARCHAR as derniere_date from ventes_horizon_departements where code_departement = $dep', { dep: departement });
      latest = (row?.derniere_date as string | null | undefined) ?? null;
    }
  }
  const date = referenceDay(today, latest);
  return { date, departement, lagging: date < today };
}

/** The notice of a response whose horizon does not end today. */
export function referenceNotice(ref: ReferenceDate, maxAgeMonths: number): string {
  return (
    `The loaded sales of département ${ref.departement} end on ${ref.date} (DVF is published months after the sales): ` +
    `max_age_months = ${maxAgeMonths} counts back from that date (reference_date), not from today.`
  );
}
