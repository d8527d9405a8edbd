-- Recall ranks with an in-memory index per tenant (package index) that
-- loads from the memories table and follows the change feed, so a write
-- no longer keeps per-term postings and statistics in SQL: those tables
-- held 27 rows a memory and half of the cost of an ingest. The memories
-- table and its full-text index (the list filter q) stay the source of
-- truth.
DROP TABLE memory_terms;
DROP TABLE term_stats;
DROP TABLE tenant_stats;
