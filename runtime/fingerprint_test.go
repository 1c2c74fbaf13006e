package once_test

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"testing"

	once "github.com/oncekit/once/runtime"
)

// Fingerprints are stored: the canonical form must be what the next version computes. Each
// vector pins the canonical text an input is hashed as.
func TestFingerprint_PinnedCanonicalForm(t *testing.T) {
	t.Parallel()
	type order struct {
		ID    int64  `json:"id"`
		Note  string `json:"note,omitempty"`
		Items []int  `json:"items"`
	}
	cases := []struct {
		input     any
		canonical string
	}{
		{map[string]any{"b": 1, "a": []any{"x", 2.5, nil, true}}, `{"a":["x",2.5,null,true],"b":1}`},
		{json.RawMessage(`{ "b" : 1.0, "a":["x", 2.50 ,null,true] }`), `{"a":["x",2.5,null,true],"b":1}`},
		{order{ID: 7, Items: []int{3, 1}}, `{"id":7,"items":[3,1]}`},
		{"<a&b>\n\"é\"", `"<a&b>\u000a\"é\""`},
		{json.RawMessage(`[-0, 1e2, 1E-7, 12345678901234567890123, 1e21, 0.1]`), `[0,100,1e-07,12345678901234567890123,1e+21,0.1]`},
		{map[string]any{"z": map[string]any{"y": 1, "x": 2}}, `{"z":{"x":2,"y":1}}`},
	}
	for _, c := range cases {
		got, err := once.Fingerprint(c.input)
		if err != nil {
			t.Errorf("Fingerprint(%v): %v", c.input, err)
			continue
		}
		want := sha256.Sum256([]byte(c.canonical))
		if string(got) != string(want[:]) {
			t.Errorf("Fingerprint(%s) is not the hash of %s", c.input, c.canonical)
		}
	}
}

func TestFingerprint_SeesEveryChange(t *testing.T) {
	t.Parallel()
	base := map[string]any{"source": "q3.csv", "options": map[string]any{"format": "pdf", "pages": []any{1, 2}}}
	changed := []any{
		map[string]any{"source": "q4.csv", "options": map[string]any{"format": "pdf", "pages": []any{1, 2}}},
		map[string]any{"source": "q3.csv", "options": map[string]any{"format": "png", "pages": []any{1, 2}}},
		map[string]any{"source": "q3.csv", "options": map[string]any{"format": "pdf", "pages": []any{2, 1}}},
		map[string]any{"source": "q3.csv", "options": map[string]any{"format": "pdf", "pages": []any{1, 2}, "x": nil}},
		map[string]any{"source": "q3.csv", "options": map[string]any{"format": "pdf", "pages": []any{1, "2"}}},
	}
	fp, _ := once.Fingerprint(base)
	for _, c := range changed {
		other, _ := once.Fingerprint(c)
		if string(fp) == string(other) {
			t.Errorf("%v has the fingerprint of %v", c, base)
		}
	}
}

func TestFingerprint_RefusesWhatJSONCannotEncode(t *testing.T) {
	t.Parallel()
	for _, in := range []any{make(chan int), func() {}, complex(1, 2)} {
		if _, err := once.Fingerprint(in); !errors.Is(err, once.ErrInvalid) {
			t.Errorf("Fingerprint(%T): %v, want ErrInvalid", in, err)
		}
	}
}
