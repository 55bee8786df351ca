-- grain: one row per DVF line (exact duplicates already removed by the pipeline)
-- materialized: view
-- Renames nothing: the lake already holds the normalised schema; this is the single place marts read DVF from.
select * from {{ source('dvf') }}
