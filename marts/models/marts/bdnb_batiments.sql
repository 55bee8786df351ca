-- grain: one row per BDNB building group (every building, sold or not)
-- materialized: table
-- sort: code_departement, code_commune_actuel, batiment_groupe_id
-- index: batiment_groupe_id
-- check: unique(batiment_groupe_id)
-- check: not_null(batiment_groupe_id, code_departement, usage_principal)
-- check: accepted_values(usage_principal, 'residentiel', 'tertiaire', 'mixte', 'autre')
-- check: accepted_values(tranche, 'avant_1919', '1919_1945', '1946_1970', '1971_1990', '1991_2005', '2006_plus')
-- check: expression(latitude is null or (latitude between -90 and 90 and longitude between -180 and 180))
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
