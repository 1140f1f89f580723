-- A read-only role for the knowledge gateway's SQL sources (production PostgreSQL).
-- Run as a superuser (or the database owner for the GRANTs), then point the source's URL
-- (e.g. RAGLINE_SAMPLE_DB_URL or the `url_env` of your [[sql]] source) at this role.
--
-- Defence in depth, together with what Ragline does on its side: every gateway session
-- sets default_transaction_read_only=on, each template is parsed (one SELECT only, forced
-- LIMIT) and runs under SET LOCAL statement_timeout.

CREATE ROLE ragline_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT
  PASSWORD 'change-me';
ALTER ROLE ragline_reader SET default_transaction_read_only = on;
ALTER ROLE ragline_reader SET statement_timeout = '15s';

-- Per database that a gateway source reads (replace business_db and the table list):
GRANT CONNECT ON DATABASE business_db TO ragline_reader;
GRANT USAGE ON SCHEMA public TO ragline_reader;
GRANT SELECT ON nics_checks, cash_flows, tickets, sample_meta TO ragline_reader;
-- Nothing else: no INSERT/UPDATE/DELETE/TRUNCATE, no CREATE on the schema, no functions
-- beyond PUBLIC's defaults. `ragline gateway load-sample --url URL --grant ragline_reader`
-- issues the SELECT grants for the sample tables.
