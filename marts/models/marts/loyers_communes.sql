-- grain: one row per commune (INSEE_C, not the ANIL zone id) and rent segment, latest ANIL edition loaded
-- materialized: table
-- sort: code_commune, segment
-- index: code_commune
-- check: unique(code_commune, segment)
-- check: not_null(code_commune, segment, loyer_m2_cc, millesime)
-- check: accepted_values(segment, 'appartement', 'appartement_t1_t2', 'appartement_t3_plus', 'maison')
-- check: expression(loyer_m2_cc > 0)
with ranked as (
    select *, row_number() over (partition by code_commune, segment order by millesime desc) as rank_edition
    from {{ ref('stg_anil') }}
),

final as (
    select code_commune, segment, millesime, libelle_commune, id_zone, loyer_m2_cc, loyer_m2_cc_bas, loyer_m2_cc_haut,
        niveau_prediction, nb_observations_commune, nb_observations_maille, r2_ajuste
    from ranked
    where rank_edition = 1
)

select * from final
