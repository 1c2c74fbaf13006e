package onceui_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"html"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceschema"
)

// xorSealer stands in for an application's encryption: the console must not show what it
// stores, whatever it is.
type xorSealer struct{}

func (xorSealer) Seal(_ context.Context, plain []byte) ([]byte, error) { return xor(plain), nil }
func (xorSealer) Open(_ context.Context, sealed []byte) ([]byte, error) {
	return xor(sealed), nil
}

func xor(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = c ^ 0x5a
	}
	return out
}

// The operation page shows each form of a recorded result as what it is: a plain result as
// its JSON, a sealed one by its size (never its stored bytes), a digest by its first 12 hex
// digits, one not recorded as such.
func TestOperationPage_ShowsEachFormOfResult(t *testing.T) {
	t.Parallel()
	pool := pgtest.NewDatabase(t).Pool(t, 4)
	ctx := context.Background()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	type intent struct {
		ID           string `json:"id"`
		ClientSecret string `json:"client_secret"`
	}
	const secret = "pi_7_secret_hV3k"
	value := intent{ID: "pi_7", ClientSecret: secret}
	plainJSON := `{"id":"pi_7","client_secret":"` + secret + `"}`
	sum := sha256.Sum256([]byte(`{"client_secret":"` + secret + `","id":"pi_7"}`))
	cases := []struct {
		name  string
		guard once.Forever
		shown string // the page's text for the result
	}{
		{"plain", once.Forever{}, plainJSON},
		{"sealed", once.Forever{Seal: xorSealer{}}, "sealed (" + strconv.Itoa(len(plainJSON)) + " bytes)"},
		{"digest", once.Forever{Record: once.RecordDigest}, "digest " + hex.EncodeToString(sum[:])[:12]},
		{"none", once.Forever{Record: once.RecordNothing}, "not recorded"},
	}
	srv := console(t, pool, true)
	b := newBrowser(t, srv)
	for _, c := range cases {
		g := c.guard
		g.Name = "billing.Intent." + c.name
		if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/7"}, func(context.Context) (intent, error) { return value, nil }); err != nil {
			t.Fatal(err)
		}
		code, body := b.get(base + "/operation?name=" + url.QueryEscape(g.Name) + "&scope=&key=" + url.QueryEscape("order/7"))
		if code != 200 {
			t.Fatalf("%s: %d %s", c.name, code, body)
		}
		text := html.UnescapeString(body)
		if !strings.Contains(text, "<dt>Result</dt><dd><code>"+c.shown+"</code></dd>") {
			t.Fatalf("%s: the page does not show the result as %q:\n%s", c.name, c.shown, text)
		}
		stored := storedText(t, pool, g.Name)
		hasSecret := strings.Contains(text, secret)
		if c.name == "plain" != hasSecret {
			t.Fatalf("%s: the page shows the secret: %v", c.name, hasSecret)
		}
		if c.name == "sealed" && strings.Contains(text, strings.Trim(stored, `"`)) {
			t.Fatalf("sealed: the page shows the stored bytes %s", stored)
		}
	}
}

// storedText is the result of guard name's one row, as stored.
func storedText(t *testing.T, pool *pgxpool.Pool, name string) string {
	t.Helper()
	var s *string
	if err := pool.QueryRow(context.Background(), `SELECT result::text FROM once.operations WHERE name = $1`, name).Scan(&s); err != nil {
		t.Fatal(err)
	}
	if s == nil {
		return ""
	}
	return *s
}
