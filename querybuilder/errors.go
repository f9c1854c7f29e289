package querybuilder

import (
	"errors"
	"fmt"
)

// ValidationError is one problem with a request: the parameter at fault
// and what it accepts. Attr is the top-level parameter name a client sent
// (events, properties, date_from, ...), so an API can answer a 400 naming
// it; Detail starts with the exact place inside it (events[1].math).
type ValidationError struct {
	Attr   string
	Detail string
}

func (e *ValidationError) Error() string { return e.Attr + ": " + e.Detail }

// ValidationErrors lists every *ValidationError inside err, in the order
// they were found; err is typically the errors.Join of a Validate call.
// It returns nil when err holds none (an internal error).
func ValidationErrors(err error) []*ValidationError {
	var out []*ValidationError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if ve, ok := e.(*ValidationError); ok {
			out = append(out, ve)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// problems collects validation errors so that one response names all of
// them instead of making a client fix them one round trip at a time.
type problems struct {
	errs []error
}

func (p *problems) add(attr, format string, args ...any) {
	p.errs = append(p.errs, &ValidationError{Attr: attr, Detail: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error { return errors.Join(p.errs...) }

func (p *problems) ok() bool { return len(p.errs) == 0 }
