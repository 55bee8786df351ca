-- grain: one row per clean sale of a house or a flat with a price per m², the candidates of the valuation estimator
-- materialized: table
-- sort: type_local, lat_band, longitude
-- check: unique(id)
-- check: not_null(id, id_mutation, date_mutation, type_local, valeur_fonciere, prix_m2, surface_reelle_bati)
-- check: accepted_values(type_local, 'Maison', 'Appartement')
-- check: accepted_values(classe_dpe, 'A', 'B', 'C', 'D', 'E', 'F', 'G')
-- check: accepted_values(tranche_construction, 'avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus')
-- check: expression(prix_m2 > 0 and surface_reelle_bati > 0)
-- check: relationships(id, ventes.id)
-- column: id: = ventes
-- column: id_mutation: = ventes
-- column: date_mutation: = ventes
-- column: type_local: `Maison` or `Appartement` (as `ventes.type_local`)
-- column: valeur_fonciere: = ventes
-- column: prix_m2: = ventes
-- column: surface_reelle_bati: = ventes
-- column: nombre_pieces_principales: = ventes
-- column: address: = ventes
-- column: code_postal: = ventes
-- column: code_commune_actuel: = ventes
-- column: commune: = ventes
-- column: code_departement: = ventes
-- column: latitude: = ventes
-- column: longitude: = ventes
-- column: is_bulk_sale: = ventes
-- column: lat_band: `floor(latitude × 20)`: the 0.05° latitude band (~5.6 km) the table is sorted by, so a bounding-box search reads few row groups; NULL without coordinates
-- column: classe_dpe: energy class (A–G) of the sale's matched diagnostic (`dpe_ventes.classe_energie`); NULL when none matched
-- column: annee_construction: construction year of the sale's matched BDNB building (`bdnb_ventes.annee_construction`); NULL when no building matched or its year is unknown
-- column: tranche_construction: construction bracket of that building (`bdnb_ventes.tranche`); NULL as `annee_construction`
-- Comparables (lib/valuation) are searched by bounding box: sorting by type, then 0.05° latitude bands (~5.6 km),
-- then longitude gives each row group a small lat/lon extent, so DuckDB's min/max statistics skip nearly all of them.
-- Outliers and off-plan sales (VEFA: new-build prices) never serve as comparables; bulk sales are kept and flagged
-- (the endpoints exclude them by default). Sales without coordinates stay for the postal-code and commune fallbacks.
-- Building and energy features (lib/valuation/features.ts): the energy class of the sale's matched
-- diagnostic (dpe_ventes) and the construction year and bracket of its matched BDNB building (bdnb_ventes), NULL when
-- the sale has no match; both marts hold at most one row per sale, so the LEFT JOIN never duplicates a sale.
-- Both are merged by sale first (a full join of two narrow tables), so the sales meet ONE hash table on their way to
-- the sort: at France scale (20 M sales, 19 M matched buildings) two hash joins feeding the sort ran out of the 8 GB
-- memory limit with 2 threads (docs/performance.md).
with features as (
    select id, d.classe_energie, b.annee_construction, b.tranche
    from (select id, classe_energie from {{ ref('dpe_ventes') }}) d
    full join (select id, annee_construction, tranche from {{ ref('bdnb_ventes') }}) b using (id)
),

final as (
    select v.id, v.id_mutation, v.date_mutation, v.type_local, v.valeur_fonciere, v.prix_m2, v.surface_reelle_bati,
        v.nombre_pieces_principales, v.address, v.code_postal, v.code_commune_actuel, v.commune, v.code_departement,
        v.latitude, v.longitude, v.is_bulk_sale,
        floor(v.latitude * 20)::INTEGER as lat_band,
        f.classe_energie as classe_dpe,
        f.annee_construction, f.tranche as tranche_construction
    from {{ ref('ventes') }} v
    left join features f on f.id = v.id
    where v.type_local in ('Maison', 'Appartement')
      and not v.is_outlier and not v.is_vefa
      and v.prix_m2 is not null and v.surface_reelle_bati > 0
)

select * from final
