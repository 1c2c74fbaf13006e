package once

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The direct writer must give the bytes the round trip gives, for every input it accepts, and
// step aside (report false) for the rest: a stored fingerprint never depends on which way
// it was computed.
func TestFingerprint_DirectMatchesRoundTrip(t *testing.T) {
	t.Parallel()
	var nilMap map[string]any
	inputs := []any{
		nil, true, false, "", "plain", "<a&b>\n\"é\"\u2028\x01\\", "\u00e9\U0001F600",
		map[string]any{}, nilMap,
		map[string]any{"method": "POST", "target": "/a?b=c&d=<e>", "type": "", "z": nil, "b": true},
		map[string]any{"json": json.RawMessage(`{ "b" : 1.0, "a":["x", 2.50 ,null,true, -0, 1e21, "\u003c", "\ud800"] }`)},
		map[string]any{"json": json.RawMessage(`"<tag> & \u2028"`), "k\u00e9y": map[string]any{"y": "1", "x": map[string]any{}}},
		json.RawMessage(`[-0, 1e2, 1E-7, 12345678901234567890123, 1e21, 0.1]`),
		json.RawMessage("{\"a\":\"caf\xc3\xa9\",\"a\":2}"),
	}
	for _, in := range inputs {
		var b bytes.Buffer
		if !writeDirect(&b, in) {
			t.Errorf("%#v: the direct writer stepped aside, want it to write", in)
			continue
		}
		want, err := canonicalByRoundTrip(in)
		if err != nil {
			t.Fatalf("%#v: %v", in, err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%#v: direct %s, round trip %s", in, b.Bytes(), want)
		}
	}
	// What encoding/json would rewrite or refuse, and what the direct writer does not know,
	// goes the long way, with the long way's answer.
	for _, in := range []any{
		"bad \xff utf-8", map[string]any{"k": "\xfe"}, map[string]any{"\xff": "v"},
		json.RawMessage(`{"a":`), json.RawMessage(`{} trailing`), json.RawMessage(nil),
		map[string]any{"n": 1}, map[string]any{"list": []any{"x"}}, struct{ A int }{1}, 2.5,
	} {
		var b bytes.Buffer
		if writeDirect(&b, in) {
			t.Errorf("%#v: the direct writer wrote %s, want it to step aside", in, b.Bytes())
		}
		got, gerr := canonicalJSON(in)
		want, werr := canonicalByRoundTrip(in)
		if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) {
			t.Errorf("%#v: canonicalJSON %s (%v), round trip %s (%v)", in, got, gerr, want, werr)
		}
	}
}
