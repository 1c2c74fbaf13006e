package oncehttp

import (
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		field string
		bare  bool
		want  string // "" means refused
	}{
		{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, false, "8e03978e-40d5-43e8-bc93-6894a57f9324"},
		{`  "abc"  `, false, "abc"},
		{`"a \"quoted\" \\ key"`, false, `a "quoted" \ key`},
		{`"with space"`, false, "with space"},
		{`abc`, false, ""},
		{`abc`, true, "abc"},
		{`"abc"`, true, "abc"},
		{`ab c`, true, ""},
		{`ab;c`, true, ""},
		{`""`, false, ""},
		{``, false, ""},
		{`"abc`, false, ""},
		{`"a\bc"`, false, ""},
		{`"abc";x=1`, false, ""},
		{`"abc", "def"`, false, ""},
		{"\"tab\there\"", false, ""},
		{"\"caf\xc3\xa9\"", false, ""},
		{`"` + strings.Repeat("k", MaxKeyLen) + `"`, false, strings.Repeat("k", MaxKeyLen)},
		{`"` + strings.Repeat("k", MaxKeyLen+1) + `"`, false, ""},
	}
	for _, c := range cases {
		got, err := parseKey(c.field, c.bare)
		if c.want == "" {
			if err == nil {
				t.Errorf("parseKey(%q, %v) = %q, want an error", c.field, c.bare, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseKey(%q, %v) = %q, %v; want %q", c.field, c.bare, got, err, c.want)
		}
	}
}
