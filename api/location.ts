// The location filter shared by the analytic endpoints: its parameters, their resolution against the reference
// geography, and the SQL condition over the marts' columns (code_postal, code_commune_actuel, code_departement,
// latitude, longitude). Column names come from this file, values are always bound parameters.
import { communesOfPostalCode, getCommune, isDepartement, resolveCommune, type Commune } from '../lib/geo';
import { DEFAULT_RADIUS_M, haversineSql, METERS_PER_DEGREE } from '../lib/distance';
import type { Params } from '../lib/duck';
import { ApiError, invalidParams } from './errors';
import { numberParam, stringParam, z } from './params';


/** The département codes resolveLocation accepts (isDepartement, after padding one digit and upper-casing), as the
 * JSON Schema pattern the document publishes so that a client can check a code before calling; the check itself stays
 * resolveLocation's, whose message names the code. */
export const DEPARTEMENT_PATTERN = '^(0?[1-9]|1\\d|2[1-9]|[3-8]\\d|9[0-5]|2[ABab]|97[1-46])$';

/**
 * The location parameters. Only code_postal is prefilled in /docs: the others are documented with `examples`, so that
 * "Try it out" sends one location, not four that contradict each other; an operation without code_postal prefills its
 * own (params.ts, Examples).
 */
export const locationFields = {
  code_postal: stringParam({ description: 'Postal code (5 digits).', code: true, pattern: /^\d{5}$/, issue: 'must be a 5-digit postal code', example: '75015' }).optional(),
  commune: stringParam({
    description:
      'Commune name or INSEE code, case- and accent-insensitive. PARIS, LYON and MARSEILLE mean all their arrondissements; ' +
      '"PARIS 15", "PARIS 15E ARRONDISSEMENT" and 75115 name one arrondissement.',
    examples: ['PARIS 15', 'LYON', '33063'],
  }).optional(),
  code_departement: stringParam({ description: 'Département code (01–95, 2A, 2B, 971–974, 976).', code: true, examples: ['33', '2A', '971'] })
    .openapi({ pattern: DEPARTEMENT_PATTERN })
    .optional(),
  latitude: numberParam({ min: -90, max: 90, description: 'WGS84 latitude; requires longitude.', examples: [48.8414] }).optional(),
  longitude: numberParam({ min: -180, max: 180, description: 'WGS84 longitude; requires latitude.', examples: [2.3003] }).optional(),
  radius_m: numberParam({ min: 100, max: 2000, description: `Radius around latitude/longitude in metres (default ${DEFAULT_RADIUS_M}).` }).optional(),
};

/** The radius-search parameters, for endpoints that declare them only to refuse them (EndpointSpec.undocumentedQuery). */
export const RADIUS_PARAMS = ['latitude', 'longitude', 'radius_m'] as const;

export type LocationKind = 'code_postal' | 'commune' | 'code_departement' | 'radius';

export interface LocationInput {
  code_postal?: string;
  commune?: string;
  code_departement?: string;
  latitude?: number;
  longitude?: number;
  radius_m?: number;
}

export interface Location {
  /** The finest filter given (a radius beats a postal code, which beats a commune, which beats a département). */
  kind: LocationKind;
  /** SQL condition (without WHERE), a conjunction of every filter given. */
  where: string;
  params: Params;
  /** Echo of the filters as applied: the commune in its upper-case DVF form, the radius with its default. */
  echo: {
    code_postal: string | null;
    commune: string | null;
    code_departement: string | null;
    latitude: number | null;
    longitude: number | null;
    radius_m: number | null;
  };
  /** The communes matched by `commune`, if given. */
  communes: Commune[];
  notices: string[];
}

/** The echo of a location filter as responses show it (Location['echo']). */
export const locationEchoSchema = z.object({
  code_postal: z.string().nullable(),
  commune: z.string().nullable(),
  code_departement: z.string().nullable(),
  latitude: z.number().nullable(),
  longitude: z.number().nullable(),
  radius_m: z.number().nullable(),
}).openapi('LocationEcho');

/** Upper case without accents, as DVF spells commune names ('Saint-Étienne' → 'SAINT-ETIENNE'). */
export function dvfName(nom: string): string {
  return nom.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase();
}

/** The city a commune belongs to for disambiguation purposes: an arrondissement belongs to its city. */
const cityOf = (c: Commune) => (c.type === 'arrondissement-municipal' && c.parent ? c.parent : c.code);

function resolveCommunes(input: string, dep: string | undefined, notices: string[]): { communes: Commune[]; label: string } {
  const found = resolveCommune(input, { departement: dep });
  if (found.length === 0) {
    throw invalidParams([{ param: 'commune', issue: `no commune matches "${input}"${dep ? ` in département ${dep}` : ''}` }]);
  }
  const cities = [...new Set(found.map(cityOf))];
  if (cities.length === 1) {
    const city = getCommune(cities[0]);
    const label = found.length > 1 && city ? dvfName(city.nom) : dvfName(found[0].nom);
    return { communes: found, label };
  }
  // Homonyms (ABZAC is in 16 and 33, SAINT-DENIS in four départements): take the most populous, and say so.
  const ranked = cities.map((code) => getCommune(code)!).sort((a, b) => (b.population ?? 0) - (a.population ?? 0) || (a.code < b.code ? -1 : 1));
  const chosen = ranked[0];
  notices.push(
    `commune "${input}" matches ${ranked.length} communes (${ranked.map((c) => `${c.code} in ${c.departement}`).join(', ')}); ` +
      `used ${chosen.code} (${chosen.departement}), the most populous: add code_departement or use the INSEE code to choose.`,
  );
  return { communes: found.filter((c) => cityOf(c) === chosen.code), label: dvfName(chosen.nom) };
}

