-- Placeholder: version 7 belongs to the dashboard-keys change, developed beside this one. Delete this file when that
-- change's own 0007 migration is merged (the numbers must run without a gap).
select 1;
