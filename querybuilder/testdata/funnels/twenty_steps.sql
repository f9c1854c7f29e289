SELECT raw_value AS breakdown,
    [sum(c_1), sum(c_2), sum(c_3), sum(c_4), sum(c_5), sum(c_6), sum(c_7), sum(c_8), sum(c_9), sum(c_10), sum(c_11), sum(c_12), sum(c_13), sum(c_14), sum(c_15), sum(c_16), sum(c_17), sum(c_18), sum(c_19), sum(c_20)] AS counts,
    [NULL, if(sum(c_2) = 0, NULL, avgIfMerge(a_2)), if(sum(c_3) = 0, NULL, avgIfMerge(a_3)), if(sum(c_4) = 0, NULL, avgIfMerge(a_4)), if(sum(c_5) = 0, NULL, avgIfMerge(a_5)), if(sum(c_6) = 0, NULL, avgIfMerge(a_6)), if(sum(c_7) = 0, NULL, avgIfMerge(a_7)), if(sum(c_8) = 0, NULL, avgIfMerge(a_8)), if(sum(c_9) = 0, NULL, avgIfMerge(a_9)), if(sum(c_10) = 0, NULL, avgIfMerge(a_10)), if(sum(c_11) = 0, NULL, avgIfMerge(a_11)), if(sum(c_12) = 0, NULL, avgIfMerge(a_12)), if(sum(c_13) = 0, NULL, avgIfMerge(a_13)), if(sum(c_14) = 0, NULL, avgIfMerge(a_14)), if(sum(c_15) = 0, NULL, avgIfMerge(a_15)), if(sum(c_16) = 0, NULL, avgIfMerge(a_16)), if(sum(c_17) = 0, NULL, avgIfMerge(a_17)), if(sum(c_18) = 0, NULL, avgIfMerge(a_18)), if(sum(c_19) = 0, NULL, avgIfMerge(a_19)), if(sum(c_20) = 0, NULL, avgIfMerge(a_20))] AS average_times,
    [NULL, if(sum(c_2) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_2)), if(sum(c_3) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_3)), if(sum(c_4) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_4)), if(sum(c_5) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_5)), if(sum(c_6) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_6)), if(sum(c_7) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_7)), if(sum(c_8) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_8)), if(sum(c_9) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_9)), if(sum(c_10) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_10)), if(sum(c_11) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_11)), if(sum(c_12) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_12)), if(sum(c_13) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_13)), if(sum(c_14) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_14)), if(sum(c_15) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_15)), if(sum(c_16) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_16)), if(sum(c_17) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_17)), if(sum(c_18) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_18)), if(sum(c_19) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_19)), if(sum(c_20) = 0, NULL, quantileExactInclusiveIfMerge(0.5)(q_20))] AS median_times
