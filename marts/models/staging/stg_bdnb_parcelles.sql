-- grain: one row per (BDNB building group, cadastral parcel) relation
-- materialized: view
-- The lake carries a group's parcels on its row (comma-separated); parcelle_principale: the group's main parcel.
select batiment_groupe_id, unnest(string_split(parcelles_principales, ',')) as parcelle_id, true as parcelle_principale
from {{ source('bdnb') }}
where parcelles_principales is not null
union all
select batiment_groupe_id, unnest(string_split(parcelles_secondaires, ',')) as parcelle_id, false as parcelle_principale
from {{ source('bdnb') }}
where parcelles_secondaires is not null
