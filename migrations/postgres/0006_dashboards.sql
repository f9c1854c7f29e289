-- Dashboards (analytics.md, Dashboards): a named set of tiles, each an
-- insight or a text, with a layout and a color. filters ({date_from,
-- date_to, properties}) override the tiles' insights when they are
-- computed for the dashboard. A deleted dashboard's tiles read as deleted
-- (the insights stay); restoring it brings them back.
CREATE TABLE dashboards (
    id                 bigserial PRIMARY KEY,
    project_id         bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name               text NOT NULL DEFAULT '',
    description        text NOT NULL DEFAULT '',
    pinned             boolean NOT NULL DEFAULT false,
    filters            jsonb NOT NULL DEFAULT '{}',
    tags               text[] NOT NULL DEFAULT '{}',
    restriction_level  smallint NOT NULL DEFAULT 21,
    creation_mode      text NOT NULL DEFAULT 'default',
    deleted            boolean NOT NULL DEFAULT false,
    created_by         bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    last_modified_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dashboards_project_idx ON dashboards (project_id, id) WHERE NOT deleted;

-- A tile shows an insight or a text (text_body), never both. An insight
-- has at most one tile per dashboard: adding it again restores that tile.
CREATE TABLE dashboard_tiles (
    id                bigserial PRIMARY KEY,
    dashboard_id      bigint NOT NULL REFERENCES dashboards (id) ON DELETE CASCADE,
    insight_id        bigint REFERENCES insights (id) ON DELETE CASCADE,
    text_body         text,
    layouts           jsonb NOT NULL DEFAULT '{}',
    color             text,
    deleted           boolean NOT NULL DEFAULT false,
    created_by        bigint REFERENCES users (id) ON DELETE SET NULL,
    last_modified_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((insight_id IS NULL) <> (text_body IS NULL))
);
CREATE UNIQUE INDEX dashboard_tiles_insight_key ON dashboard_tiles (dashboard_id, insight_id) WHERE insight_id IS NOT NULL;
CREATE INDEX dashboard_tiles_by_insight_idx ON dashboard_tiles (insight_id) WHERE insight_id IS NOT NULL;
