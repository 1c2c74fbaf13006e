package once

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Fingerprint returns the SHA-256 of input's canonical JSON: the value a forever guard stores
// beside a key (Ref.Input), so that the key reused with a different input is refused with
// ErrMismatch instead of replaying an answer to another question.
//
// The canonical form is fixed, because stored fingerprints must match the ones the next
// version computes (vectors are pinned in the tests):
//
//   - input is encoded with encoding/json (so struct tags, omitempty and MarshalJSON apply),
//     then decoded and written again;
//   - object members sorted by key (byte order of the UTF-8 text); no insignificant space;
//   - strings escaped only where JSON requires it (", \ and control characters), with no
//     HTML escaping;
//   - numbers by value: an integer literal as its digits ("-0" as "0"), any other number as
//     the shortest text that reads back as the same float64, in plain notation for integral
//     values under 1e21 (so 1.0, 1e0 and 1 are one number, as in RFC 8785).
//
// A json.RawMessage inside input is canonicalised too, so a request body that arrives with
// its keys in another order has the same fingerprint.
func Fingerprint(input any) ([]byte, error) {
	c, err := canonicalJSON(input)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(c)
	return sum[:], nil
}

// canonicalJSON returns the canonical JSON text of v (see Fingerprint).
func canonicalJSON(v any) ([]byte, error) {
	var fast bytes.Buffer
	if writeDirect(&fast, v) {
		return fast.Bytes(), nil
	}
	return canonicalByRoundTrip(v)
}

// writeDirect writes the canonical text of the shapes a request's input is made of (an
// object of strings, booleans, nulls, nested objects and raw JSON, as oncehttp builds it)
// without encoding v and decoding it again, and reports whether it could: for anything else,
// and for text encoding/json would rewrite (invalid UTF-8, raw JSON that is not valid), it
// writes what it must and reports false, and the caller starts over by the round trip. Both
// ways give the same bytes (TestFingerprint_DirectMatchesRoundTrip).
func writeDirect(b *bytes.Buffer, v any) bool {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		if !utf8.ValidString(v) {
			return false
		}
		writeCanonicalString(b, v)
	case json.RawMessage:
		if !json.Valid(v) {
			return false
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		var tree any
		if dec.Decode(&tree) != nil {
			return false
		}
		return writeCanonical(b, tree) == nil
	case map[string]any:
		if v == nil {
			b.WriteString("null")
			return true
		}
		for k := range v {
			if !utf8.ValidString(k) {
				return false
			}
		}
		return writeObject(b, v, func(e any) bool { return writeDirect(b, e) })
	default:
		return false
	}
	return true
}

// writeObject writes m's members in key order, each value by write, and reports false as
// soon as write does.
func writeObject(b *bytes.Buffer, m map[string]any, write func(any) bool) bool {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeCanonicalString(b, k)
		b.WriteByte(':')
		if !write(m[k]) {
			return false
		}
	}
	b.WriteByte('}')
	return true
}

// canonicalByRoundTrip is canonicalJSON for any value: encoded with encoding/json, decoded,
// and written in canonical form.
func canonicalByRoundTrip(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: input cannot be fingerprinted: %v", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("%w: input cannot be fingerprinted: %v", ErrInvalid, err)
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := writeCanonical(&b, tree); err != nil {
		return nil, fmt.Errorf("%w: input cannot be fingerprinted: %v", ErrInvalid, err)
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		writeCanonicalString(b, v)
	case json.Number:
		n, err := canonicalNumber(string(v))
		if err != nil {
			return err
		}
		b.WriteString(n)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		var err error
		writeObject(b, v, func(e any) bool { err = writeCanonical(b, e); return err == nil })
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("unexpected %T in decoded JSON", v) // json.Decoder yields only the types above
	}
	return nil
}

// canonicalNumber writes a JSON number by its value (see Fingerprint). Integer literals keep
// their digits, so integers beyond float64's 53 bits stay exact.
func canonicalNumber(s string) (string, error) {
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0", nil
		}
		return s, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", fmt.Errorf("number %s: %w", s, err)
	}
	if f == 0 {
		return "0", nil
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}

func writeCanonicalString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}
