-- PostgreSQL leaves room on memory pages for heap-only updates here (see
-- its twin). SQLite updates a row in place in its b-tree: nothing
-- changes.
SELECT 1;
