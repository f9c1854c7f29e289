-- Group types (analytics.md, Entities: groups): per project, the type
-- names $groupidentify and $groups use, numbered 0 to 4 in order of first
-- use, as PostHog's GroupTypeMapping. The index is what events carry
-- ($group_N) and what analyses name (group_type_index), so a type keeps
-- its index for good. has_group_types on the project is set in the same
-- transaction as the project's first type, so the project read needs no
-- second query.
CREATE TABLE group_type_mappings (
    project_id        bigint NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    group_type        text NOT NULL,
    group_type_index  smallint NOT NULL CHECK (group_type_index BETWEEN 0 AND 4),
    name_singular     text,
    name_plural       text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, group_type_index),
    UNIQUE (project_id, group_type)
);

ALTER TABLE projects ADD COLUMN has_group_types boolean NOT NULL DEFAULT false;
