-- Placeholder: version 6 belongs to the dashboard-keys change, developed beside this one. Delete this file when that
-- change's own 0006 migration is merged (the numbers must run without a gap).
select 1;
