// Package httpx is the HTTP plumbing every handler shares: the one error
// type and its statuses, the JSON and CSV writers, pagination, the
// middleware of every request, and reading the path's and query's values.
// It knows no resource: the handlers in api do.
package httpx

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/lib/pq"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
	"github.com/insightd/insightd/querybuilder"
)

// Kind classifies an error; exactly one HTTP status belongs to each kind.
type Kind int

// The error kinds and their statuses (see status).
const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthenticated
	KindForbidden
	KindNotFound
	KindMethodNotAllowed
	KindConflict
	KindTooLarge
	KindUnsupportedMedia
	KindThrottled
	KindCanceled
	KindUnavailable
	KindTimeout
	KindRequestTimeout
)

// status is the one mapping of kinds to HTTP statuses.
func (k Kind) Status() int {
	switch k {
	case KindInvalid:
		return http.StatusBadRequest
	case KindUnauthenticated:
		return http.StatusUnauthorized
	case KindForbidden:
		return http.StatusForbidden
	case KindNotFound:
		return http.StatusNotFound
	case KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case KindConflict:
		return http.StatusConflict
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case KindThrottled:
		return http.StatusTooManyRequests
	case KindCanceled:
		return 499 // client closed request
	case KindUnavailable:
		return http.StatusServiceUnavailable
	case KindTimeout:
		return http.StatusGatewayTimeout
	case KindRequestTimeout:
		return http.StatusRequestTimeout
	default:
		return http.StatusInternalServerError
	}
}

// typ is the body's "type", PostHog's error families.
func (k Kind) typ() string {
	switch k {
	case KindInvalid, KindTooLarge, KindUnsupportedMedia, KindMethodNotAllowed, KindConflict:
		return "validation_error"
	case KindUnauthenticated, KindForbidden:
		return "authentication_error"
	case KindNotFound, KindRequestTimeout:
		return "invalid_request"
	case KindThrottled:
		return "throttled_error"
	default:
		return "server_error"
	}
}

// Error is the one error type handlers return. It renders as
// {"type", "code", "detail", "attr"}.
type Error struct {
	Kind   Kind
	Code   string // snake_case, stable for clients to match on
	Detail string // for people
	Attr   string // the request field at fault, if any
	Err    error  // the cause, logged and never shown
	// RetryAfter is when a client may try again (429, 503); zero means
	// the kind's default.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Detail, e.Err)
	}
	return e.Code + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

// Invalid is a 400 naming the field at fault.
func Invalid(attr, detail string) *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_input", Detail: detail, Attr: attr}
}

// NotFound is a 404.
func NotFound() *Error {
	return &Error{Kind: KindNotFound, Code: "not_found", Detail: "Not found."}
}

// errorBody is the JSON every 4xx and 5xx carries.
type errorBody struct {
	Type   string  `json:"type"`
	Code   string  `json:"code"`
	Detail string  `json:"detail"`
	Attr   *string `json:"attr"`
}

// unavailableRetry is what a 503 tells clients to wait before trying again.
const unavailableRetry = 5 * time.Second

// ToError turns any error into an *Error: ours pass through; validation
// errors of the query builder and the stores, the stores' outages and the
// engine's known errors get their kinds; anything else is internal.
func ToError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	var ve *metadata.ValidationError
	switch {
	case len(querybuilder.ValidationErrors(err)) > 0:
		return queryValidationError(err)
	case errors.As(err, &ve):
		return &Error{Kind: KindInvalid, Code: "invalid_input", Detail: ve.Detail, Attr: ve.Attr, Err: err}
	case errors.As(err, &mbe), errors.Is(err, ErrBodyTooLarge):
		return &Error{Kind: KindTooLarge, Code: "request_too_large", Detail: "The request body is larger than the server accepts.", Err: err}
	case errors.Is(err, metadata.ErrNotFound):
		return &Error{Kind: KindNotFound, Code: "not_found", Detail: "Not found.", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Code: "query_timeout", Detail: "The query took longer than the server allows.", Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: KindCanceled, Code: "canceled", Detail: "The request was canceled.", Err: err}
	}
	if e := engineCodeError(err); e != nil {
		return e
	}
	var te *olap.ThrottledError
	if errors.As(err, &te) {
		return &Error{Kind: KindThrottled, Code: "too_many_analyses", RetryAfter: te.RetryAfter, Err: err,
			Detail: te.Detail()}
	}
	// The engine types its outages (every statement's error passes its
	// classification), so a network error left untyped is PostgreSQL's.
	var ue *olap.UnavailableError
	if errors.As(err, &ue) {
		return &Error{Kind: KindUnavailable, Code: "clickhouse_unavailable", Err: err,
			Detail: "The events store (ClickHouse) is unavailable; try again shortly."}
	}
	if postgresUnavailable(err) {
		return &Error{Kind: KindUnavailable, Code: "postgres_unavailable", Err: err,
			Detail: "The metadata store (PostgreSQL) is unavailable; try again shortly."}
	}
	return &Error{Kind: KindInternal, Code: "internal_error", Detail: "A server error occurred.", Err: err}
}

