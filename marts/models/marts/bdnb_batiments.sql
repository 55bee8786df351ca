-- grain: one row per BDNB building group (every building, sold or not)
-- materialized: table
-- sort: code_departement, code_commune_actuel, batiment_groupe_id
-- index: batiment_groupe_id
-- check: unique(batiment_groupe_id)
-- check: not_null(batiment_groupe_id, code_departement, usage_principal)
-- check: accepted_values(usage_principal, 'residentiel', 'tertiaire', 'mixte', 'autre')
-- check: accepted_values(tranche, 'avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus')
-- check: expression(latitude is null or (latitude between -90 and 90 and longitude between -180 and 180))
-- column: batiment_groupe_id: the BDNB building-group id (`bdnb-bg-…`)
-- column: code_departement: département code of the group
-- column: code_commune_insee: INSEE code as the BDNB publishes it (an arrondissement for Paris, Lyon and Marseille when the IRIS code names one)
-- column: code_commune_actuel: that commune's current code (a merged commune's becomes its commune nouvelle's)
-- column: latitude: WGS84 latitude of the footprint's area-weighted centroid; NULL when the footprint could not be placed
-- column: longitude: WGS84 longitude, as `latitude`
-- column: s_geom_groupe: footprint area of the group (m²); NULL when unknown
-- column: annee_construction: construction year (Fichiers fonciers); NULL when unknown, 0 or outside 1000 – next year
-- column: tranche: construction bracket of `annee_construction`: `avant_1919`, `1919_1945`, `1946_1970`, `1971_1990`, `1991_2005`, `2006_plus`; NULL when the year is unknown
-- column: nb_log: dwellings in the group; NULL when unknown
-- column: nb_niveau: storeys (Fichiers fonciers' `nb_niveau`, as published); NULL when unknown
-- column: mat_mur_txt: main wall material, as published
-- column: mat_toit_txt: main roof material, as published
-- column: usage_niveau_1_txt: main usage, as published (`usage_niveau_1_txt`)
-- column: usage_principal: the usage class: `residentiel`, `mixte`, `tertiaire` (commercial, tertiary or office) or `autre`
-- column: dvf_nb_mutations: DVF sales of the group, as the BDNB publishes them; NULL when none is published
-- column: dvf_prix_m2_median: median €/m² of those sales, as the BDNB publishes it; NULL when none
-- Building characteristics of the BDNB (Fichiers fonciers) with the construction-age bracket of the API and the
-- four usage classes of /v1/bdnb/stats. Rules in docs/data.md.
with source as (
    select * from {{ source('bdnb') }}
    qualify row_number() over (partition by batiment_groupe_id order by code_departement) = 1
),

typed as (
    select *,
        -- the Fichiers fonciers write unknown years as 0 (or years in the future): not a construction year
        case when annee_construction between 1000 and year(current_date) + 1 then annee_construction end as annee,
        lower(strip_accents(coalesce(usage_niveau_1_txt, ''))) as usage_key
    from source
),

final as (
    select
        t.batiment_groupe_id,
        t.code_departement,
        t.code_commune_insee,
        coalesce(cc.code_actuel, t.code_commune_insee) as code_commune_actuel,
        t.latitude,
        t.longitude,
        t.s_geom_groupe,
        t.annee as annee_construction,
        case
            when t.annee is null then null
            when t.annee < 1919 then 'avant_1919'
            when t.annee <= 1945 then '1919_1945'
            when t.annee <= 1970 then '1946_1970'
            when t.annee <= 1990 then '1971_1990'
            when t.annee <= 2005 then '1991_2005'
            else '2006_plus'
        end as tranche,
        t.nb_log,
        t.nb_niveau,
        t.mat_mur_txt,
        t.mat_toit_txt,
        t.usage_niveau_1_txt,
        case
            when t.usage_key like 'residentiel%' then 'residentiel'
            when t.usage_key like '%mixte%' then 'mixte'
            when t.usage_key like '%commercial%' or t.usage_key like '%tertiaire%' or t.usage_key like '%bureau%' then 'tertiaire'
            else 'autre'
        end as usage_principal,
        t.dvf_nb_mutations,
        t.dvf_prix_m2_median
    from typed t
    left join {{ ref('stg_commune_codes') }} cc on cc.code = t.code_commune_insee
)

select * from final
