package once_test

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	once "github.com/oncekit/once/runtime"
)

// aesSealer encrypts recorded results with AES-GCM, under a key the application holds (from
// its secret store, never from the database it seals for). Each value gets a fresh nonce,
// stored in front of its ciphertext.
type aesSealer struct{ aead cipher.AEAD }

func newAESSealer(key []byte) (aesSealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return aesSealer{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return aesSealer{}, err
	}
	return aesSealer{aead}, nil
}

func (s aesSealer) Seal(_ context.Context, plain []byte) ([]byte, error) {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return s.aead.Seal(nonce, nonce, plain, nil), nil
}

func (s aesSealer) Open(_ context.Context, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("aes sealer: sealed value shorter than its nonce")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], nil)
}

// redactor is a Sealer that keeps a result without some of its fields: Seal drops them from
// the JSON object, Open returns what was kept. A duplicate gets the value without them.
type redactor struct{ drop []string }

func (r redactor) Seal(_ context.Context, plain []byte) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(plain, &fields); err != nil {
		return nil, fmt.Errorf("redactor: result is not a JSON object: %w", err)
	}
	for _, f := range r.drop {
		delete(fields, f)
	}
	return json.Marshal(fields)
}

func (redactor) Open(_ context.Context, sealed []byte) ([]byte, error) { return sealed, nil }

// intent is what creating a payment returns: its id, and the client secret the browser
// needs to confirm it, which must not sit in once.operations in the clear.
type intent struct {
	ID           string `json:"id"`
	ClientSecret string `json:"client_secret"`
}

// A payment whose recorded result is encrypted at rest: the row holds ciphertext, and a
// retry gets the whole result back, secret included, through Open.
func ExampleSealer() {
	ctx := context.Background()
	db := examplePool()
	sealer, err := newAESSealer([]byte("0123456789abcdef0123456789abcdef")) // 32 bytes: AES-256
	if err != nil {
		panic(err)
	}
	create := once.Forever{Name: "billing.CreateIntentSealed", Seal: sealer}
	for range 2 {
		pi, out, err := once.ForeverValue(ctx, db, create, once.Ref{Key: "order/7"}, func(context.Context) (intent, error) {
			return intent{ID: "pi_1", ClientSecret: "pi_1_secret_abc"}, nil
		})
		fmt.Println(out.Status, pi.ID, pi.ClientSecret, err)
	}
	var form string
	db.QueryRow(ctx, `SELECT result_form FROM once.operations WHERE name = 'billing.CreateIntentSealed'`).Scan(&form)
	fmt.Println("stored", form)
	// Output:
	// ran pi_1 pi_1_secret_abc <nil>
	// duplicate pi_1 pi_1_secret_abc <nil>
	// stored sealed
}

// A payment whose recorded result is redacted: the row keeps the intent's id, not its
// secret, and a retry gets the id with an empty secret (it can fetch the intent again).
func ExampleSealer_redact() {
	ctx := context.Background()
	db := examplePool()
	create := once.Forever{Name: "billing.CreateIntentRedacted", Seal: redactor{drop: []string{"client_secret"}}}
	for range 2 {
		pi, out, err := once.ForeverValue(ctx, db, create, once.Ref{Key: "order/7"}, func(context.Context) (intent, error) {
			return intent{ID: "pi_2", ClientSecret: "pi_2_secret_abc"}, nil
		})
		fmt.Printf("%s %s %q %v\n", out.Status, pi.ID, pi.ClientSecret, err)
	}
	// Output:
	// ran pi_2 "pi_2_secret_abc" <nil>
	// duplicate pi_2 "" <nil>
}

// A guard that records only a digest of its result: a retry learns that the work was done,
// not what it returned, and gets the zero value.
func ExampleRecord() {
	ctx := context.Background()
	db := examplePool()
	create := once.Forever{Name: "billing.CreateIntentDigest", Record: once.RecordDigest}
	for range 2 {
		pi, out, err := once.ForeverValue(ctx, db, create, once.Ref{Key: "order/7"}, func(context.Context) (intent, error) {
			return intent{ID: "pi_3", ClientSecret: "pi_3_secret_abc"}, nil
		})
		fmt.Printf("%s %q %v\n", out.Status, pi.ID, err)
	}
	// Output:
	// ran "pi_3" <nil>
	// duplicate "" <nil>
}
