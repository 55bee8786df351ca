-- grain: one row per clean sale of a house or a flat with a price per m², the candidates of the valuation estimator
-- materialized: table
-- sort: type_local, lat_band, longitude
-- check: unique(id)
-- check: not_null(id, id_mutation, date_mutation, type_local, valeur_fonciere, prix_m2, surface_reelle_bati)
-- check: accepted_values(type_local, 'Maison', 'Appartement')
-- check: expression(prix_m2 > 0 and surface_reelle_bati > 0)
-- Comparables (lib/valuation) are searched by bounding box: sorting by type, then 0.05° latitude bands (~5.6 km),
-- then longitude gives each row group a small lat/lon extent, so DuckDB's min/max statistics skip nearly all of them.
-- Outliers and off-plan sales (VEFA: new-build prices) never serve as comparables; bulk sales are kept and flagged
-- (the endpoints exclude them by default). Sales without coordinates stay for the postal-code and commune fallbacks.
with final as (
    select id, id_mutation, date_mutation, type_local, valeur_fonciere, prix_m2, surface_reelle_bati,
        nombre_pieces_principales, address, code_postal, code_commune_actuel, commune, code_departement,
        latitude, longitude, is_bulk_sale,
        floor(latitude * 20)::INTEGER as lat_band
    from {{ ref('ventes') }}
    where type_local in ('Maison', 'Appartement')
      and not is_outlier and not is_vefa
      and prix_m2 is not null and surface_reelle_bati > 0
)

select * from final
