// GET /v1/businesses/search (5 credits, cached 1 h): real-estate professionals (SIRENE establishments of the seven
// business types) around a point, nearest first, optionally with their postal code's 24-month DVF figures computed
// in the same query for all results (search.sql, search_dvf.sql).
import { haversineSql, METERS_PER_DEGREE } from '../../../lib/distance';
import { BUSINESS_TYPES, NAF_BY_TYPE } from '../../../lib/sirene';
import { ApiError, invalidParams } from '../../errors';
import { booleanParam, enumParam, numberParam, required, round2, z } from '../../params';
import { defineEndpoint } from '../../platform';
import { fillSql, readSql as readSqlFile } from '../../../lib/sql-file';

const readSql = (name: string) => readSqlFile(import.meta.url, name);
const SEARCH_SQL = readSql('search.sql');
const DVF_SQL = readSql('search_dvf.sql');

function searchSql(withDvf: boolean): string {
  const vars: Record<string, string> = {
    distance: haversineSql('$lat', '$lon', 'latitude', 'longitude'),
    dvf_ctes: withDvf ? DVF_SQL.trimEnd() : '',
    dvf_columns: withDvf ? ', coalesce(dvf.dvf_nb_mutations, 0) AS dvf_nb_mutations, dvf.dvf_prix_m2_median' : '',
    dvf_join: withDvf ? ' LEFT JOIN dvf USING (code_postal)' : '',
  };
  return fillSql(SEARCH_SQL, vars);
}
const SQL = { plain: searchSql(false), dvf: searchSql(true) };

export const BUSINESS_TYPE_PARAM = ['all', ...BUSINESS_TYPES] as const;

const typeList = Object.entries(NAF_BY_TYPE).map(([t, codes]) => `${t} ${codes.join('/')}`).join(', ');

export const businessItemSchema = z
  .object({
    siret: z.string().openapi({ description: '14 digits.' }),
    siren: z.string().openapi({ description: '9 digits.' }),
    denomination: z.string().nullable().openapi({
      description: 'The legal unit’s name, else the establishment’s usual name or sign, else (sole traders) first name and last name. ' +
        'Null under partial diffusion when the name would be a person’s.',
    }),
    naf_code: z.string().openapi({ description: 'NAF rev. 2 code without its dot.', example: '6831Z' }),
    business_type: z.enum(BUSINESS_TYPES),
    adresse: z.string().nullable().openapi({ description: 'Number and street; null under partial diffusion (commune-level information only).' }),
    code_postal: z.string().nullable(),
    commune: z.string().nullable(),
    code_departement: z.string(),
    latitude: z.number().openapi({ description: 'The establishment’s geocoded position; under partial diffusion or without geocoding, its commune’s reference point.' }),
    longitude: z.number(),
    date_creation: z.string().nullable().openapi({ format: 'date' }),
    is_siege: z.boolean(),
    distance_m: z.number().openapi({ description: 'Metres from the requested point.' }),
    dvf_nb_mutations: z.number().int().optional().openapi({
      description: 'include_dvf_stats: house and flat sales of the postal code in the 24 months ending at the latest sale loaded for its département (default cleaning).',
    }),
    dvf_prix_m2_median: z.number().nullable().optional().openapi({ description: 'include_dvf_stats: their median price per m² (null without sales).' }),
  })
  .openapi('BusinessSearchItem');

type Item = z.output<typeof businessItemSchema>;

export const searchBusinesses = defineEndpoint({
  method: 'get',
  path: '/v1/businesses/search',
  tag: 'Businesses',
  summary: 'Real-estate professionals around a point',
  description:
    `Active SIRENE establishments of the business types (${typeList}) within radius_m, nearest first. ` +
    'Establishments under partial diffusion are placed at their commune’s reference point, without street address or person’s name.',
  query: z.object({
    latitude: required(numberParam({ min: -90, max: 90, description: 'WGS84 latitude (required, with longitude).', example: 48.8414 })),
    longitude: required(numberParam({ min: -180, max: 180, description: 'WGS84 longitude (required, with latitude).', example: 2.2937 })),
    radius_m: numberParam({ min: 100, max: 5000, description: 'Search radius in metres (default 1000).' }).default(1000),
    type: enumParam(BUSINESS_TYPE_PARAM, 'Business type (default all).').default('all'),
    limit: numberParam({ min: 1, max: 50, int: true, description: 'Results (default 20).' }).default(20),
    include_dvf_stats: booleanParam('Add each establishment’s postal code’s 24-month DVF volume and median price per m².').default(false),
  }),
  response: z.object({
    businesses: z.array(businessItemSchema),
    count: z.number().int(),
    filters: z.object({ latitude: z.number(), longitude: z.number(), radius_m: z.number(), type: z.enum(BUSINESS_TYPE_PARAM) }),
  }),
  credits: 5,
  cacheTtlSeconds: 3600,
  errors: ['missing_location'],
  prepare({ query: q }) {
    // The point is this endpoint's location filter: without it, missing_location like every other endpoint.
    if (q.latitude === undefined && q.longitude === undefined) throw new ApiError('missing_location', 'latitude and longitude are required');
    if (q.latitude === undefined || q.longitude === undefined) {
      throw invalidParams([{ param: q.latitude === undefined ? 'latitude' : 'longitude', issue: 'latitude and longitude must be given together' }]);
    }
    return {
      latitude: q.latitude as number, longitude: q.longitude as number, radius_m: q.radius_m as number, type: q.type,
      limit: q.limit as number, include_dvf_stats: q.include_dvf_stats as boolean,
    };
  },
  coverage: ({ latitude, longitude }) => ({ zone: { latitude, longitude }, sources: ['sirene'] }),
  async handler(p, { ctx }) {
    const dLat = p.radius_m / METERS_PER_DEGREE;
    const dLon = p.radius_m / (METERS_PER_DEGREE * Math.max(Math.cos((p.latitude * Math.PI) / 180), 0.01));
    const rows = await ctx.db.query<Item>(p.include_dvf_stats ? SQL.dvf : SQL.plain, {
      lat: p.latitude, lon: p.longitude, radius_m: p.radius_m, type: p.type, limit: BigInt(p.limit),
      lat_min: p.latitude - dLat, lat_max: p.latitude + dLat, lon_min: p.longitude - dLon, lon_max: p.longitude + dLon,
    });
    const businesses = rows.map((r) => ({
      ...r,
      distance_m: Math.round(r.distance_m * 10) / 10,
      ...(p.include_dvf_stats ? { dvf_prix_m2_median: round2(r.dvf_prix_m2_median ?? null) } : {}),
    }));
    return {
      businesses,
      count: businesses.length,
      filters: { latitude: p.latitude, longitude: p.longitude, radius_m: p.radius_m, type: p.type },
    };
  },
});
