-- grain: one row per sale (DVF mutation), typed by its main property
-- materialized: table
-- sort: code_departement, code_postal, date_mutation
-- index: id
-- check: unique(id)
-- check: not_null(id, id_mutation, date_mutation, code_departement, code_commune, code_commune_actuel, type_local, valeur_fonciere, imported_at)
-- check: accepted_values(type_local, 'Maison', 'Appartement', 'Local commercial', 'Dépendance', 'Terrain')
-- check: expression(valeur_fonciere > 0)
-- check: expression(prix_m2 is null or prix_m2 > 0)
-- check: expression(prix_m2 is not null or type_local in ('Dépendance', 'Terrain') or surface_reelle_bati is null or surface_reelle_bati = 0)
-- check: expression(regexp_full_match(code_commune, '[0-9][0-9AB][0-9]{3}'))
-- column: id: the sale's stable id, annee·10^11 + département·10^8 + a sequence (2A → 201, 2B → 202), kept across re-imports; the key of every mart that refers to a sale
-- column: id_mutation: the publisher's mutation id (Etalab's `id_mutation` for geo-DVF; `DGFIP-<n>` for the DGFiP raw file, which has none)
-- column: date_mutation: date of the deed (DVF `date_mutation`)
-- column: annee: year of `date_mutation`
-- column: nature_mutation: DVF's nature of the sale (`Vente`, `Vente en l'état futur d'achèvement`, `Adjudication`, …); exchanges and expropriations are left out
-- column: valeur_fonciere: the price of the whole sale, €, as published (all its lots, parcels and dispositions)
-- column: prix_m2: € per m² of built surface (`valeur_fonciere / surface_reelle_bati`) for houses, flats and commercial premises; NULL for land, outbuildings and sales without a built surface
-- column: prix_m2_terrain: € per m² of land (`valeur_fonciere / surface_terrain`) for land-only sales (`Terrain`); NULL otherwise
-- column: type_local: the sale's type: its main property's (the most built surface among `Maison`, `Appartement` and `Local commercial`, DVF's industrial or commercial premises), else `Dépendance` (outbuildings only) or `Terrain` (land only)
-- column: surface_reelle_bati: built surface of the sale's houses, flats and premises (m², outbuildings excluded); NULL for land and outbuilding sales or when DVF gives none
-- column: surface_carrez: Carrez surface (m²) summed over the lots that have one; NULL when no lot has one (houses, most non-condominium sales)
-- column: nombre_pieces_principales: main rooms summed over the sale's houses, flats and premises; NULL for land and outbuilding sales
-- column: surface_terrain: land surface (m²) summed over the sale's distinct parcel × culture lines; NULL when DVF lists none
-- column: nombre_lots: the largest number of condominium lots DVF gives on the sale's lines
-- column: nb_locaux: houses, flats and commercial premises in the sale (an identical repeated line counts as another property)
-- column: nb_logements: houses and flats in the sale
-- column: nb_dependances: outbuildings (cellars, parking spaces, …) in the sale
-- column: nb_dispositions: DVF dispositions in the sale (several mean several prices folded into one)
-- column: lots: the distinct first-lot numbers of the sale's houses, flats and premises, sorted; NULL without a lot
-- column: address: street number with its suffix and street name, upper case (`29 RUE DU PETREAU`); NULL when DVF gives no street
-- column: adresse_numero: street number (text, as published); NULL when absent
-- column: adresse_suffixe: number suffix (`B`, `T`, `Q`, …); NULL when absent
-- column: adresse_nom_voie: street name with its DVF type abbreviation, upper case (`RUE DU PETREAU`)
-- column: adresse_code_voie: the street's 4-character FANTOIR/RIVOLI code within its commune
-- column: code_postal: postal code of the sale's address (5 digits); NULL when DVF gives none
-- column: code_commune: INSEE code of the commune recorded in DVF (arrondissement codes for Paris, Lyon and Marseille)
-- column: code_commune_actuel: INSEE code of that commune today: a merged commune's code becomes its commune nouvelle's (reference geography), else `code_commune`
-- column: commune: commune name as recorded, upper case without accents
-- column: code_departement: département code (`01`–`95`, `2A`, `2B`, `971`–`974`)
-- column: id_parcelle: cadastral parcel id of the main line (14 characters: commune, prefix, section, plan number)
-- column: section: cadastral section of `id_parcelle`
-- column: no_plan: plan number of `id_parcelle` within its section
-- column: latitude: WGS84 latitude of the parcel's centroid (geo-DVF); NULL for the DGFiP file and for ungeolocated lines
-- column: longitude: WGS84 longitude, as `latitude`
-- column: is_bulk_sale: several houses, flats or premises, or several dispositions, sold for one price: its €/m² is an aggregate (outbuildings sold with a flat do not count)
-- column: is_vefa: off-plan sale (`Vente en l'état futur d'achèvement`): a new-build price
-- column: is_outlier: price outside the outlier rule: Tukey fences on ln(€/m²) within the commune and type (the département's below 20 sales), or a symbolic price or €/m² outside 100–60,000 (docs/data.md)
-- column: imported_at: when the sale was first imported into the lake (kept by re-imports): the clock alerts scan by
-- column: source_format: the published format the sale was read from: `geo-dvf` or `dgfip`
-- Cleaning rules and their effect on the samples are documented in docs/data.md.
with lines as (
    select *,
        case when type_local in ('Maison', 'Appartement') then type_local
             when code_type_local = 4 then 'Local commercial'
             when type_local = 'Dépendance' then 'Dépendance' end as kind
    from {{ ref('stg_dvf_lines') }}
    -- exchanges and expropriations carry no market price
    where nature_mutation not in ('Echange', 'Expropriation')
),

-- DVF repeats a property on one line per culture of its parcel: a property is its parcel, type, lot and surface.
-- A line repeated identically (line_occurrence > 1) is a second identical property of the same sale.
properties as (
    select distinct id, kind, id_parcelle, lot1_numero, surface_reelle_bati, nombre_pieces_principales, line_occurrence,
        coalesce(lot1_surface_carrez, 0) + coalesce(lot2_surface_carrez, 0) + coalesce(lot3_surface_carrez, 0)
          + coalesce(lot4_surface_carrez, 0) + coalesce(lot5_surface_carrez, 0) as carrez,
        (lot1_surface_carrez is not null or lot2_surface_carrez is not null or lot3_surface_carrez is not null
          or lot4_surface_carrez is not null or lot5_surface_carrez is not null) as has_carrez
    from lines
    where kind is not null
),

per_mutation as (
    select id,
        count(*) filter (kind in ('Maison', 'Appartement', 'Local commercial')) as nb_locaux,
        count(*) filter (kind in ('Maison', 'Appartement')) as nb_logements,
        count(*) filter (kind = 'Dépendance') as nb_dependances,
        -- the main type: the one holding the most built surface among dwellings and commercial premises
        arg_max(kind, coalesce(surface_reelle_bati, 0)) filter (kind <> 'Dépendance') as main_kind,
        sum(surface_reelle_bati) filter (kind <> 'Dépendance') as surface_reelle_bati,
        sum(nombre_pieces_principales) filter (kind <> 'Dépendance') as nombre_pieces_principales,
        sum(carrez) filter (kind <> 'Dépendance' and has_carrez) as surface_carrez,
        list(distinct lot1_numero order by lot1_numero) filter (kind <> 'Dépendance' and lot1_numero is not null) as lots
    from properties
    group by id
),

land as (
    select id, sum(surface_terrain) as surface_terrain
    from (select distinct id, id_parcelle, code_nature_culture, surface_terrain from lines where surface_terrain > 0)
    group by id
),

-- the line that represents the sale: the main property's, else any line with coordinates, else any line
main_line as (
    select l.*
    from lines l
    left join per_mutation p using (id)
    qualify row_number() over (
        partition by l.id
        order by (l.kind = p.main_kind) desc nulls last, (l.latitude is not null) desc,
                 l.surface_reelle_bati desc nulls last, l.id_parcelle, l.numero_disposition
    ) = 1
),

mutations as (
    select id,
        count(distinct numero_disposition) as nb_dispositions,
        max(nombre_lots) as nombre_lots,
        min(imported_at) as imported_at
    from lines
    group by id
),

typed as (
    select m.id, m.id_mutation, m.date_mutation, m.nature_mutation, m.valeur_fonciere,
        coalesce(p.main_kind, case when p.nb_dependances > 0 then 'Dépendance' else 'Terrain' end) as type_local,
        case when p.main_kind is not null then p.surface_reelle_bati end as surface_reelle_bati,
        case when p.main_kind is not null then p.surface_carrez end as surface_carrez,
        case when p.main_kind is not null then p.nombre_pieces_principales end as nombre_pieces_principales,
        ld.surface_terrain,
        mu.nombre_lots,
        coalesce(p.nb_locaux, 0) as nb_locaux,
        coalesce(p.nb_logements, 0) as nb_logements,
        coalesce(p.nb_dependances, 0) as nb_dependances,
        mu.nb_dispositions,
        p.lots,
        nullif(trim(concat_ws(' ', m.adresse_numero || coalesce(m.adresse_suffixe, ''), m.adresse_nom_voie)), '') as address,
        m.adresse_numero, m.adresse_suffixe, m.adresse_nom_voie, m.adresse_code_voie,
        m.code_postal, m.code_commune, m.nom_commune as commune, m.code_departement,
        m.id_parcelle, m.section, m.no_plan,
        m.latitude, m.longitude,
        mu.imported_at,
        m.source_format
    from main_line m
    join mutations mu using (id)
    left join per_mutation p using (id)
    left join land ld using (id)
    where m.valeur_fonciere > 0
),

priced as (
    select *,
        case when type_local in ('Maison', 'Appartement', 'Local commercial') and surface_reelle_bati > 0
             then valeur_fonciere / surface_reelle_bati end as prix_m2,
        case when type_local = 'Terrain' and surface_terrain > 0
             then valeur_fonciere / surface_terrain end as prix_m2_terrain,
        -- several dwellings or commercial premises, or several dispositions, sold for one price; dependencies
        -- (a cellar, a parking space) sold with a flat do not make a sale bulk
        nb_locaux > 1 or nb_dispositions > 1 as is_bulk_sale,
        nature_mutation = 'Vente en l''état futur d''achèvement' as is_vefa
    from typed
),

-- Outliers: Tukey fences (1.5 IQR) on ln(€/m²) within the commune and type, or the département and type when the
-- commune has fewer than 20 single priced sales; no relative rule below 20 reference sales, and none for bulk sales
-- (their €/m² is an aggregate). Plus absolute bounds no arm's-length sale crosses: symbolic prices (< 1,000 € for
-- built property, < 100 € for land or an outbuilding) and €/m² outside 100–60,000.
reference as (
    select 'commune' as level, code_commune as zone, type_local, count(*) as n,
        quantile_cont(ln(prix_m2), 0.25) as q1, quantile_cont(ln(prix_m2), 0.75) as q3
    from priced where prix_m2 is not null and not is_bulk_sale
    group by all
    union all
    select 'departement', code_departement, type_local, count(*),
        quantile_cont(ln(prix_m2), 0.25), quantile_cont(ln(prix_m2), 0.75)
    from priced where prix_m2 is not null and not is_bulk_sale
    group by all
),

fenced as (
    select p.*, coalesce(rc.q1, rd.q1) as q1, coalesce(rc.q3, rd.q3) as q3,
        -- sales recorded under a merged commune's former code are found under the commune nouvelle
        coalesce(cc.code_actuel, p.code_commune) as code_commune_actuel
    from priced p
    left join {{ ref('stg_commune_codes') }} cc on cc.code = p.code_commune
    left join reference rc on rc.level = 'commune' and rc.zone = p.code_commune and rc.type_local = p.type_local and rc.n >= 20
    left join reference rd on rd.level = 'departement' and rd.zone = p.code_departement and rd.type_local = p.type_local and rd.n >= 20
),

final as (
    select id, id_mutation, date_mutation, year(date_mutation) as annee, nature_mutation,
        valeur_fonciere, prix_m2, prix_m2_terrain, type_local,
        surface_reelle_bati, surface_carrez, nombre_pieces_principales, surface_terrain, nombre_lots,
        nb_locaux, nb_logements, nb_dependances, nb_dispositions, lots,
        address, adresse_numero, adresse_suffixe, adresse_nom_voie, adresse_code_voie,
        code_postal, code_commune, code_commune_actuel, commune, code_departement,
        id_parcelle, section, no_plan, latitude, longitude,
        is_bulk_sale, is_vefa,
        coalesce(
            (type_local in ('Maison', 'Appartement', 'Local commercial') and valeur_fonciere < 1000)
            or (type_local in ('Terrain', 'Dépendance') and valeur_fonciere < 100)
            or prix_m2 < 100 or prix_m2 > 60000
            or (not is_bulk_sale and ln(prix_m2) < q1 - 1.5 * (q3 - q1))
            or (not is_bulk_sale and ln(prix_m2) > q3 + 1.5 * (q3 - q1)),
            false) as is_outlier,
        imported_at, source_format
    from fenced
)

select * from final
