-- insightd metadata: organizations, users and their memberships, personal
-- API keys, projects, insights and everything hanging off insights.

CREATE TABLE organizations (
    id          uuid PRIMARY KEY,
    name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
    id                 bigserial PRIMARY KEY,
    uuid               uuid NOT NULL UNIQUE,
    distinct_id        text NOT NULL UNIQUE,
    email              text NOT NULL,
    first_name         text NOT NULL DEFAULT '',
    last_name          text NOT NULL DEFAULT '',
    is_email_verified  boolean NOT NULL DEFAULT false,
    hedgehog_config    jsonb,
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

-- level: 1 member, 8 admin, 15 owner (PostHog's membership levels).
CREATE TABLE memberships (
    organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id          bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    level            smallint NOT NULL CHECK (level IN (1, 8, 15)),
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

-- The key itself is never stored: secure_value is the hex SHA-256 of it,
-- mask_value its first and last characters so a person can tell keys apart.
CREATE TABLE personal_api_keys (
    id            bigserial PRIMARY KEY,
    user_id       bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    label         text NOT NULL DEFAULT '',
    secure_value  text NOT NULL UNIQUE,
    mask_value    text NOT NULL,
    scopes        text[] NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_used_at  timestamptz
);
CREATE INDEX personal_api_keys_user_idx ON personal_api_keys (user_id);

CREATE TABLE projects (
    id                                                bigserial PRIMARY KEY,
    uuid                                              uuid NOT NULL UNIQUE,
    organization_id                                   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    api_token                                         text NOT NULL UNIQUE,
    live_events_token                                 text NOT NULL,
    name                                              text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    app_urls                                          text[] NOT NULL DEFAULT '{}',
    slack_incoming_webhook                            text,
    anonymize_ips                                     boolean NOT NULL DEFAULT false,
    completed_snippet_onboarding                      boolean NOT NULL DEFAULT false,
    ingested_event                                    boolean NOT NULL DEFAULT false,
    test_account_filters                              jsonb NOT NULL DEFAULT '[]',
    test_account_filters_default_checked              boolean NOT NULL DEFAULT false,
    path_cleaning_filters                             jsonb NOT NULL DEFAULT '[]',
    is_demo                                           boolean NOT NULL DEFAULT false,
    generating_demo_data                              boolean NOT NULL DEFAULT false,
    timezone                                          text NOT NULL DEFAULT 'UTC',
    data_attributes                                   jsonb NOT NULL DEFAULT '["data-attr"]',
    person_display_name_properties                    text[] NOT NULL DEFAULT '{}',
    correlation_config                                jsonb NOT NULL DEFAULT '{}',
    autocapture_opt_out                               boolean NOT NULL DEFAULT false,
    autocapture_exceptions_opt_in                     boolean NOT NULL DEFAULT false,
    autocapture_web_vitals_opt_in                     boolean NOT NULL DEFAULT false,
    autocapture_exceptions_errors_to_ignore           jsonb NOT NULL DEFAULT '[]',
    capture_console_log_opt_in                        boolean NOT NULL DEFAULT false,
    capture_performance_opt_in                        boolean NOT NULL DEFAULT false,
    session_recording_opt_in                          boolean NOT NULL DEFAULT false,
    session_recording_sample_rate                     text,
    session_recording_minimum_duration_milliseconds   integer,
    session_recording_linked_flag                     jsonb,
    session_recording_network_payload_capture_config  jsonb,
    session_replay_config                             jsonb,
    access_control                                    boolean NOT NULL DEFAULT false,
    week_start_day                                    smallint CHECK (week_start_day IN (0, 1)),
    primary_dashboard                                 bigint,
    live_events_columns                               text[] NOT NULL DEFAULT '{}',
    recording_domains                                 text[] NOT NULL DEFAULT '{}',
    inject_web_apps                                   boolean NOT NULL DEFAULT false,
    extra_settings                                    jsonb NOT NULL DEFAULT '{}',
    modifiers                                         jsonb NOT NULL DEFAULT '{}',
    has_completed_onboarding_for                      jsonb NOT NULL DEFAULT '{}',
    surveys_opt_in                                    boolean NOT NULL DEFAULT false,
    heatmaps_opt_in                                   boolean NOT NULL DEFAULT false,
    created_at                                        timestamptz NOT NULL DEFAULT now(),
    updated_at                                        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_organization_idx ON projects (organization_id, id);

CREATE TABLE insights (
    id                bigserial PRIMARY KEY,
    project_id        bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    short_id          text NOT NULL,
    name              text,
    derived_name      text,
    description       text NOT NULL DEFAULT '',
    filters           jsonb NOT NULL DEFAULT '{}',
    query             jsonb,
    "order"           integer,
    deleted           boolean NOT NULL DEFAULT false,
    favorited         boolean NOT NULL DEFAULT false,
    saved             boolean NOT NULL DEFAULT false,
    is_sample         boolean NOT NULL DEFAULT false,
    tags              text[] NOT NULL DEFAULT '{}',
    created_by        bigint REFERENCES users (id) ON DELETE SET NULL,
    last_modified_by  bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    last_modified_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, short_id)
);
CREATE INDEX insights_list_idx ON insights (project_id, last_modified_at DESC) WHERE NOT deleted;

CREATE TABLE insight_views (
    insight_id      bigint NOT NULL REFERENCES insights (id) ON DELETE CASCADE,
    user_id         bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    last_viewed_at  timestamptz NOT NULL,
    PRIMARY KEY (insight_id, user_id)
);
CREATE INDEX insight_views_user_idx ON insight_views (user_id, last_viewed_at DESC);

CREATE TABLE sharing_configurations (
    insight_id    bigint PRIMARY KEY REFERENCES insights (id) ON DELETE CASCADE,
    enabled       boolean NOT NULL DEFAULT false,
    access_token  text NOT NULL UNIQUE,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Who did what to which item: scope 'Project' or 'Insight', activity
-- created / updated / deleted / restored, detail the field changes
-- ({"name": ..., "short_id": ..., "changes": [{"field", "action", "before", "after"}]}).
CREATE TABLE activity_log (
    id               bigserial PRIMARY KEY,
    organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    project_id       bigint REFERENCES projects (id) ON DELETE CASCADE,
    scope            text NOT NULL,
    item_id          text NOT NULL,
    activity         text NOT NULL,
    user_id          bigint REFERENCES users (id) ON DELETE SET NULL,
    detail           jsonb NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX activity_log_item_idx ON activity_log (project_id, scope, item_id, created_at DESC, id DESC);
CREATE INDEX activity_log_project_idx ON activity_log (project_id, scope, created_at DESC, id DESC);

-- Computed analysis results, keyed by project and a hash of everything the
-- result depends on (filter, project timezone and test-account filters).
CREATE TABLE cached_results (
    project_id   bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    cache_key    text NOT NULL,
    result       jsonb NOT NULL,
    computed_at  timestamptz NOT NULL,
    stale_at     timestamptz NOT NULL,
    PRIMARY KEY (project_id, cache_key)
);
