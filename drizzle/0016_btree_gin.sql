-- Custom migration (drizzle-kit generate --custom): btree_gin, so full-text recall's GIN index can
-- lead with organization_id (0017, decision 021). A recall then reads only its own organisation's
-- matches from the index, whatever other organisations hold. Like unaccent (0010), btree_gin is
-- a trusted extension: the migrator needs to be a superuser or hold CREATE on the database, else a
-- superuser runs `CREATE EXTENSION btree_gin SCHEMA public;` once and migrates again.
CREATE EXTENSION IF NOT EXISTS btree_gin SCHEMA public;
