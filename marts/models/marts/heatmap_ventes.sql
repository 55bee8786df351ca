-- grain: one row per sale usable in a heatmap: a single house or flat with a price per m², not an outlier, not off-plan
-- materialized: table
-- sort: code_departement, code_commune_actuel, code_postal, date_mutation
-- check: unique(id)
-- check: not_null(id, code_departement, code_commune_actuel, date_mutation, type_local, prix_m2, valeur_fonciere)
-- check: accepted_values(type_local, 'Maison', 'Appartement')
-- check: expression(prix_m2 > 0)
-- check: relationships(id, ventes.id)
-- column: id: = ventes
-- column: code_departement: = ventes
-- column: code_commune_actuel: = ventes
-- column: code_postal: = ventes
-- column: date_mutation: = ventes
-- column: type_local: `Maison` or `Appartement` (as `ventes.type_local`)
-- column: prix_m2: = ventes
-- column: valeur_fonciere: = ventes
-- column: latitude: = ventes
-- column: longitude: = ventes
-- A narrow copy of `ventes` holding only what GET /v1/heatmap reads: the cleaning flags are applied once here, and
-- the sort lets a département or commune scope read only its own row groups (France scale: ~12 M of 20 M sales).
with final as (
    select id, code_departement, code_commune_actuel, code_postal, date_mutation, type_local,
        prix_m2, valeur_fonciere, latitude, longitude
    from {{ ref('ventes') }}
    where type_local in ('Maison', 'Appartement')
      and prix_m2 is not null
      and not is_bulk_sale and not is_outlier and not is_vefa
)
select * from final
