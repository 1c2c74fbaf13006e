package oncehttp

import (
	"errors"
	"fmt"
	"strings"
)

// MaxKeyLen is the longest Idempotency-Key accepted, in characters (Stripe's limit).
const MaxKeyLen = 255

// parseKey reads an Idempotency-Key field value. The header is a Structured Field Item whose
// value is a String (RFC 8941 section 3.3.3): a quoted run of printable ASCII in which only
// '"' and '\' are escaped, with a backslash. With bare, a value that is not quoted is taken
// as it is (the form Stripe's clients send), provided it is printable ASCII without spaces,
// quotes or backslashes. Parameters are refused: nothing here would honour them, and a key
// must not silently mean less than the client wrote.
func parseKey(field string, bare bool) (string, error) {
	v := strings.Trim(field, " \t")
	if v == "" {
		return "", errors.New("the Idempotency-Key header is empty")
	}
	if v[0] != '"' {
		if !bare {
			return "", errors.New(`the Idempotency-Key must be a quoted string, such as "8e03978e-40d5-43e8-bc93-6894a57f9324"`)
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' || c == ';' || c == ',' {
				return "", fmt.Errorf("the Idempotency-Key holds %q at %d: only printable ASCII without spaces, quotes, backslashes, commas or semicolons", c, i)
			}
		}
		return checkLen(v)
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\':
			i++
			if i == len(v) || (v[i] != '"' && v[i] != '\\') {
				return "", fmt.Errorf("the Idempotency-Key has a backslash at %d that escapes neither '\"' nor '\\'", i)
			}
			b.WriteByte(v[i])
		case c == '"':
			rest := strings.TrimLeft(v[i+1:], " \t")
			switch {
			case rest == "":
				return checkLen(b.String())
			case rest[0] == ';':
				return "", errors.New("the Idempotency-Key has parameters, which are not supported")
			default:
				return "", errors.New("the Idempotency-Key has more than one value")
			}
		case c < ' ' || c > '~':
			return "", fmt.Errorf("the Idempotency-Key holds byte %#x at %d: a string holds printable ASCII only", c, i)
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("the Idempotency-Key's string has no closing quote")
}

func checkLen(key string) (string, error) {
	switch {
	case key == "":
		return "", errors.New("the Idempotency-Key is an empty string")
	case len(key) > MaxKeyLen:
		return "", fmt.Errorf("the Idempotency-Key is %d characters, over the %d-character limit", len(key), MaxKeyLen)
	}
	return key, nil
}
