-- grain: one row per energy diagnostic (dpe_id), all datasets; replaced ones kept but flagged
-- materialized: table
-- sort: code_departement, code_postal, date_etablissement_dpe
-- index: dpe_id
-- check: unique(dpe_id)
-- check: not_null(dpe_id, code_departement, date_etablissement_dpe, est_remplace)
-- check: accepted_values(classe_energie, 'A', 'B', 'C', 'D', 'E', 'F', 'G')
-- check: accepted_values(type_batiment, 'maison', 'appartement', 'immeuble')
-- A diagnostic replaced by a newer one (numero_dpe_remplace, possibly imported with another département or dataset)
-- is never counted in statistics nor matched to a sale. Classes outside A–G are null here (raw value kept).
with latest as (
    -- the same diagnostic imported twice (two datasets, or a département file that carries it by mistake): latest import
    select * from {{ ref('stg_dpe') }}
    qualify row_number() over (partition by dpe_id order by imported_at desc, code_departement) = 1
),

replaced as (
    select distinct numero_dpe_remplace as numero_dpe from latest where numero_dpe_remplace is not null
),

final as (
    select l.dpe_id, l.numero_dpe, l.source_dataset, l.date_etablissement_dpe, l.avant_reforme_2021,
        l.classe_energie, l.classe_ges, l.etiquette_dpe_brute, l.conso_energie_kwh_m2_an, l.emission_ges_kg_m2_an,
        l.surface_habitable, l.annee_construction, l.periode_construction, l.type_batiment,
        l.code_insee, coalesce(cc.code_actuel, l.code_insee) as code_commune_actuel, l.code_postal, l.code_departement,
        l.identifiant_ban, l.id_parcelle, l.address, l.latitude, l.longitude,
        coalesce(l.methode, 'DPE version ' || l.version_dpe) as methode, l.version_dpe, l.numero_dpe_remplace,
        r.numero_dpe is not null as est_remplace
    from latest l
    left join replaced r on r.numero_dpe = l.numero_dpe
    left join {{ ref('stg_commune_codes') }} cc on cc.code = l.code_insee
)

select * from final
