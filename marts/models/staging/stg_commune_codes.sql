-- grain: one row per INSEE code ever known (current, arrondissement, délégué, associé, former)
-- materialized: view
select code, code_actuel from {{ source('reference', 'commune_codes') }}
