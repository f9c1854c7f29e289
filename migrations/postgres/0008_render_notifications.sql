-- Render notifications: everything a server's kept dashboard answer is
-- checked against in its one round trip (migration 0007's generations,
-- the tiles' cached results, the caller's membership) now also says that
-- it changed, on channel insightd_render, with the project's id as the
-- payload ('0': every project, as users' generation is project 0's). A
-- server that listens answers a kept answer without the round trip
-- until a notification for its project arrives (api/dashboard_render.go,
-- metadata/render_watch.go): at 32 clients the round trip was half of a
-- warm retrieve's CPU, PostgreSQL's share included. Triggers send them,
-- so writes made by hand or by another server are notified too, and
-- every listening server receives every notification. A notification is
-- sent at commit only, and identical ones of one transaction once.
CREATE OR REPLACE FUNCTION bump_render_generation(p bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO render_generations AS g (project_id, generation) VALUES (p, 1)
    ON CONFLICT (project_id) DO UPDATE SET generation = g.generation + 1;
    SELECT pg_notify('insightd_render', p::text);
$$;

-- A cached result's project (both, for an update that moved one); a
-- membership reaches every project of its organization: '0'.
CREATE FUNCTION render_notify_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'memberships' OR TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('insightd_render', '0');
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('insightd_render', OLD.project_id::text);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('insightd_render', NEW.project_id::text);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER render_notify AFTER INSERT OR UPDATE OR DELETE ON cached_results
    FOR EACH ROW EXECUTE FUNCTION render_notify_trigger();
CREATE TRIGGER render_notify AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION render_notify_trigger();
-- TRUNCATE fires no row trigger.
CREATE TRIGGER render_notify_truncate AFTER TRUNCATE ON cached_results
    FOR EACH STATEMENT EXECUTE FUNCTION render_notify_trigger();
CREATE TRIGGER render_notify_truncate AFTER TRUNCATE ON memberships
    FOR EACH STATEMENT EXECUTE FUNCTION render_notify_trigger();
