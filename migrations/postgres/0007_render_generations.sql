-- Render generations: a counter per project that every change to what a
-- rendered answer is made of moves (insights, dashboards and their tiles,
-- actions, cohorts, group types, the project's own settings), and one for
-- project 0 that changes to users move (their names appear in every
-- project's answers as created_by). A server that keeps a rendered
-- dashboard in memory checks that the two counters and the results it
-- used are unchanged with one round trip, instead of reading and
-- re-encoding every tile (analytics.md, Dashboards). Triggers keep the
-- counters, so no write path, including one written later or by hand,
-- can forget to.
CREATE TABLE render_generations (
    project_id  bigint PRIMARY KEY,
    generation  bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION bump_render_generation(p bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO render_generations AS g (project_id, generation) VALUES (p, 1)
    ON CONFLICT (project_id) DO UPDATE SET generation = g.generation + 1
$$;

-- The project of the changed row, by table: OLD on delete, NEW otherwise
-- (an update that moved a row between projects moves both).
CREATE FUNCTION render_generation_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r record;
    p bigint;
BEGIN
    FOREACH r IN ARRAY CASE TG_OP WHEN 'INSERT' THEN ARRAY[NEW] WHEN 'DELETE' THEN ARRAY[OLD] ELSE ARRAY[OLD, NEW] END LOOP
        p := CASE TG_TABLE_NAME
            WHEN 'users' THEN 0
            WHEN 'projects' THEN (to_jsonb(r) ->> 'id')::bigint
            WHEN 'dashboard_tiles' THEN (SELECT d.project_id FROM dashboards d WHERE d.id = (to_jsonb(r) ->> 'dashboard_id')::bigint)
            ELSE (to_jsonb(r) ->> 'project_id')::bigint
        END;
        IF p IS NOT NULL THEN
            PERFORM bump_render_generation(p);
        END IF;
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON projects
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON insights
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON dashboards
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON dashboard_tiles
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON actions
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON cohorts
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
CREATE TRIGGER render_generation AFTER INSERT OR UPDATE OR DELETE ON group_type_mappings
    FOR EACH ROW EXECUTE FUNCTION render_generation_trigger();
