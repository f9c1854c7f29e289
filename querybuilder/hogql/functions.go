package hogql

import "strings"

// fn is an allow-listed function: the ClickHouse name it prints as, how
// many arguments it takes (max -1 for any), whether it aggregates, how
// many parameters a parametric aggregate takes, and whether lambdas may be
// its arguments. wrap, when set, prints the call from its compiled
// arguments (HogQL names that are not ClickHouse's).
type fn struct {
	ch                   string
	min, max             int
	agg                  bool
	pmin, pmax           int
	lambda               bool
	wrap                 func(args []string) string
	parametric, distinct bool
}

const many = -1

// functions is the allow-list, by lower-cased HogQL name. Nothing here
// reads files, the network, other tables, settings or the server's
// state: no table functions, no dictionaries, no joinGet, no sleep or
// throwIf, no functions that take a function's name as a string.
var functions = map[string]fn{}

func scalar(min, max int, names ...string) {
	for _, n := range names {
		functions[strings.ToLower(n)] = fn{ch: n, min: min, max: max}
	}
}

func aggregate(min, max int, names ...string) {
	for _, n := range names {
		functions[strings.ToLower(n)] = fn{ch: n, min: min, max: max, agg: true, distinct: true}
	}
}

func parametric(pmin, pmax, min, max int, names ...string) {
	for _, n := range names {
		functions[strings.ToLower(n)] = fn{ch: n, min: min, max: max, agg: true, pmin: pmin, pmax: pmax, parametric: true}
	}
}

func lambdas(min int, names ...string) {
	for _, n := range names {
		functions[strings.ToLower(n)] = fn{ch: n, min: min, max: many, lambda: true}
	}
}

