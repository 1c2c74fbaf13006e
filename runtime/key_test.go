package once_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
)

type orgID int64

type slug string

type tenant struct{ id string }

func (t tenant) OnceKey() string { return "tenant:" + t.id }

// account has its key on the pointer receiver only.
type account struct{ id int }

func (a *account) OnceKey() string { return "account-" + strconv.Itoa(a.id) }

// The encoding is part of the stored data: a key written by one version must be the key the
// next version computes. These vectors pin it; changing one is a data migration.
func TestEncodeKey_PinnedVectors(t *testing.T) {
	t.Parallel()
	n := int32(-7)
	uuid := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	cet := time.Date(2026, 11, 30, 14, 4, 5, 120000000, time.FixedZone("CET", 3600))
	cases := []struct {
		parts []any
		want  string
	}{
		{[]any{"org", 42}, "org/42"},
		{[]any{orgID(42)}, "42"},
		{[]any{uint64(18446744073709551615)}, "18446744073709551615"},
		{[]any{int8(-128), &n}, "-128/-7"},
		{[]any{true, false}, "true/false"},
		{[]any{"a/b", "c%d"}, "a%2Fb/c%25d"},
		{[]any{"a", "", "b"}, "a//b"},
		{[]any{slug("héllo wörld")}, "héllo wörld"},
		{[]any{uuid}, "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
		{[]any{cet}, "2026-11-30T13:04:05.12Z"},
		// A pointer is encoded as what it points to: a *time.Time in UTC too, although the
		// pointer, like the time, has a MarshalText (which keeps the zone).
		{[]any{&cet}, "2026-11-30T13:04:05.12Z"},
		{[]any{&uuid}, "6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
		{[]any{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, "2026-01-02T03:04:05Z"},
		{[]any{tenant{"x/y"}}, "tenant:x%2Fy"},
		{[]any{&tenant{"x/y"}}, "tenant:x%2Fy"},
		{[]any{&account{7}}, "account-7"},
	}
	for _, c := range cases {
		got, err := once.Key(c.parts...)
		if err != nil {
			t.Errorf("Key(%v): %v", c.parts, err)
			continue
		}
		if got != c.want {
			t.Errorf("Key(%v) = %q, want %q", c.parts, got, c.want)
		}
	}
}

func TestEncodeKey_DifferentPartsNeverCollide(t *testing.T) {
	t.Parallel()
	pairs := [][2][]any{
		{{"a/b"}, {"a", "b"}},
		{{"a%2Fb"}, {"a/b"}},
		{{"1"}, {"1", ""}},
		{{"", "x"}, {"x"}},
	}
	for _, p := range pairs {
		a, b := once.MustKey(p[0]...), once.MustKey(p[1]...)
		if a == b {
			t.Errorf("MustKey(%q) and MustKey(%q) both encode as %q", p[0], p[1], a)
		}
	}
}

func TestEncodeKey_RefusesPartsWithoutOneStableText(t *testing.T) {
	t.Parallel()
	var nilPtr *int
	for _, part := range []any{nil, nilPtr, 1.5, []string{"a"}, map[string]int{}, struct{ A int }{1}} {
		if _, err := once.Key("x", part); !errors.Is(err, once.ErrInvalid) {
			t.Errorf("Key(%#v) error = %v, want ErrInvalid", part, err)
		}
	}
	if _, err := once.Key(); !errors.Is(err, once.ErrInvalid) {
		t.Errorf("Key() error = %v, want ErrInvalid", err)
	}
}

// LockID feeds pg_advisory_xact_lock: the same name and key must lock the same number in
// every process and release.
func TestLockID_PinnedVectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, key string
		want      int64
	}{
		{"billing.Charge", "42", -1707398519639909376},
		{"", "", -5808590958014384161},
		{"ideas:generate", "org/7", 950643119391789512},
	}
	for _, c := range cases {
		if got := once.LockID(c.name, c.key); got != c.want {
			t.Errorf("LockID(%q, %q) = %d, want %d", c.name, c.key, got, c.want)
		}
	}
	if once.LockID("a", "bc") == once.LockID("ab", "c") {
		t.Error("LockID does not separate name from key")
	}
}
