-- grain: one row per energy diagnostic (dpe_id), all datasets; replaced ones kept but flagged
-- materialized: table
-- sort: code_departement, code_postal, date_etablissement_dpe
-- index: dpe_id
-- check: unique(dpe_id)
-- check: not_null(dpe_id, code_departement, date_etablissement_dpe, est_remplace)
-- check: accepted_values(classe_energie, 'A', 'B', 'C', 'D', 'E', 'F', 'G')
-- check: accepted_values(type_batiment, 'maison', 'appartement', 'immeuble')
-- column: dpe_id: the diagnostic's id: ADEME's number, or one made from the row's content when the file gives none
-- column: numero_dpe: ADEME's diagnostic number as published; NULL when absent
-- column: source_dataset: the ADEME dataset it comes from: `dpe03existant` (existing dwellings), `dpe02neuf` (new ones) or `dpe-france` (the legacy base, before July 2021)
-- column: date_etablissement_dpe: date the diagnostic was established; NULL when unreadable
-- column: avant_reforme_2021: established before 1 July 2021 (the former method, whose classes are not comparable)
-- column: classe_energie: energy class `A`–`G`; NULL for anything else (`N`, `I`, empty: kept in `etiquette_dpe_brute`)
-- column: classe_ges: greenhouse-gas class `A`–`G`; NULL for anything else
-- column: etiquette_dpe_brute: the energy label as published, upper case
-- column: conso_energie_kwh_m2_an: primary energy use, kWh per m² a year; NULL when absent or unreadable
-- column: emission_ges_kg_m2_an: greenhouse-gas emissions, kg CO₂e per m² a year; NULL when absent or unreadable
-- column: surface_habitable: habitable surface (m²); NULL when absent or absurd
-- column: annee_construction: construction year as declared; NULL when absent or absurd
-- column: periode_construction: construction period as published (text); NULL when absent
-- column: type_batiment: `maison`, `appartement` or `immeuble` (a whole building); NULL when the published type is none of them
-- column: code_insee: INSEE code of the diagnostic's commune (BAN address)
-- column: code_commune_actuel: that commune's current code (a merged commune's becomes its commune nouvelle's)
-- column: code_postal: postal code of the BAN address; NULL when absent or malformed
-- column: code_departement: département code (published, else from `code_insee`)
-- column: identifiant_ban: the BAN address id; NULL when the diagnostic was not matched to a BAN address
-- column: id_parcelle: cadastral parcel of the address (BAN's parcel relation) when the file carries it; NULL otherwise
-- column: address: the address as published
-- column: latitude: WGS84 latitude, from the published Lambert-93 X/Y (else data-fair's `_geopoint`, else WGS84 fields); NULL without coordinates
-- column: longitude: WGS84 longitude, as `latitude`
-- column: methode: the published method (`methode_application_dpe`, legacy `nom_methode_dpe`), else `DPE version <version_dpe>`
-- column: version_dpe: the DPE method version as published; NULL when absent
-- column: numero_dpe_remplace: the number of the diagnostic this one replaces; NULL when it replaces none
-- column: est_remplace: a newer diagnostic replaces this one: never counted in statistics, never matched to a sale
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
