-- Personal API keys limited to some organizations and projects, as
-- PostHog's scoped_organizations and scoped_teams: an empty list means
-- every organization (project) the key's user belongs to.
ALTER TABLE personal_api_keys
    ADD COLUMN scoped_organizations uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN scoped_teams bigint[] NOT NULL DEFAULT '{}';

-- Annotations mark a moment on a project's graphs. scope says where one
-- shows: its project, every project of the organization, or one insight
-- (dashboard_item). Removal is a soft delete (deleted = true), as PostHog
-- does; the row leaves with its project.
CREATE TABLE annotations (
    id               bigserial PRIMARY KEY,
    organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    project_id       bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    content          text,
    date_marker      timestamptz,
    creation_type    text NOT NULL DEFAULT 'USR' CHECK (creation_type IN ('USR', 'GIT')),
    scope            text NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'organization', 'dashboard_item')),
    dashboard_item   bigint REFERENCES insights (id) ON DELETE SET NULL,
    deleted          boolean NOT NULL DEFAULT false,
    created_by       bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX annotations_project_idx ON annotations (project_id, date_marker DESC) WHERE NOT deleted;
CREATE INDEX annotations_organization_idx ON annotations (organization_id, date_marker DESC)
    WHERE scope = 'organization' AND NOT deleted;
