package once

import (
	"encoding"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The limits of what names a promise.
const (
	// MaxKeyLen is the longest key, in bytes, a guard accepts. Keys name work; a longer key
	// is almost always a payload passed by mistake (fingerprint the payload instead).
	MaxKeyLen = 512
	// MaxNameLen is the longest guard name, in bytes.
	MaxNameLen = 128
	// MaxProviderKeyLen is the longest key ProviderKey returns, in bytes: Stripe's limit for
	// an Idempotency-Key, and within every other provider's we know of.
	MaxProviderKeyLen = 255
)

// KeyPart is implemented by types that choose their own key encoding. The text must be
// deterministic: the same value gives the same text in every process and version.
type KeyPart interface {
	OnceKey() string
}

// MustKey is Key for parts whose types are known to be encodable: it panics where Key
// returns an error. Generated code calls it where no part can fail, and Key where a part is
// a pointer, a text marshaler or an interface.
func MustKey(parts ...any) string {
	k, err := Key(parts...)
	if err != nil {
		panic(err)
	}
	return k
}

// Key encodes parts as one key, deterministically across processes and versions:
//
//   - strings as themselves, with '%' written "%25" and '/' written "%2F";
//   - integers (any size, signed or not) in decimal; booleans as "true" or "false";
//   - a [16]byte (a UUID, such as uuid.UUID or pgtype.UUID's Bytes) in canonical form,
//     "8-4-4-4-12" lower-case hex;
//   - time.Time as UTC RFC 3339 with nanoseconds, trailing zeros dropped;
//   - a KeyPart by its OnceKey method, an encoding.TextMarshaler by its text, escaped as a
//     string;
//   - named types by their underlying type; non-nil pointers by what they point to (unless
//     the pointer's own methods make it a KeyPart or a TextMarshaler).
//
// Parts are joined with '/', so the parts "org", 42, "day" are "org/42/day" and no two different
// lists of parts of the same types give the same key (a guard's key parts have fixed types;
// across types, 42 and "42" are one key). Floats, maps, slices, structs and nil are refused:
// they have no single text a retry is sure to reproduce.
func Key(parts ...any) (string, error) {
	if len(parts) == 0 {
		return "", fmt.Errorf("%w: key has no parts", ErrInvalid)
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('/')
		}
		if err := encodePart(&b, p); err != nil {
			return "", fmt.Errorf("%w: key part %d: %v", ErrInvalid, i+1, err)
		}
	}
	return b.String(), nil
}

var (
	timeType          = reflect.TypeFor[time.Time]()
	keyPartType       = reflect.TypeFor[KeyPart]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

func encodePart(b *strings.Builder, p any) error {
	if p == nil {
		return fmt.Errorf("nil")
	}
	v := reflect.ValueOf(p)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return fmt.Errorf("nil %s", v.Type())
		}
		// Stop at the pointer only for methods it alone has (pointer receivers): a pointer
		// to a time.Time also has the time's MarshalText, which keeps the zone.
		if elem := v.Type().Elem(); !elem.Implements(keyPartType) && !elem.Implements(textMarshalerType) &&
			(v.Type().Implements(keyPartType) || v.Type().Implements(textMarshalerType)) {
			break
		}
		v = v.Elem()
	}
	t := v.Type()
	switch {
	case t == timeType:
		writeEscaped(b, v.Interface().(time.Time).UTC().Format(time.RFC3339Nano))
		return nil
	case t.Implements(keyPartType):
		writeEscaped(b, v.Interface().(KeyPart).OnceKey())
		return nil
	case t.Kind() == reflect.Array && t.Len() == 16 && t.Elem().Kind() == reflect.Uint8:
		var u [16]byte
		reflect.Copy(reflect.ValueOf(&u).Elem(), v)
		writeUUID(b, u)
		return nil
	case t.Implements(textMarshalerType):
		text, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		writeEscaped(b, string(text))
		return nil
	}
	switch t.Kind() {
	case reflect.String:
		writeEscaped(b, v.String())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	default:
		return fmt.Errorf("%s cannot be a key part (use a string, integer, bool, UUID, time.Time or a KeyPart)", t)
	}
	return nil
}

func writeEscaped(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%':
			b.WriteString("%25")
		case '/':
			b.WriteString("%2F")
		default:
			b.WriteByte(c)
		}
	}
}

func writeUUID(b *strings.Builder, u [16]byte) {
	t := uuidText(u)
	b.Write(t[:])
}

// uuidText is u in PostgreSQL's text form of a uuid: lower-case hex, 8-4-4-4-12.
func uuidText(u [16]byte) [36]byte {
	var buf [36]byte
	hex.Encode(buf[0:8], u[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], u[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], u[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], u[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:], u[10:])
	return buf
}

// LockID is the 64-bit advisory-lock number for a key within a guard's name: FNV-1a over the
// name, a zero byte and the key. PostgreSQL's hashtext is 32 bits (so unrelated keys collide
// and serialise each other) and undocumented (so it may change between versions); this one is
// computed here, the same in every process.
func LockID(name, key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return int64(h.Sum64())
}
