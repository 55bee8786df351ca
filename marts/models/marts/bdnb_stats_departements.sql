-- grain: one row per département of bdnb_batiments
-- materialized: table
-- sort: code_departement
-- check: unique(code_departement)
-- check: not_null(code_departement, nb_batiments)
-- column: code_departement: = bdnb_batiments
-- column: nb_batiments: building groups of the département
-- column: nb_avec_annee: those with a known construction year
-- column: nb_logements_total: dwellings summed over the groups (unknown counted as 0)
-- column: annee_median: median construction year (interpolated) of the groups with one; NULL when none has
-- column: t_avant_1919: groups of bracket `avant_1919`
-- column: t_1919_1945: groups of bracket `1919_1945`
-- column: t_1946_1970: groups of bracket `1946_1970`
-- column: t_1971_1990: groups of bracket `1971_1990`
-- column: t_1991_2005: groups of bracket `1991_2005`
-- column: t_2006_plus: groups of bracket `2006_plus`
-- column: u_residentiel: groups of usage class `residentiel`
-- column: u_tertiaire: groups of usage class `tertiaire`
-- column: u_mixte: groups of usage class `mixte`
-- column: u_autre: groups of usage class `autre`
-- column: nb_vieux: groups built before 1975
-- The figures of /v1/bdnb/stats over a whole département, precomputed: a code_postal query (answered at département
-- level: buildings carry no postal code) or a code_departement one reads this row instead of aggregating up to a
-- million buildings at each call. Same expressions as the endpoint's query over bdnb_batiments (api/routes/bdnb/stats.ts),
-- which reads these columns by the same names.
select
    code_departement,
    count(*) as nb_batiments,
    count(annee_construction) as nb_avec_annee,
    coalesce(sum(nb_log), 0) as nb_logements_total,
    median(annee_construction) as annee_median,
    count(*) filter (tranche = 'avant_1919') as "t_avant_1919",
    count(*) filter (tranche = '1919_1945') as "t_1919_1945",
    count(*) filter (tranche = '1946_1970') as "t_1946_1970",
    count(*) filter (tranche = '1971_1990') as "t_1971_1990",
    count(*) filter (tranche = '1991_2005') as "t_1991_2005",
    count(*) filter (tranche = '2006_plus') as "t_2006_plus",
    count(*) filter (usage_principal = 'residentiel') as "u_residentiel",
    count(*) filter (usage_principal = 'tertiaire') as "u_tertiaire",
    count(*) filter (usage_principal = 'mixte') as "u_mixte",
    count(*) filter (usage_principal = 'autre') as "u_autre",
    -- OLD_BEFORE of api/routes/bdnb/common.ts
    count(*) filter (annee_construction < 1975) as nb_vieux
from {{ ref('bdnb_batiments') }}
group by code_departement
