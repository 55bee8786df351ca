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
