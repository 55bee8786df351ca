-- grain: one row per sale of a built property (house, flat, commercial premises) that is not a bulk sale
-- materialized: table
-- sort: code_departement, code_postal, voie_cle, numero
-- check: unique(id)
-- check: not_null(id, code_departement, code_commune, date_mutation, type_local, valeur_fonciere)
-- check: accepted_values(type_local, 'Maison', 'Appartement', 'Local commercial')
-- check: relationships(id, ventes.id)
-- column: id: = ventes
-- column: code_departement: = ventes
-- column: code_postal: = ventes
-- column: voie_cle: the street's matching key: `adresse_nom_voie` upper case without accents or punctuation, a leading street type dropped, common words abbreviated as DVF does, articles dropped (`AV DE PARIS` → `PARIS`); the same rule as the API's street key; NULL without a street name
-- column: adresse_nom_voie: = ventes
-- column: numero: street number as an integer; NULL when absent or not a number
-- column: adresse_suffixe: = ventes
-- column: address: = ventes
-- column: code_commune: = ventes
-- column: code_commune_actuel: = ventes
-- column: commune: = ventes
-- column: section: = ventes
-- column: no_plan: = ventes
-- column: id_parcelle: = ventes
-- column: section_cle: the section upper case without leading zeros (`0D` and `D` are one section): the parcel lookup's key
-- column: plan_num: `no_plan` as an integer (`0012` → 12): the parcel lookup's key
-- column: lots: = ventes
-- column: date_mutation: = ventes
-- column: type_local: = ventes
-- column: valeur_fonciere: = ventes
-- column: prix_m2: = ventes
-- column: surface_reelle_bati: = ventes
-- column: nombre_pieces_principales: = ventes
-- GET /v1/property-history reads only this table: sales keyed by a normalised street name (voie_cle) so an address
-- lookup is an equality on (code_postal, voie_cle), and by a normalised cadastral parcel (section_cle, plan_num).
-- voie_cle MUST stay identical to streetKey() in api/routes/property-history/street.ts (a test compares them on every street):
-- upper case, no accents, punctuation as spaces; a leading street type dropped (AV, AVENUE, RUE…); common words
-- abbreviated as DVF does (SAINT → ST, GENERAL → GAL…); articles (DE, DU, DES, LA, LE, LES, L, D, AU, AUX) dropped.
with sales as (
    select * from {{ ref('ventes') }}
    where type_local in ('Maison', 'Appartement', 'Local commercial') and not is_bulk_sale
),

-- the key is computed once per distinct street name (a few per cent of the sales), then joined back
words as (
    select adresse_nom_voie,
        list_filter(string_split(trim(regexp_replace(replace(upper(strip_accents(adresse_nom_voie)), 'Œ', 'OE'),
            '[^A-Z0-9]+', ' ', 'g')), ' '), w -> w <> '') as w0
    from (select distinct adresse_nom_voie from sales where adresse_nom_voie is not null)
),

untyped as (
    select *,
        list_transform(
            case when len(w0) > 1 and w0[1] in (
                'ALL', 'ALLEE', 'ALLEES', 'AV', 'AVE', 'AVENUE', 'BD', 'BLD', 'BOUL', 'BOULEVARD', 'CAR', 'CARREFOUR',
                'CHE', 'CHEM', 'CHEMIN', 'CHS', 'CHAUSSEE', 'CITE', 'CLOS', 'CRS', 'COURS', 'DOM', 'DOMAINE', 'DSC',
                'DESCENTE', 'ESP', 'ESPLANADE', 'FG', 'FBG', 'FAUBOURG', 'HAM', 'HAMEAU', 'IMP', 'IMPASSE', 'LD',
                'LOT', 'LOTISSEMENT', 'MTE', 'MONTEE', 'PAS', 'PASS', 'PASSAGE', 'PL', 'PLACE', 'PLT', 'PLATEAU',
                'PRV', 'PARVIS', 'PROM', 'PROMENADE', 'QUA', 'QUAI', 'QUAR', 'QUARTIER', 'R', 'RUE', 'RES',
                'RESIDENCE', 'RLE', 'RUELLE', 'RPT', 'RTE', 'ROUTE', 'SEN', 'SENT', 'SENTE', 'SENTIER', 'SQ',
                'SQUARE', 'TRA', 'TRAVERSE', 'VLA', 'VILLA', 'VOIE'
            ) then w0[2:] else w0 end,
            w -> case w
                when 'SAINT' then 'ST' when 'SAINTE' then 'STE' when 'SAINTS' then 'STS' when 'SAINTES' then 'STES'
                when 'GRAND' then 'GD' when 'GRANDE' then 'GDE' when 'GRANDES' then 'GDES'
                when 'GENERAL' then 'GAL' when 'MARECHAL' then 'MAL' when 'PRESIDENT' then 'PDT'
                when 'DOCTEUR' then 'DR' when 'PROFESSEUR' then 'PROF'
                else w end) as w1
    from words
),

streets as (
    select adresse_nom_voie,
        array_to_string(coalesce(nullif(list_filter(w1, w -> w not in ('DE', 'DU', 'DES', 'LA', 'LE', 'LES', 'L', 'D', 'AU', 'AUX')), []), w1), ' ') as voie_cle
    from untyped
),

final as (
    select id, code_departement, code_postal, st.voie_cle,
        s.adresse_nom_voie, try_cast(adresse_numero as integer) as numero, adresse_suffixe, address,
        code_commune, code_commune_actuel, commune,
        section, no_plan, id_parcelle,
        ltrim(upper(section), '0') as section_cle, try_cast(no_plan as integer) as plan_num,
        lots, date_mutation, type_local, valeur_fonciere, prix_m2, surface_reelle_bati, nombre_pieces_principales
    from sales s
    left join streets st using (adresse_nom_voie)
)

select * from final
