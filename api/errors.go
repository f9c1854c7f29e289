package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/insightd/insightd/metadata"
	"github.com/insightd/insightd/olap"
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
)

// status is the one mapping of kinds to HTTP statuses.
func (k Kind) status() int {
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
	case KindNotFound:
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

// toError turns any error into an *Error: ours pass through; the stores'
// and engine's known errors get their kinds; anything else is internal.
func toError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	var ve *metadata.ValidationError
	switch {
	case errors.As(err, &ve):
		return &Error{Kind: KindInvalid, Code: "invalid_input", Detail: ve.Detail, Attr: ve.Attr, Err: err}
	case errors.As(err, &mbe), errors.Is(err, errBodyTooLarge):
		return &Error{Kind: KindTooLarge, Code: "request_too_large", Detail: "The request body is larger than the server accepts.", Err: err}
	case errors.Is(err, metadata.ErrNotFound):
		return &Error{Kind: KindNotFound, Code: "not_found", Detail: "Not found.", Err: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Code: "query_timeout", Detail: "The query took longer than the server allows.", Err: err}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: KindCanceled, Code: "canceled", Detail: "The request was canceled.", Err: err}
	}
	if code, ok := olap.ErrorCode(err); ok {
		switch code {
		case olap.CodeQueryWasCancelled:
			return &Error{Kind: KindCanceled, Code: "query_canceled", Detail: "The query was canceled.", Err: err}
		case olap.CodeTimeoutExceeded:
			return &Error{Kind: KindTimeout, Code: "query_timeout", Detail: "The query took longer than the server allows.", Err: err}
		}
	}
	return &Error{Kind: KindInternal, Code: "internal_error", Detail: "A server error occurred.", Err: err}
}

// writeError renders err and records it for the request log.
func writeError(c *gin.Context, err error) {
	e := toError(err)
	_ = c.Error(e) // the logger middleware logs causes of 5xx with the request id
	body := errorBody{Type: e.Kind.typ(), Code: e.Code, Detail: e.Detail}
	if e.Attr != "" {
		body.Attr = &e.Attr
	}
	c.AbortWithStatusJSON(e.Kind.status(), body)
}
