-- grain: one row per commune (INSEE_C, not the ANIL zone id) and rent segment, latest ANIL edition loaded
-- materialized: table
-- sort: code_commune, segment
-- index: code_commune
-- check: unique(code_commune, segment)
-- check: not_null(code_commune, segment, loyer_m2_cc, millesime)
-- check: accepted_values(segment, 'appartement', 'appartement_t1_t2', 'appartement_t3_plus', 'maison')
-- check: expression(loyer_m2_cc > 0)
-- column: code_commune: INSEE code of the commune (ANIL's `INSEE_C`)
-- column: segment: the rent segment: `appartement`, `appartement_t1_t2`, `appartement_t3_plus` or `maison`
-- column: millesime: ANIL edition (year) of the figures: the latest loaded
-- column: libelle_commune: commune name as ANIL publishes it
-- column: id_zone: ANIL's prediction zone id (communes pooled for the model)
-- column: loyer_m2_cc: predicted advertised rent, € per m² a month, charges included (ANIL `loypredm2`)
-- column: loyer_m2_cc_bas: lower bound of the prediction interval (€/m² a month)
-- column: loyer_m2_cc_haut: upper bound of the prediction interval (€/m² a month)
-- column: niveau_prediction: the level the prediction was made at (`commune`, or a coarser pooling), lower case as published (`TYPPRED`)
-- column: nb_observations_commune: advertisements observed in the commune (`nbobs_com`); NULL when not published
-- column: nb_observations_maille: advertisements observed in the prediction zone (`nbobs_mail`); NULL when not published
-- column: r2_ajuste: adjusted R² of the zone's model (`R2_adj`); NULL when not published
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
