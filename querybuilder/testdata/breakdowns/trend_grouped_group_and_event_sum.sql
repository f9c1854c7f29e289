SELECT series, period, breakdown, bucket, value
FROM (
    WITH (
        SELECT (arrayMap(k -> cityHash64(k), arrayFlatten(arrayMap(x -> x.1, byValue))),
            arrayFlatten(arrayMap((x, n) -> arrayWithConstant(length(x.1), n), byValue, arrayEnumerate(byValue))),
            arrayMap(x -> x.2, byValue),
            arrayFlatten(arrayMap(x -> x.1, byValue)),
            (
                SELECT count() = uniqExact(h) AND countIf(h = cityHash64('')) = 0
                FROM (
                    SELECT cityHash64(group_key) AS h
                    FROM group_keys FINAL WHERE team_id = {team:Int64} AND group_type_index = {p2:UInt8}
                )
            ))
        FROM (
            SELECT groupArray((keys, v)) AS byValue
            FROM (
                SELECT v, groupArray(group_key) AS keys
                FROM (
                    SELECT group_key, JSONExtractString(group_properties, {p1:String}) AS v
                    FROM groups FINAL WHERE team_id = {team:Int64} AND group_type_index = {p2:UInt8}
                )
                GROUP BY v
            )
        )
    ) AS breakdown_lookup
    SELECT 0 AS series, period AS period, if(volume > 0 AND value_rank <= {breakdown_limit:UInt32}, breakdown_value, {breakdown_other:String}) AS breakdown, toString(ts_bucket) AS bucket, ifNotFinite(toFloat64(ifNull(sum(s), 0)), 0) AS value
    FROM (
        SELECT *, dense_rank() OVER (ORDER BY volume DESC, breakdown_value) AS value_rank
        FROM (
            SELECT *, sumIf(c, period = 0) OVER (PARTITION BY breakdown_value) AS volume
            FROM (
                SELECT *, toJSONString([if(empty(arrayElement(tupleElement(breakdown_lookup, 3), breakdown_raw)), {breakdown_null:String}, arrayElement(tupleElement(breakdown_lookup, 3), breakdown_raw)), if(empty(breakdown_raw_1), {breakdown_null:String}, breakdown_raw_1)]) AS breakdown_value
                FROM (
                    SELECT ts_bucket, period, breakdown_raw, breakdown_hash_1, any(breakdown_key_1) AS breakdown_raw_1, min(breakdown_check_1) AS breakdown_check_min_1, max(breakdown_check_1) AS breakdown_check_max_1, count() AS c, sum(v) AS s
                    FROM (
                        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
                            if(e.timestamp >= {date_from:DateTime64(6, 'UTC')}, 0, 1) AS period,
                            if(tupleElement(breakdown_lookup, 5), transform(e.mat_group_0_hash, tupleElement(breakdown_lookup, 1), tupleElement(breakdown_lookup, 2), toUInt32(0)), transform(e.mat_group_0, tupleElement(breakdown_lookup, 4), tupleElement(breakdown_lookup, 2), toUInt32(0))) AS breakdown_raw,
                            JSONExtractString(e.properties, {p3:String}) AS breakdown_key_1,
                            cityHash64(breakdown_key_1) AS breakdown_hash_1,
                            sipHash64(breakdown_key_1) AS breakdown_check_1,
                            toFloat64OrNull(JSONExtractString(e.properties, {p4:String})) AS v
                        FROM events AS e
                        WHERE e.team_id = {team:Int64}
                          AND e.event = {p0:String}
                          AND ((e.timestamp >= {prev_date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {prev_date_to:DateTime64(6, 'UTC')}) OR (e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}))
                    )
                    GROUP BY ts_bucket, period, breakdown_raw, breakdown_hash_1
                )
                WHERE throwIf(breakdown_check_min_1 != breakdown_check_max_1, 'two breakdown values share a 64-bit hash') = 0
            )
        )
    )
    GROUP BY ts_bucket, period, breakdown
)
-- breakdown_limit = 25
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "industry"
-- p2 = 0
-- p3 = "plan"
-- p4 = "price"
-- prev_date_from = time.Date(2026, time.February, 22, 23, 0, 0, 0, time.UTC)
-- prev_date_to = time.Date(2026, time.March, 2, 22, 59, 59, 999999000, time.UTC)
-- team = 42
-- tz = "Europe/Berlin"