export interface LocationRules {
  /** Location kinds this endpoint accepts; others get unsupported_location. */
  accept: LocationKind[];
}

export function resolveLocation(q: LocationInput, rules: LocationRules): Location {
  const hasLat = q.latitude !== undefined;
  const hasLon = q.longitude !== undefined;
  if (hasLat !== hasLon) {
    throw invalidParams([{ param: hasLat ? 'longitude' : 'latitude', issue: 'latitude and longitude must be given together' }]);
  }
  if (q.radius_m !== undefined && !hasLat) {
    throw invalidParams([{ param: 'radius_m', issue: 'radius_m applies to a latitude/longitude search' }]);
  }
  const given: LocationKind[] = [];
  if (hasLat) given.push('radius');
  if (q.code_postal !== undefined) given.push('code_postal');
  if (q.commune !== undefined) given.push('commune');
  if (q.code_departement !== undefined) given.push('code_departement');
  if (given.length === 0) {
    const names = rules.accept.map((k) => (k === 'radius' ? 'latitude+longitude' : k)).join(', ');
    throw new ApiError('missing_location', `a location filter is required: one of ${names}`);
  }
  const refused = given.filter((k) => !rules.accept.includes(k));
  if (refused.length) {
    const name = refused[0] === 'radius' ? 'latitude/longitude' : refused[0];
    throw new ApiError('unsupported_location', `${name} is not accepted by this endpoint (accepted: ${rules.accept.join(', ')})`);
  }

  const conditions: string[] = [];
  const params: Params = {};
  const notices: string[] = [];
  let dep: string | undefined;
  if (q.code_departement !== undefined) {
    dep = q.code_departement.toUpperCase();
    if (/^\d$/.test(dep)) dep = `0${dep}`;
    if (!isDepartement(dep)) throw invalidParams([{ param: 'code_departement', issue: `"${q.code_departement}" is not a French département` }]);
    conditions.push(`code_departement = $loc_dep`);
    params.loc_dep = dep;
  }
  if (q.code_postal !== undefined) {
    // As for a commune, the départements of the communes the code serves let DuckDB skip row groups (about 4× faster);
    // a code the reference does not know keeps the plain condition.
    const deps = dep || q.commune !== undefined ? [] : [...new Set(communesOfPostalCode(q.code_postal).map((c) => c.departement))].sort();
    if (deps.length) {
      conditions.push(`code_departement in (${deps.map((_, i) => `$loc_pdep${i}`).join(', ')})`);
      deps.forEach((d, i) => (params[`loc_pdep${i}`] = d));
    }
    conditions.push(`code_postal = $loc_cp`);
    params.loc_cp = q.code_postal;
  }
  let communes: Commune[] = [];
  let communeLabel: string | null = null;
  if (q.commune !== undefined) {
    const r = resolveCommunes(q.commune, dep, notices);
    communes = r.communes;
    communeLabel = r.label;
    // The département condition lets DuckDB skip row groups: the marts are sorted by département first.
    const deps = [...new Set(communes.map((c) => c.departement))];
    if (!dep) {
      conditions.push(`code_departement in (${deps.map((_, i) => `$loc_cdep${i}`).join(', ')})`);
      deps.forEach((d, i) => (params[`loc_cdep${i}`] = d));
    }
    conditions.push(`code_commune_actuel in (${communes.map((_, i) => `$loc_c${i}`).join(', ')})`);
    communes.forEach((c, i) => (params[`loc_c${i}`] = c.code));
  }
  let radius: number | null = null;
  if (hasLat) {
    radius = q.radius_m ?? DEFAULT_RADIUS_M;
    const lat = q.latitude!;
    const lon = q.longitude!;
    // A bounding box first (cheap, and pruned by the row groups' min/max), then the exact haversine distance.
    const dLat = (radius / METERS_PER_DEGREE) * 1.001;
    const dLon = Math.min(180, dLat / Math.max(0.01, Math.cos((lat * Math.PI) / 180)));
    Object.assign(params, { loc_lat: lat, loc_lon: lon, loc_r: radius, loc_lat0: lat - dLat, loc_lat1: lat + dLat, loc_lon0: lon - dLon, loc_lon1: lon + dLon });
    conditions.push(
      `latitude between $loc_lat0 and $loc_lat1 and longitude between $loc_lon0 and $loc_lon1`,
      `${distanceSql('latitude', 'longitude')} <= $loc_r`,
    );
  }
  return {
    kind: given[0],
    where: conditions.join(' and '),
    params,
    echo: {
      code_postal: q.code_postal ?? null,
      commune: communeLabel,
      code_departement: dep ?? null,
      latitude: q.latitude ?? null,
      longitude: q.longitude ?? null,
      radius_m: radius,
    },
    communes,
    notices,
  };
}

/** Haversine distance in metres from ($loc_lat, $loc_lon) to the given columns. */
export function distanceSql(latCol: string, lonCol: string): string {
  return haversineSql('$loc_lat', '$loc_lon', latCol, lonCol);
}
