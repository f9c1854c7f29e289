-- Actions: a saved definition of "an event that counts", steps ORed (see
-- ../shared/docs/analytics.md, Entities). steps is the list as PostHog's
-- API takes it, checked by the API before it is stored. version grows on
-- every change, so that cached answers of insights using the action are
-- keyed by it.
CREATE TABLE actions (
    id           bigserial PRIMARY KEY,
    project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name         text NOT NULL,
    description  text NOT NULL DEFAULT '',
    steps        jsonb NOT NULL DEFAULT '[]',
    tags         text[] NOT NULL DEFAULT '{}',
    deleted      boolean NOT NULL DEFAULT false,
    version      bigint NOT NULL DEFAULT 1,
    created_by   bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX actions_project_idx ON actions (project_id, id) WHERE NOT deleted;

-- Cohorts: a saved set of persons. Dynamic ones are defined by person
-- properties and behaviour (groups, the legacy form, or filters); static
-- ones by listed distinct ids (cohort_static_people). Members are
-- computed into ClickHouse's cohort_people under a version: version is
-- the one analyses read, bumped by each recalculation that finished.
CREATE TABLE cohorts (
    id                  bigserial PRIMARY KEY,
    project_id          bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name                text NOT NULL,
    description         text NOT NULL DEFAULT '',
    groups              jsonb NOT NULL DEFAULT '[]',
    filters             jsonb,
    is_static           boolean NOT NULL DEFAULT false,
    deleted             boolean NOT NULL DEFAULT false,
    version             bigint NOT NULL DEFAULT 0,
    pending_version     bigint NOT NULL DEFAULT 0,
    count               bigint,
    is_calculating      boolean NOT NULL DEFAULT false,
    last_calculation    timestamptz,
    errors_calculating  integer NOT NULL DEFAULT 0,
    last_error          text,
    created_by          bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX cohorts_project_idx ON cohorts (project_id, id) WHERE NOT deleted;

CREATE TABLE cohort_static_people (
    cohort_id    bigint NOT NULL REFERENCES cohorts (id) ON DELETE CASCADE,
    distinct_id  text NOT NULL,
    PRIMARY KEY (cohort_id, distinct_id)
);
