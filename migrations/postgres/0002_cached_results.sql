-- Cached analysis results are answered as they were computed: json keeps
-- the text (jsonb would reorder the series' keys and cost a parse on write
-- and a render on read). Keys carry the resolved date range, so relative
-- ranges leave entries behind that no request asks for again; the server
-- prunes them by stale_at.
ALTER TABLE cached_results ALTER COLUMN result TYPE json USING result::json;
CREATE INDEX cached_results_stale_idx ON cached_results (stale_at);
