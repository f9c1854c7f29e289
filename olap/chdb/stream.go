package chdb

import (
	"errors"
	"runtime"
	"unsafe"
)

// Stream runs sql like Query but hands its output over in chunks as the
// engine produces them (a block's rows at a time, whole rows in
// row-oriented formats), so that a result larger than memory can be
// written out while it is being computed. A chunk is valid only during
// the call to each: it is chDB's buffer, released right after. An error
// from each cancels the statement and is returned.
func (c *Conn) Stream(sql, format string, params map[string]string, each func(chunk []byte) error) error {
	q := []byte(sql)
	f := []byte(format)
	names, nameLens, values, valueLens, keep := paramArrays(params)
	r := c.lib.streamQueryWithParamsN(c.conn(), ptr(q), uintptr(len(q)), ptr(f), uintptr(len(f)),
		first(names), first(nameLens), first(values), first(valueLens), uintptr(len(names)))
	runtime.KeepAlive(q)
	runtime.KeepAlive(f)
	runtime.KeepAlive(keep)
	if r == 0 {
		return errors.New("chDB: streaming query returned no result")
	}
	defer c.lib.destroyQueryResult(r)
	if e := c.lib.resultError(r); e != "" {
		return parseError(e)
	}
	for {
		chunk := c.lib.streamFetchResult(c.conn(), r)
		if chunk == 0 {
			return errors.New("chDB: streaming fetch returned no result")
		}
		if e := c.lib.resultError(chunk); e != "" {
			c.lib.destroyQueryResult(chunk)
			return parseError(e)
		}
		// The stream ends with an empty chunk.
		n := c.lib.resultLength(chunk)
		if n == 0 {
			c.lib.destroyQueryResult(chunk)
			return nil
		}
		err := each(unsafe.Slice(c.lib.resultBuffer(chunk), n))
		c.lib.destroyQueryResult(chunk)
		if err != nil {
			c.lib.streamCancelQuery(c.conn(), r)
			return err
		}
	}
}
