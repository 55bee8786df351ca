-- businesses/search: the establishments within $radius_m of ($lat, $lon), nearest first. The bounding box lets DuckDB
-- prune row groups of the latitude-sorted mart before the exact haversine test.
-- With include_dvf_stats, each result's postal code gets its DVF volume and median €/m² in the same query
-- (search_dvf.sql).
WITH near AS (
  SELECT siret, siren, denomination, naf_code, business_type, adresse, code_postal, commune, code_departement,
    latitude, longitude, date_creation, is_siege,
    {{distance}} AS distance_m
  FROM businesses
  WHERE latitude BETWEEN $lat_min AND $lat_max AND longitude BETWEEN $lon_min AND $lon_max
    AND ($type = 'all' OR business_type = $type)
), page AS (
  SELECT * FROM near WHERE distance_m <= $radius_m ORDER BY distance_m, siret LIMIT $limit
){{dvf_ctes}}
SELECT page.*{{dvf_columns}}
FROM page{{dvf_join}}
ORDER BY distance_m, siret
