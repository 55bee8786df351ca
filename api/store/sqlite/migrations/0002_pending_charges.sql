-- Charges settle (docs/decisions.md, Pending charges): a charge is written 'pending' with the request id the caller
-- sees and the process that took it, then 'kept' or 'refunded' once the answer is decided; a process that dies leaves
-- 'pending' rows that the next start refunds. Client request ids may repeat, so a refund names the charge it undoes
-- (charge_id) and the one-refund rule moves from (key, request id) to the charge.
alter table credit_ledger add column settled text check (settled in ('pending', 'kept', 'refunded'));
alter table credit_ledger add column charge_id integer references credit_ledger(id);
alter table credit_ledger add column owner text;
update credit_ledger set settled = case
    when exists (select 1 from credit_ledger r where r.reason = 'refund' and r.key_id = credit_ledger.key_id and r.request_id = credit_ledger.request_id)
    then 'refunded' else 'kept' end
  where reason = 'charge';
update credit_ledger set charge_id = (
    select c.id from credit_ledger c where c.reason = 'charge' and c.key_id = credit_ledger.key_id and c.request_id = credit_ledger.request_id order by c.id limit 1)
  where reason = 'refund';
drop index credit_ledger_one_refund;
create unique index credit_ledger_one_refund on credit_ledger(charge_id) where reason = 'refund';
create index credit_ledger_pending on credit_ledger(owner) where settled = 'pending';
