-- One measure of `ventes` ({{value}}, over the sales where {{condition}}) sorted within blocks of one département,
-- calendar month, type and combination of cleaning flags: the blocks a département's statistics merge
-- (api/sales/memory.ts), with the day of the month of each (a window's cut months filter on it). The block number is ((dep_id × months + month − first month) × 5 + type) × 8 + flags, the ids
-- and bits of memory-rows.sql.
with deps as (
    select code_departement, (row_number() over (order by code_departement) - 1)::UTINYINT as dep_id
    from (select distinct code_departement from ventes)
)
select
    ((((d.dep_id::UINTEGER * $months + (year(v.date_mutation) * 12 + month(v.date_mutation) - 1 - $first_month)) * 5
        + (case v.type_local when 'Maison' then 0 when 'Appartement' then 1 when 'Local commercial' then 2 when 'Dépendance' then 3 else 4 end)) * 8
        + coalesce(v.is_bulk_sale, false)::INTEGER + 2 * coalesce(v.is_outlier, false)::INTEGER + 4 * coalesce(v.is_vefa, false)::INTEGER))::UINTEGER as block,
    {{value}} as value,
    day(v.date_mutation)::UTINYINT as dom
from ventes v
join deps d using (code_departement)
where {{condition}}
order by block, value
