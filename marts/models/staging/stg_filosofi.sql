-- grain: one row per commune code (as published) and income vintage
-- materialized: view
select code_commune, annee_revenus, revenu_median_uc, revenu_median_statut, nb_menages_fiscaux
from {{ source('filosofi') }}
