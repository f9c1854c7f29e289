SELECT series, period, breakdown, bucket, value
FROM (
    SELECT 0 AS series, 0 AS period, breakdown AS breakdown, toString(ts_bucket) AS bucket, toFloat64(count()) AS value
    FROM (
        SELECT toDate(e.timestamp, {tz:String}) AS ts_bucket,
            if(if(empty(ifNull(toString(concat(ifNull(toString(lower(nullIf(JSONExtractString(e.properties, {p1:String}), ''))), {p7:String}), ifNull(toString({p2:String}), {p7:String}), ifNull(toString(if((toFloat64OrNull(toString(nullIf(JSONExtractString(e.properties, {p3:String}), ''))) > {p4:Int64}), {p5:String}, {p6:String})), {p7:String}))), '')), {breakdown_null:String}, ifNull(toString(concat(ifNull(toString(lower(nullIf(JSONExtractString(e.properties, {p1:String}), ''))), {p7:String}), ifNull(toString({p2:String}), {p7:String}), ifNull(toString(if((toFloat64OrNull(toString(nullIf(JSONExtractString(e.properties, {p3:String}), ''))) > {p4:Int64}), {p5:String}, {p6:String})), {p7:String}))), '')) IN (
                SELECT if(empty(ifNull(toString(concat(ifNull(toString(lower(nullIf(JSONExtractString(e.properties, {p1:String}), ''))), {p7:String}), ifNull(toString({p2:String}), {p7:String}), ifNull(toString(if((toFloat64OrNull(toString(nullIf(JSONExtractString(e.properties, {p3:String}), ''))) > {p4:Int64}), {p5:String}, {p6:String})), {p7:String}))), '')), {breakdown_null:String}, ifNull(toString(concat(ifNull(toString(lower(nullIf(JSONExtractString(e.properties, {p1:String}), ''))), {p7:String}), ifNull(toString({p2:String}), {p7:String}), ifNull(toString(if((toFloat64OrNull(toString(nullIf(JSONExtractString(e.properties, {p3:String}), ''))) > {p4:Int64}), {p5:String}, {p6:String})), {p7:String}))), '')) AS breakdown_value
                FROM events AS e
                WHERE e.team_id = {team:Int64}
                  AND e.event = {p0:String}
                  AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                GROUP BY breakdown_value
                ORDER BY count() DESC, breakdown_value
                LIMIT {breakdown_limit:UInt32}
            ), if(empty(ifNull(toString(concat(ifNull(toString(lower(nullIf(JSONExtractString(e.properties, {p1:String}), ''))), {p7:String}), ifNull(toString({p2:String}), {p7:String}), ifNull(toString(if((toFloat64OrNull(toString(nullIf(JSONExtractString(e.properties, {p3:String}), ''))) > {p4:Int64}), {p5:String}, {p6:String})), {p7:String}))), '')), {breakdown_null:String}, ifNull(toString(concat(ifNull(toString(lower(nullIf(JSONExtractString(e.properties, {p1:String}), ''))), {p7:String}), ifNull(toString({p2:String}), {p7:String}), ifNull(toString(if((toFloat64OrNull(toString(nullIf(JSONExtractString(e.properties, {p3:String}), ''))) > {p4:Int64}), {p5:String}, {p6:String})), {p7:String}))), '')), {breakdown_other:String}) AS breakdown
        FROM events AS e
        WHERE e.team_id = {team:Int64}
          AND e.event = {p0:String}
          AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
    )
    GROUP BY ts_bucket, breakdown
)
-- breakdown_limit = 25
-- breakdown_null = "$$_posthog_breakdown_null_$$"
-- breakdown_other = "$$_posthog_breakdown_other_$$"
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "$pageview"
-- p1 = "utm_source"
-- p2 = "-"
-- p3 = "price"
-- p4 = 10
-- p5 = "big"
-- p6 = "small"
-- p7 = ""
-- team = 42
-- tz = "Europe/Berlin"
