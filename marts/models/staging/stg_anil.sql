-- grain: one row per commune code, rent segment and ANIL edition
-- materialized: view
select code_commune, segment, millesime, libelle_commune, id_zone, loyer_m2_cc, loyer_m2_cc_bas, loyer_m2_cc_haut,
    niveau_prediction, nb_observations_commune, nb_observations_maille, r2_ajuste
from {{ source('anil') }}
