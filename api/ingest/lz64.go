package ingest

import (
	"errors"
	"math"
	"unicode/utf16"

	"github.com/insightd/insightd/api/httpx"
)

// lz64 is lz-string's compressToBase64, which older posthog-js sends with
// compression=lz64: an LZW-like code stream over UTF-16 code units,
// written six bits to a character of a base64 alphabet (with '=' as a
// 65th character that carries no bits). PostHog's capture still reads it.

const lzAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="

var lzValues = func() (v [256]int8) {
	for i := range v {
		v[i] = -1
	}
	for i := 0; i < len(lzAlphabet); i++ {
		v[lzAlphabet[i]] = int8(i)
	}
	return v
}()

var errLZ64 = errors.New("not lz64")

// lzReader reads the code stream's bits, each character's six from the
// highest, as lz-string does; past the end it reads zeros, and the
// decoder checks it has not run past before each code.
type lzReader struct {
	s     string
	index int // the next character to load
	val   int // the bits of the character being read
	mask  int // the next bit of val to read
	bad   bool
}

func (r *lzReader) load() {
	r.mask = 32
	r.val = 0
	if r.index < len(r.s) {
		v := lzValues[r.s[r.index]]
		if v < 0 {
			r.bad = true
		}
		r.val = int(v)
	}
	r.index++
}

func (r *lzReader) bits(n int) int {
	out := 0
	for p := 0; p < n; p++ {
		if r.val&r.mask != 0 {
			out |= 1 << p
		}
		r.mask >>= 1
		if r.mask == 0 {
			r.load()
		}
	}
	return out
}

// lzSpan is a dictionary entry: every entry is a run of the output
// already written, so the dictionary holds places, not copies, and its
// memory stays a small multiple of the output's.
type lzSpan struct{ off, n int32 }

// lz64Decompress decodes lz64 text into UTF-8 of at most limit bytes
// (httpx.ErrBodyTooLarge beyond); lone surrogates become U+FFFD.
func lz64Decompress(s string, limit int64) ([]byte, error) {
	if s == "" {
		return nil, errLZ64
	}
	if limit > math.MaxInt32/2 {
		limit = math.MaxInt32 / 2 // dictionary places are 32-bit
	}
	r := &lzReader{s: s}
	r.load()
	// Codes 0 and 1 bring a new 8- or 16-bit character, 2 ends the stream;
	// 3 onwards name dictionary entries. The first code is 2 bits wide.
	dict := make([]lzSpan, 3, 1024)
	var out []uint16
	char := func(code int) bool {
		switch code {
		case 0:
			out = append(out, uint16(r.bits(8)))
		case 1:
			out = append(out, uint16(r.bits(16)))
		default:
			return false
		}
		dict = append(dict, lzSpan{int32(len(out) - 1), 1})
		return true
	}
	switch first := r.bits(2); {
	case first == 2:
		return []byte{}, nil
	case !char(first):
		return nil, errLZ64
	}
	w := lzSpan{0, 1}
	enlargeIn, numBits := 4, 3
	for {
		if r.index > len(s) || r.bad {
			return nil, errLZ64 // ran past the end without the end code
		}
		code := r.bits(numBits)
		var entry lzSpan
		switch {
		case code == 2:
			return lzUTF8(out, limit)
		case char(code):
			entry = lzSpan{int32(len(out) - 1), 1}
			enlargeIn--
		case code < len(dict):
			e := dict[code]
			entry = lzSpan{int32(len(out)), e.n}
			// The source lies wholly before the end: no overlap.
			out = append(out, out[e.off:e.off+e.n]...)
		case code == len(dict):
			// The entry being defined: w and w's first character.
			entry = lzSpan{int32(len(out)), w.n + 1}
			out = append(out, out[w.off:w.off+w.n]...)
			out = append(out, out[w.off])
		default:
			return nil, errLZ64
		}
		if enlargeIn == 0 {
			enlargeIn, numBits = 1<<numBits, numBits+1
		}
		if int64(len(out)) > limit {
			return nil, httpx.ErrBodyTooLarge
		}
		// w followed by entry's first character, which follows w in out.
		dict = append(dict, lzSpan{w.off, w.n + 1})
		enlargeIn--
		w = entry
		if enlargeIn == 0 {
			enlargeIn, numBits = 1<<numBits, numBits+1
		}
		if numBits > 30 {
			return nil, errLZ64 // more entries than any body this size makes
		}
	}
}

func lzUTF8(units []uint16, limit int64) ([]byte, error) {
	s := string(utf16.Decode(units))
	if int64(len(s)) > limit {
		return nil, httpx.ErrBodyTooLarge
	}
	return []byte(s), nil
}