func init() {
	// Dates and times.
	scalar(0, 1, "now", "today", "yesterday")
	scalar(1, 2, "toDate", "toDateTime", "toStartOfDay", "toStartOfHour", "toStartOfMinute", "toStartOfMonth",
		"toStartOfQuarter", "toStartOfYear", "toMonday", "toYear", "toQuarter", "toMonth", "toDayOfMonth", "toDayOfYear",
		"toHour", "toMinute", "toSecond", "toYYYYMM", "toYYYYMMDD", "toUnixTimestamp", "toStartOfFiveMinutes",
		"toStartOfFifteenMinutes", "toTimeZone", "toDayOfWeek")
	scalar(1, 3, "toStartOfWeek", "toWeek")
	scalar(3, 4, "dateDiff")
	scalar(3, 3, "dateAdd", "dateSub")
	scalar(2, 3, "formatDateTime")
	scalar(2, 2, "addSeconds", "addMinutes", "addHours", "addDays", "addWeeks", "addMonths", "addQuarters", "addYears",
		"subtractSeconds", "subtractMinutes", "subtractHours", "subtractDays", "subtractWeeks", "subtractMonths",
		"subtractQuarters", "subtractYears")
	scalar(1, 1, "toIntervalSecond", "toIntervalMinute", "toIntervalHour", "toIntervalDay", "toIntervalWeek",
		"toIntervalMonth", "toIntervalQuarter", "toIntervalYear")
	// Strings and URLs.
	scalar(1, 1, "lower", "upper", "lowerUTF8", "upperUTF8", "length", "lengthUTF8", "reverse", "empty", "notEmpty",
		"domain", "domainWithoutWWW", "topLevelDomain", "protocol", "path", "pathFull", "queryString", "fragment",
		"cutQueryString", "cutFragment", "cutQueryStringAndFragment", "extractURLParameters", "base64Encode",
		"hex", "trimLeft", "trimRight", "trimBoth")
	scalar(1, many, "concat")
	scalar(2, 3, "substring", "position", "positionCaseInsensitive", "splitByChar", "splitByString", "leftPad", "rightPad",
		"substringUTF8")
	scalar(2, 2, "startsWith", "endsWith", "extract", "extractAll", "match", "like", "ilike", "notLike", "notILike",
		"extractURLParameter", "repeat")
	scalar(3, 3, "replaceAll", "replaceOne", "replaceRegexpAll", "replaceRegexpOne")
	scalar(1, 2, "JSONExtractString", "JSONExtractInt", "JSONExtractFloat", "JSONExtractBool", "JSONExtractRaw", "JSONHas")
	// Math.
	scalar(1, 1, "abs", "floor", "ceil", "sqrt", "exp", "log", "log2", "log10", "sign", "negate", "isFinite", "isNaN")
	scalar(1, 2, "round")
	scalar(2, 2, "pow", "intDiv", "intDivOrZero", "plus", "minus", "multiply", "divide", "modulo")
	scalar(2, many, "greatest", "least")
	// Conditionals and comparisons.
	scalar(3, 3, "if")
	scalar(3, many, "multiIf")
	scalar(1, many, "coalesce")
	scalar(2, 2, "ifNull", "nullIf", "equals", "notEquals", "less", "greater", "lessOrEquals", "greaterOrEquals")
	scalar(1, 1, "isNull", "isNotNull", "not", "assumeNotNull", "toTypeName")
	scalar(2, many, "and", "or")
	// Type conversions. HogQL's toInt and toFloat accept any value and
	// give NULL for what is not a number.
	scalar(1, 1, "toString", "toInt64", "toFloat64", "toUInt64", "toInt64OrNull", "toFloat64OrNull", "toInt64OrZero",
		"toFloat64OrZero", "toBool", "toUUID", "toUUIDOrNull", "toDateOrNull", "toDateTimeOrNull")
	functions["toint"] = fn{ch: "toInt", min: 1, max: 1, wrap: func(a []string) string { return "toInt64OrNull(toString(" + a[0] + "))" }}
	functions["tofloat"] = fn{ch: "toFloat", min: 1, max: 1, wrap: func(a []string) string { return "toFloat64OrNull(toString(" + a[0] + "))" }}
	// Arrays and tuples.
	scalar(0, many, "array", "tuple")
	scalar(1, many, "arrayConcat", "has", "hasAny", "hasAll", "indexOf", "arrayElement", "arraySlice", "arrayDistinct",
		"arrayUniq", "arrayEnumerate", "arrayPushBack", "arrayPushFront", "arrayPopBack", "arrayPopFront",
		"arrayStringConcat", "arrayCompact", "arrayZip", "arrayFlatten", "tupleElement", "arraySum", "arrayMin", "arrayMax",
		"arrayAvg")
	lambdas(1, "arrayMap", "arrayFilter", "arrayExists", "arrayAll", "arrayFirst", "arrayLast", "arrayFirstIndex",
		"arraySort", "arrayReverseSort", "arrayCount", "arrayCumSum")
	// Aggregates.
	aggregate(0, 1, "count")
	aggregate(1, 2, "countIf")
	aggregate(1, many, "uniq", "uniqExact")
	aggregate(2, many, "uniqIf", "uniqExactIf")
	aggregate(1, 1, "sum", "avg", "min", "max", "any", "anyLast", "median", "groupArray", "groupUniqArray",
		"stddevPop", "stddevSamp", "varPop", "varSamp")
	aggregate(2, 2, "sumIf", "avgIf", "minIf", "maxIf", "argMax", "argMin", "anyIf", "groupArrayIf")
	parametric(1, 1, 1, 1, "quantile", "quantileExact", "quantileExactInclusive", "quantileTDigest", "topK")
	parametric(1, 10, 1, 1, "quantiles", "quantilesExact", "quantilesExactInclusive")
	parametric(1, 3, 2, 33, "windowFunnel")
	parametric(0, 0, 1, 32, "retention")
}

// intervalFunctions print INTERVAL n unit.
var intervalFunctions = map[string]string{
	"second": "toIntervalSecond", "minute": "toIntervalMinute", "hour": "toIntervalHour", "day": "toIntervalDay",
	"week": "toIntervalWeek", "month": "toIntervalMonth", "quarter": "toIntervalQuarter", "year": "toIntervalYear",
}

// AllowedFunction reports whether name is on the allow-list (tests and
// documentation list it).
func AllowedFunction(name string) bool {
	_, ok := functions[strings.ToLower(name)]
	return ok
}

// BreakdownFunctions is the subset analytics.md allows in an expression
// breakdown (per event: no aggregates, arrays or lambdas), plus multiIf,
// the many-branch if.
var BreakdownFunctions = []string{
	"if", "multiIf", "concat", "lower", "upper", "coalesce", "toString", "toInt", "toFloat",
	"round", "substring", "length", "extract",
}