FROM (
    SELECT '' AS raw_value,
        sumIf(weight, level >= 1) AS c_1,
        sumIf(weight, level >= 2) AS c_2,
        avgIfState((t_2 - t_1) / 1e6, level >= 2) AS a_2,
        quantileExactInclusiveIfState(0.5)((t_2 - t_1) / 1e6, level >= 2) AS q_2,
        sumIf(weight, level >= 3) AS c_3,
        avgIfState((t_3 - t_2) / 1e6, level >= 3) AS a_3,
        quantileExactInclusiveIfState(0.5)((t_3 - t_2) / 1e6, level >= 3) AS q_3,
        sumIf(weight, level >= 4) AS c_4,
        avgIfState((t_4 - t_3) / 1e6, level >= 4) AS a_4,
        quantileExactInclusiveIfState(0.5)((t_4 - t_3) / 1e6, level >= 4) AS q_4,
        sumIf(weight, level >= 5) AS c_5,
        avgIfState((t_5 - t_4) / 1e6, level >= 5) AS a_5,
        quantileExactInclusiveIfState(0.5)((t_5 - t_4) / 1e6, level >= 5) AS q_5,
        sumIf(weight, level >= 6) AS c_6,
        avgIfState((t_6 - t_5) / 1e6, level >= 6) AS a_6,
        quantileExactInclusiveIfState(0.5)((t_6 - t_5) / 1e6, level >= 6) AS q_6,
        sumIf(weight, level >= 7) AS c_7,
        avgIfState((t_7 - t_6) / 1e6, level >= 7) AS a_7,
        quantileExactInclusiveIfState(0.5)((t_7 - t_6) / 1e6, level >= 7) AS q_7,
        sumIf(weight, level >= 8) AS c_8,
        avgIfState((t_8 - t_7) / 1e6, level >= 8) AS a_8,
        quantileExactInclusiveIfState(0.5)((t_8 - t_7) / 1e6, level >= 8) AS q_8,
        sumIf(weight, level >= 9) AS c_9,
        avgIfState((t_9 - t_8) / 1e6, level >= 9) AS a_9,
        quantileExactInclusiveIfState(0.5)((t_9 - t_8) / 1e6, level >= 9) AS q_9,
        sumIf(weight, level >= 10) AS c_10,
        avgIfState((t_10 - t_9) / 1e6, level >= 10) AS a_10,
        quantileExactInclusiveIfState(0.5)((t_10 - t_9) / 1e6, level >= 10) AS q_10,
        sumIf(weight, level >= 11) AS c_11,
        avgIfState((t_11 - t_10) / 1e6, level >= 11) AS a_11,
        quantileExactInclusiveIfState(0.5)((t_11 - t_10) / 1e6, level >= 11) AS q_11,
        sumIf(weight, level >= 12) AS c_12,
        avgIfState((t_12 - t_11) / 1e6, level >= 12) AS a_12,
        quantileExactInclusiveIfState(0.5)((t_12 - t_11) / 1e6, level >= 12) AS q_12,
        sumIf(weight, level >= 13) AS c_13,
        avgIfState((t_13 - t_12) / 1e6, level >= 13) AS a_13,
        quantileExactInclusiveIfState(0.5)((t_13 - t_12) / 1e6, level >= 13) AS q_13,
        sumIf(weight, level >= 14) AS c_14,
        avgIfState((t_14 - t_13) / 1e6, level >= 14) AS a_14,
        quantileExactInclusiveIfState(0.5)((t_14 - t_13) / 1e6, level >= 14) AS q_14,
        sumIf(weight, level >= 15) AS c_15,
        avgIfState((t_15 - t_14) / 1e6, level >= 15) AS a_15,
        quantileExactInclusiveIfState(0.5)((t_15 - t_14) / 1e6, level >= 15) AS q_15,
        sumIf(weight, level >= 16) AS c_16,
        avgIfState((t_16 - t_15) / 1e6, level >= 16) AS a_16,
        quantileExactInclusiveIfState(0.5)((t_16 - t_15) / 1e6, level >= 16) AS q_16,
        sumIf(weight, level >= 17) AS c_17,
        avgIfState((t_17 - t_16) / 1e6, level >= 17) AS a_17,
        quantileExactInclusiveIfState(0.5)((t_17 - t_16) / 1e6, level >= 17) AS q_17,
        sumIf(weight, level >= 18) AS c_18,
        avgIfState((t_18 - t_17) / 1e6, level >= 18) AS a_18,
        quantileExactInclusiveIfState(0.5)((t_18 - t_17) / 1e6, level >= 18) AS q_18,
        sumIf(weight, level >= 19) AS c_19,
        avgIfState((t_19 - t_18) / 1e6, level >= 19) AS a_19,
        quantileExactInclusiveIfState(0.5)((t_19 - t_18) / 1e6, level >= 19) AS q_19,
        sumIf(weight, level >= 20) AS c_20,
        avgIfState((t_20 - t_19) / 1e6, level >= 20) AS a_20,
        quantileExactInclusiveIfState(0.5)((t_20 - t_19) / 1e6, level >= 20) AS q_20
    FROM (
        SELECT *
        FROM (
            SELECT actor, weight, level, excluded, t_1, t_2, t_3, t_4, t_5, t_6, t_7, t_8, t_9, t_10, t_11, t_12, t_13, t_14, t_15, t_16, t_17, t_18, t_19, t_20
            FROM (
                SELECT *,
                    is_hot AND (0) AS excluded,
                    if(is_hot, hot_level, toUInt8(entered)) AS level
                FROM (
                    SELECT *,
                        if(hot_level >= 1, ts[p_1], 0) AS t_1,
                        if(hot_level >= 2, ts[p_2], 0) AS t_2,
                        if(hot_level >= 3, ts[p_3], 0) AS t_3,
                        if(hot_level >= 4, ts[p_4], 0) AS t_4,
                        if(hot_level >= 5, ts[p_5], 0) AS t_5,
                        if(hot_level >= 6, ts[p_6], 0) AS t_6,
                        if(hot_level >= 7, ts[p_7], 0) AS t_7,
                        if(hot_level >= 8, ts[p_8], 0) AS t_8,
                        if(hot_level >= 9, ts[p_9], 0) AS t_9,
                        if(hot_level >= 10, ts[p_10], 0) AS t_10,
                        if(hot_level >= 11, ts[p_11], 0) AS t_11,
                        if(hot_level >= 12, ts[p_12], 0) AS t_12,
                        if(hot_level >= 13, ts[p_13], 0) AS t_13,
                        if(hot_level >= 14, ts[p_14], 0) AS t_14,
                        if(hot_level >= 15, ts[p_15], 0) AS t_15,
                        if(hot_level >= 16, ts[p_16], 0) AS t_16,
                        if(hot_level >= 17, ts[p_17], 0) AS t_17,
                        if(hot_level >= 18, ts[p_18], 0) AS t_18,
                        if(hot_level >= 19, ts[p_19], 0) AS t_19,
                        if(hot_level >= 20, ts[p_20], 0) AS t_20
                    FROM (
                        SELECT *,
                            if(hot_level >= 1, arrayFirstIndex(x -> x = start, s_1), 0) AS p_1,
                            if(hot_level >= 2, arrayFirstIndex(x -> x = start, s_2), 0) AS p_2,
                            if(hot_level >= 3, arrayFirstIndex(x -> x = start, s_3), 0) AS p_3,
                            if(hot_level >= 4, arrayFirstIndex(x -> x = start, s_4), 0) AS p_4,
                            if(hot_level >= 5, arrayFirstIndex(x -> x = start, s_5), 0) AS p_5,
                            if(hot_level >= 6, arrayFirstIndex(x -> x = start, s_6), 0) AS p_6,
                            if(hot_level >= 7, arrayFirstIndex(x -> x = start, s_7), 0) AS p_7,
                            if(hot_level >= 8, arrayFirstIndex(x -> x = start, s_8), 0) AS p_8,
                            if(hot_level >= 9, arrayFirstIndex(x -> x = start, s_9), 0) AS p_9,
                            if(hot_level >= 10, arrayFirstIndex(x -> x = start, s_10), 0) AS p_10,
                            if(hot_level >= 11, arrayFirstIndex(x -> x = start, s_11), 0) AS p_11,
                            if(hot_level >= 12, arrayFirstIndex(x -> x = start, s_12), 0) AS p_12,
                            if(hot_level >= 13, arrayFirstIndex(x -> x = start, s_13), 0) AS p_13,
                            if(hot_level >= 14, arrayFirstIndex(x -> x = start, s_14), 0) AS p_14,
                            if(hot_level >= 15, arrayFirstIndex(x -> x = start, s_15), 0) AS p_15,
                            if(hot_level >= 16, arrayFirstIndex(x -> x = start, s_16), 0) AS p_16,
                            if(hot_level >= 17, arrayFirstIndex(x -> x = start, s_17), 0) AS p_17,
                            if(hot_level >= 18, arrayFirstIndex(x -> x = start, s_18), 0) AS p_18,
                            if(hot_level >= 19, arrayFirstIndex(x -> x = start, s_19), 0) AS p_19,
                            if(hot_level >= 20, arrayFirstIndex(x -> x = start, s_20), 0) AS p_20
                        FROM (
                            SELECT *,
                                toUInt8(multiIf(s_20[-1] != 0, 20, s_19[-1] != 0, 19, s_18[-1] != 0, 18, s_17[-1] != 0, 17, s_16[-1] != 0, 16, s_15[-1] != 0, 15, s_14[-1] != 0, 14, s_13[-1] != 0, 13, s_12[-1] != 0, 12, s_11[-1] != 0, 11, s_10[-1] != 0, 10, s_9[-1] != 0, 9, s_8[-1] != 0, 8, s_7[-1] != 0, 7, s_6[-1] != 0, 6, s_5[-1] != 0, 5, s_4[-1] != 0, 4, s_3[-1] != 0, 3, s_2[-1] != 0, 2, s_1[-1] != 0, 1, 0)) AS hot_level,
                                multiIf(s_20[-1] != 0, s_20[-1], s_19[-1] != 0, s_19[-1], s_18[-1] != 0, s_18[-1], s_17[-1] != 0, s_17[-1], s_16[-1] != 0, s_16[-1], s_15[-1] != 0, s_15[-1], s_14[-1] != 0, s_14[-1], s_13[-1] != 0, s_13[-1], s_12[-1] != 0, s_12[-1], s_11[-1] != 0, s_11[-1], s_10[-1] != 0, s_10[-1], s_9[-1] != 0, s_9[-1], s_8[-1] != 0, s_8[-1], s_7[-1] != 0, s_7[-1], s_6[-1] != 0, s_6[-1], s_5[-1] != 0, s_5[-1], s_4[-1] != 0, s_4[-1], s_3[-1] != 0, s_3[-1], s_2[-1] != 0, s_2[-1], s_1[-1] != 0, s_1[-1], 0) AS start
                            FROM (
                                SELECT *,
                                    arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 19) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_19, 0)))) AS s_20
                                FROM (
                                    SELECT *,
                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 18) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_18, 0)))) AS s_19
                                    FROM (
                                        SELECT *,
                                            arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 17) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_17, 0)))) AS s_18
                                        FROM (
                                            SELECT *,
                                                arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 16) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_16, 0)))) AS s_17
                                            FROM (
                                                SELECT *,
                                                    arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 15) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_15, 0)))) AS s_16
                                                FROM (
                                                    SELECT *,
                                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 14) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_14, 0)))) AS s_15
                                                    FROM (
                                                        SELECT *,
                                                            arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 13) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_13, 0)))) AS s_14
                                                        FROM (
                                                            SELECT *,
                                                                arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 12) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_12, 0)))) AS s_13
                                                            FROM (
                                                                SELECT *,
                                                                    arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 11) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_11, 0)))) AS s_12
                                                                FROM (
                                                                    SELECT *,
                                                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 10) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_10, 0)))) AS s_11
                                                                    FROM (
                                                                        SELECT *,
                                                                            arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 9) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_9, 0)))) AS s_10
                                                                        FROM (
                                                                            SELECT *,
                                                                                arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 8) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_8, 0)))) AS s_9
                                                                            FROM (
                                                                                SELECT *,
                                                                                    arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 7) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_7, 0)))) AS s_8
                                                                                FROM (
                                                                                    SELECT *,
                                                                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 6) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_6, 0)))) AS s_7
                                                                                    FROM (
                                                                                        SELECT *,
                                                                                            arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 5) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_5, 0)))) AS s_6
                                                                                        FROM (
                                                                                            SELECT *,
                                                                                                arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 4) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_4, 0)))) AS s_5
                                                                                            FROM (
                                                                                                SELECT *,
                                                                                                    arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 3) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_3, 0)))) AS s_4
                                                                                                FROM (
                                                                                                    SELECT *,
                                                                                                        arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 2) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_2, 0)))) AS s_3
                                                                                                    FROM (
                                                                                                        SELECT *,
                                                                                                            arrayFill(x -> x != 0, arrayMap((tt, mm, st) -> if(bitTest(mm, 1) AND st != 0 AND tt - toInt64(bitShiftRight(st, 32)) <= {window_us:Int64}, st, toUInt128(0)), ts, ms, arrayPopBack(arrayPushFront(s_1, 0)))) AS s_2
                                                                                                        FROM (
                                                                                                            SELECT *,
                                                                                                                arrayFill(x -> x != 0, arrayMap((tt, mm, i) -> if(bitAnd(mm, 1) != 0, bitOr(bitShiftLeft(toUInt128(tt), 32), toUInt128(i)), toUInt128(0)), ts, ms, arrayEnumerate(ts))) AS s_1
                                                                                                            FROM (
                                                                                                                SELECT *,
                                                                                                                    by_time.1 AS ts,
                                                                                                                    if(arrayExists((x, y) -> x = y, arrayPopBack(ts), arrayPopFront(ts)),
                                                                                                                    arraySort((x, t, u) -> (t, u), m_arrival, t_arrival, u_arrival), by_time.2) AS ms
                                                                                                                FROM (
                                                                                                                    SELECT *,
                                                                                                                        arraySort((x, t) -> t, arrayZip(t_arrival, m_arrival), t_arrival) AS by_time
                                                                                                                    FROM (
                                                                                                                        SELECT if(hot, a, toUUID('00000000-0000-0000-0000-000000000000')) AS actor,
                                                                                                                            max(hot) AS is_hot,
                                                                                                                            countIf(bitAnd(m, 1) != 0) > 0 AS entered,
                                                                                                                            if(max(hot), toUInt64(1), uniqExactIf(a, bitAnd(m, 1) != 0)) AS weight,
                                                                                                                            groupArrayIf(tk, hot) AS t_arrival,
                                                                                                                            groupArrayIf(m, hot) AS m_arrival,
                                                                                                                            groupArrayIf(uk, hot) AS u_arrival
                                                                                                                        FROM (
                                                                                                                            SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id) AS a,
                                                                                                                                (bitShiftLeft(toUInt64(e.event = {p0:String}), 0)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p1:String}), 1)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p2:String}), 2)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p3:String}), 3)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p4:String}), 4)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p5:String}), 5)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p6:String}), 6)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p7:String}), 7)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p8:String}), 8)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p9:String}), 9)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p10:String}), 10)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p11:String}), 11)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p12:String}), 12)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p13:String}), 13)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p14:String}), 14)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p15:String}), 15)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p16:String}), 16)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p17:String}), 17)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p18:String}), 18)
                                                                                                                                    + bitShiftLeft(toUInt64(e.event = {p19:String}), 19)) AS m,
                                                                                                                                if(empty(po.override_person_id), e.person_id, po.override_person_id) IN (
                                                                                                                                    SELECT if(empty(po.override_person_id), e.person_id, po.override_person_id)
                                                                                                                                    FROM events AS e
                                                                                                                                    LEFT JOIN (
                                                                                                                                        SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                                                                                        FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                                                                                    ) AS po ON e.person_id = po.old_person_id
                                                                                                                                    WHERE e.team_id = {team:Int64}
                                                                                                                                      AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                                                                                                                      AND (e.event = {p1:String})
                                                                                                                                ) AS hot,
                                                                                                                                toUnixTimestamp64Micro(e.timestamp) + 1 AS tk,
                                                                                                                                toUInt128(e.uuid) AS uk
                                                                                                                            FROM events AS e
                                                                                                                            LEFT JOIN (
                                                                                                                                SELECT old_person_id, argMax(override_person_id, version) AS override_person_id
                                                                                                                                FROM person_overrides WHERE team_id = {team:Int64} GROUP BY old_person_id
                                                                                                                            ) AS po ON e.person_id = po.old_person_id
                                                                                                                            WHERE e.team_id = {team:Int64}
                                                                                                                              AND e.timestamp >= {date_from:DateTime64(6, 'UTC')} AND e.timestamp <= {date_to:DateTime64(6, 'UTC')}
                                                                                                                              AND (e.event = {p0:String}
                                                                                                                                OR e.event = {p1:String}
                                                                                                                                OR e.event = {p2:String}
                                                                                                                                OR e.event = {p3:String}
                                                                                                                                OR e.event = {p4:String}
                                                                                                                                OR e.event = {p5:String}
                                                                                                                                OR e.event = {p6:String}
                                                                                                                                OR e.event = {p7:String}
                                                                                                                                OR e.event = {p8:String}
                                                                                                                                OR e.event = {p9:String}
                                                                                                                                OR e.event = {p10:String}
                                                                                                                                OR e.event = {p11:String}
                                                                                                                                OR e.event = {p12:String}
                                                                                                                                OR e.event = {p13:String}
                                                                                                                                OR e.event = {p14:String}
                                                                                                                                OR e.event = {p15:String}
                                                                                                                                OR e.event = {p16:String}
                                                                                                                                OR e.event = {p17:String}
                                                                                                                                OR e.event = {p18:String}
                                                                                                                                OR e.event = {p19:String})
                                                                                                                        )
                                                                                                                        GROUP BY actor
                                                                                                                    )
                                                                                                                )
                                                                                                            )
                                                                                                        )
                                                                                                    )
                                                                                                )
                                                                                            )
                                                                                        )
                                                                                    )
                                                                                )
                                                                            )
                                                                        )
                                                                    )
                                                                )
                                                            )
                                                        )
                                                    )
                                                )
                                            )
                                        )
                                    )
                                )
                            )
                        )
                    )
                )
            )
        )
        WHERE level > 0 AND NOT excluded
    )
    GROUP BY raw_value
)
GROUP BY breakdown
-- date_from = time.Date(2026, time.March, 2, 23, 0, 0, 0, time.UTC)
-- date_to = time.Date(2026, time.March, 10, 22, 59, 59, 999999000, time.UTC)
-- p0 = "s1"
-- p1 = "s2"
-- p10 = "s11"
-- p11 = "s12"
-- p12 = "s13"
-- p13 = "s14"
-- p14 = "s15"
-- p15 = "s16"
-- p16 = "s17"
-- p17 = "s18"
-- p18 = "s19"
-- p19 = "s20"
-- p2 = "s3"
-- p3 = "s4"
-- p4 = "s5"
-- p5 = "s6"
-- p6 = "s7"
-- p7 = "s8"
-- p8 = "s9"
-- p9 = "s10"
-- team = 42
-- tz = "Europe/Berlin"
-- window_us = 1209600000000
