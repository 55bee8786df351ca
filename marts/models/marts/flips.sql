-- grain: one row per fast resale: a clean single-dwelling sale matched with the earlier sale of the same property 18–24 months before
-- materialized: table
-- sort: code_departement, code_commune_actuel, type_local, date_revente
-- check: unique(id_revente)
-- check: unique(id_achat)
-- check: not_null(id_achat, id_revente, code_commune_actuel, code_departement, type_local, date_achat, date_revente, prix_achat, prix_revente, methode)
-- check: accepted_values(methode, 'cadastre', 'adresse_surface')
-- check: accepted_values(type_local, 'Maison', 'Appartement')
-- check: expression(date_revente >= date_achat + interval 18 month and date_revente <= date_achat + interval 24 month)
-- check: relationships(id_achat, ventes.id)
-- check: relationships(id_revente, ventes.id)
-- column: id_achat: `ventes.id` of the purchase
-- column: id_revente: `ventes.id` of the resale
-- column: code_commune_actuel: = ventes
-- column: code_departement: = ventes
-- column: type_local: `Maison` or `Appartement`, the same for both sales
-- column: date_achat: date of the purchase's deed
-- column: date_revente: date of the resale's deed, 18 to 24 calendar months after the purchase (both included)
-- column: prix_achat: the purchase's `valeur_fonciere` (€)
-- column: prix_revente: the resale's `valeur_fonciere` (€)
-- column: marge_brute: gross margin, `prix_revente − prix_achat` (€; negative for a loss)
-- column: marge_pct: `marge_brute / prix_achat × 100` (%)
-- column: duree_detention_jours: days between the two deeds
-- column: methode: how the two sales were found to be one property: `cadastre` (same parcel, type and lot, or the same built surface without a lot) or `adresse_surface` (same address and type, surface within ±20 %, cadastral references that do not contradict)
-- Rules (docs/decisions.md, "Flips"): "18 to 24 months later" is calendar arithmetic, resale date between the
-- purchase date + 18 months and + 24 months inclusive (DuckDB clamps 31 August + 18 months to 28/29 February).
with eligible as (
    select id, date_mutation, type_local, valeur_fonciere, surface_reelle_bati, code_commune_actuel, code_departement,
        id_parcelle,
        -- commune, prefix and section of the parcel (id_parcelle = commune·prefix·section·plan)
        left(id_parcelle, 10) as section,
        -- the dwelling's copropriété lot, if any (a clean sale has one dwelling, so at most one lot of its type)
        lots[1] as lot,
        -- the address of a numbered building; a street alone does not identify a property
        case when adresse_numero is not null and adresse_nom_voie is not null
             then concat_ws('|', adresse_numero, coalesce(adresse_suffixe, ''), upper(adresse_nom_voie)) end as adresse
    from {{ ref('ventes') }}
    -- clean sales of one dwelling: a bulk sale (several dwellings or premises, each lot of the type being one, or
    -- several dispositions) says nothing about the price of one property
    where type_local in ('Maison', 'Appartement') and not is_bulk_sale and not is_outlier
),

-- same parcel and type, and the same lot; without a lot (a house), the same built surface
by_cadastre as (
    select a.id as id_achat, r.id as id_revente, 'cadastre' as methode, 0 as ecart_surface
    from eligible a
    join eligible r
      on r.id_parcelle = a.id_parcelle and r.type_local = a.type_local
     and r.date_mutation between a.date_mutation + interval 18 month and a.date_mutation + interval 24 month
    where a.lot is not distinct from r.lot
      and (a.lot is not null or a.surface_reelle_bati = r.surface_reelle_bati)
),

-- same address and type, built surface within ±20 % of the purchase's, and cadastral references that do not
-- contradict: the same section (dividing a parcel renumbers it inside its section) and not two different lots
-- (two similar flats of one building are neighbours, not one flat sold twice)
by_address as (
    select a.id as id_achat, r.id as id_revente, 'adresse_surface' as methode,
        abs(r.surface_reelle_bati - a.surface_reelle_bati) / a.surface_reelle_bati as ecart_surface
    from eligible a
    join eligible r
      on r.code_commune_actuel = a.code_commune_actuel and r.adresse = a.adresse and r.type_local = a.type_local
     and r.date_mutation between a.date_mutation + interval 18 month and a.date_mutation + interval 24 month
    where a.surface_reelle_bati > 0
      and a.section is not distinct from r.section
      and not (a.lot is not null and r.lot is not null and a.lot <> r.lot)
      and abs(r.surface_reelle_bati - a.surface_reelle_bati) <= 0.2 * a.surface_reelle_bati
),

candidates as (
    select c.*, a.date_mutation as date_achat, r.date_mutation as date_revente
    from (select * from by_cadastre union all select * from by_address) c
    join eligible a on a.id = c.id_achat
    join eligible r on r.id = c.id_revente
),

-- One purchase per resale and one resale per purchase: a pair found by both methods counts once, as cadastre;
-- then the closest surface, then the shortest holding.
best_purchase as (
    select * from candidates
    qualify row_number() over (
        partition by id_revente
        order by (methode = 'cadastre') desc, ecart_surface, date_achat desc, id_achat
    ) = 1
),

pairs as (
    select * from best_purchase
    qualify row_number() over (
        partition by id_achat
        order by (methode = 'cadastre') desc, ecart_surface, date_revente, id_revente
    ) = 1
),

final as (
    select p.id_achat, p.id_revente, r.code_commune_actuel, r.code_departement, r.type_local,
        p.date_achat, p.date_revente, a.valeur_fonciere as prix_achat, r.valeur_fonciere as prix_revente,
        r.valeur_fonciere - a.valeur_fonciere as marge_brute,
        (r.valeur_fonciere - a.valeur_fonciere) / a.valeur_fonciere * 100 as marge_pct,
        date_diff('day', p.date_achat, p.date_revente) as duree_detention_jours,
        p.methode
    from pairs p
    join eligible a on a.id = p.id_achat
    join eligible r on r.id = p.id_revente
)

select * from final