// queryValidationError is the query builder's validation errors as one
// 400: the first problem's parameter as attr, every problem in the detail.
func queryValidationError(err error) *Error {
	ves := querybuilder.ValidationErrors(err)
	details := make([]string, len(ves))
	for i, ve := range ves {
		details[i] = ve.Detail
	}
	return &Error{Kind: KindInvalid, Code: "invalid_input", Attr: ves[0].Attr, Detail: strings.Join(details, "; "), Err: err}
}

// engineCodeError gives the engine's refusals their kinds, by error code.
func engineCodeError(err error) *Error {
	code, ok := olap.ErrorCode(err)
	if !ok {
		return nil
	}
	switch code {
	case olap.CodeQueryWasCancelled:
		return &Error{Kind: KindCanceled, Code: "query_canceled", Detail: "The query was canceled.", Err: err}
	case olap.CodeTimeoutExceeded:
		return &Error{Kind: KindTimeout, Code: "query_timeout", Detail: "The query took longer than the server allows.", Err: err}
	case olap.CodeTooManyRows:
		return &Error{Kind: KindInvalid, Code: "result_too_large", Err: err, Detail: "The analysis would return more rows than " +
			"the server allows: use a shorter range, a coarser interval or a lower breakdown_limit."}
	case olap.CodeTooManyRowsRead, olap.CodeTooManyBytesRead:
		return &Error{Kind: KindInvalid, Code: "query_over_budget", Err: err, Detail: "The analysis would read more rows than " +
			"the server allows one query: use a shorter range or fewer series."}
	case olap.CodeSetSizeLimitExceeded:
		return &Error{Kind: KindInvalid, Code: "query_over_budget", Err: err, Detail: "The analysis would join more rows than " +
			"the server allows one query: use a shorter range or filter the people it counts."}
	case olap.CodeMemoryLimitExceeded:
		return &Error{Kind: KindUnavailable, Code: "query_memory_limit", Err: err,
			Detail: "The analysis needs more memory than the server allows: use a shorter range or fewer breakdown values."}
	case olap.CodeCannotCompileRegexp:
		// The regex check before running approximates RE2; the engine
		// has the last word.
		return &Error{Kind: KindInvalid, Code: "invalid_input", Attr: "properties", Err: err,
			Detail: "A regular expression in the filters is not valid RE2 syntax."}
	}
	return nil
}

// postgresUnavailable reports an error of PostgreSQL being unreachable or
// refusing connections, as opposed to refusing a statement.
func postgresUnavailable(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		// 08: connection exception; 57P01-57P03: shutting down or not
		// accepting connections yet; 53300: too many connections; 57014:
		// a statement stopped by statement_timeout (see metadata's
		// deadlines: metadata statements are small, so a slow one means
		// a struggling server).
		return pe.Code.Class() == "08" || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300" || pe.Code == "57014"
	}
	// lib/pq reports a connection it could not open, or one that broke
	// (a refused dial, a reset, a read past the round-trip deadline of
	// metadata's dialer), as the socket's *net.OpError or as
	// driver.ErrBadConn; database/sql as ErrConnDone. Any other net.Error
	// (a client's body read, a DNS lookup elsewhere) is not PostgreSQL's.
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// WriteError renders err and records it for the request log.
func WriteError(c *gin.Context, err error) {
	e := ToError(err)
	_ = c.Error(e) // the logger middleware logs causes of 5xx with the request id
	body := errorBody{Type: e.Kind.typ(), Code: e.Code, Detail: e.Detail}
	if e.Attr != "" {
		body.Attr = &e.Attr
	}
	retry := e.RetryAfter
	if retry == 0 && (e.Kind == KindUnavailable || e.Kind == KindThrottled) {
		retry = unavailableRetry
	}
	if retry > 0 {
		c.Header("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
	}
	c.AbortWithStatusJSON(e.Kind.Status(), body)
}
