// Shared by the BDNB endpoints: the construction-age brackets and the sales their statistics use.
import type { Params } from '../../../lib/duck';
import { ApiError } from '../../errors';
import { locationFields, resolveLocation, type Location } from '../../location';
import { enumParam, z } from '../../params';

/** The specification's construction-age brackets, in order (bdnb_batiments.tranche). */
export const TRANCHES = ['avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus'] as const;

/** "Old" buildings of renovation-score and pct_vieux: built before this year (the first thermal regulation, 1974). */
export const OLD_BEFORE = 1975;

/**
 * The clean priced sales of a zone and types, over every year loaded (the BDNB endpoints take no date window):
 * no bulk sale, outlier or off-plan sale, a €/m². The condition reads the same columns in `ventes` (the zone's market)
 * and `bdnb_ventes` (the sales matched to a building).
 */
function bdnbSalesWhere(location: Location, types: string[]): { where: string; params: Params } {
  const params: Params = { ...location.params };
  types.forEach((t, i) => (params[`type${i}`] = t));
  const where = [
    location.where,
    `type_local in (${types.map((_, i) => `$type${i}`).join(', ')})`,
    'not is_bulk_sale and not is_outlier and not is_vefa and prix_m2 is not null',
  ];
  return { where: where.join(' and '), params };
}

/** The query of age-stats and renovation-score: a zone (no latitude/longitude) and a two-value type. */
export const zoneQuery = z.object({
  ...locationFields,
  type_local: enumParam(['Maison', 'Appartement'], 'Maison or Appartement (default: both).').optional(),
});

export function prepareZone(q: z.output<typeof zoneQuery>, endpoint: string): { where: string; params: Params; departement?: string; typeKey: string; location: Location } {
  if (q.latitude !== undefined || q.longitude !== undefined) {
    throw new ApiError('unsupported_location', `latitude/longitude searches are not supported by ${endpoint} (use code_postal, commune or code_departement)`);
  }
  const location = resolveLocation(q, { accept: ['code_postal', 'commune', 'code_departement'] });
  // A whole département (no postal code or commune with it): the endpoints may read its precomputed figures.
  const departement = q.code_postal === undefined && q.commune === undefined ? String(location.params.loc_dep) : undefined;
  return { ...bdnbSalesWhere(location, q.type_local ? [q.type_local] : ['Maison', 'Appartement']), departement, typeKey: q.type_local ?? 'all', location };
}
