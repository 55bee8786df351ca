-- grain: one row per energy diagnostic (DPE) as imported, every dataset (dpe03existant, dpe02neuf, dpe-france)
-- materialized: view
-- The lake already holds typed diagnostics (pipeline/sources/dpe/stage.sql); this is the single place marts read DPE from.
select * from {{ source('dpe') }}
