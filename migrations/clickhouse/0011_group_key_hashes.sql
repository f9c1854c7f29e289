-- The 64-bit hash of each event's group key per group type, kept on the
-- event. A breakdown by a group property (querybuilder/groups.go) looks
-- each event's group up by cityHash64 of its key; computing that hash
-- from the key's text at read time was 11 ns an event, a third of what
-- the breakdown cost beyond the plain one (benchmarks/results/
-- breakdowns.md). Stored, it is an 8-byte column read instead (the empty
-- key of events without a group of the type compresses to almost
-- nothing). The values are the same function of the same materialized
-- columns, so a part written before this migration, which computes them
-- when read, answers the same.
ALTER TABLE events
    ADD COLUMN IF NOT EXISTS mat_group_0_hash UInt64 MATERIALIZED cityHash64(mat_group_0),
    ADD COLUMN IF NOT EXISTS mat_group_1_hash UInt64 MATERIALIZED cityHash64(mat_group_1),
    ADD COLUMN IF NOT EXISTS mat_group_2_hash UInt64 MATERIALIZED cityHash64(mat_group_2),
    ADD COLUMN IF NOT EXISTS mat_group_3_hash UInt64 MATERIALIZED cityHash64(mat_group_3),
    ADD COLUMN IF NOT EXISTS mat_group_4_hash UInt64 MATERIALIZED cityHash64(mat_group_4);

-- Parts written before compute the hashes when read until this mutation
-- (in the background) has written them.
ALTER TABLE events
    MATERIALIZE COLUMN mat_group_0_hash,
    MATERIALIZE COLUMN mat_group_1_hash,
    MATERIALIZE COLUMN mat_group_2_hash,
    MATERIALIZE COLUMN mat_group_3_hash,
    MATERIALIZE COLUMN mat_group_4_hash;
