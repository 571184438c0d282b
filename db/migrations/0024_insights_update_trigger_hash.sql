-- A statement's old and new rows are joined by id in the update trigger; transition tables have no index or statistics, and a nested loop over a large import's rows (10,000 × 10,000) took minutes on PGlite. The function joins nothing else, so a hash join is always right here.
ALTER FUNCTION "insights_conversations_marked"() SET enable_nestloop = off;
