package app

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
)

// Intent is a payment intent: its client secret must not be stored in the clear.
type Intent struct {
	ID           string `json:"id"`
	ClientSecret string `json:"client_secret"`
}

// ResultKey is the key recorded intents are sealed with; an application reads it from its
// secret store.
var ResultKey = []byte("e2e-result-key-of-thirty-two-by!")

// gcmSealer seals recorded results with AES-GCM under ResultKey, a fresh nonce in front.
type gcmSealer struct{}

func (gcmSealer) aead() (cipher.AEAD, error) {
	block, err := aes.NewCipher(ResultKey)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

func (s gcmSealer) Seal(_ context.Context, plain []byte) ([]byte, error) {
	aead, err := s.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plain, nil), nil
}

func (s gcmSealer) Open(_ context.Context, sealed []byte) ([]byte, error) {
	aead, err := s.aead()
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("sealed result shorter than its nonce")
	}
	return aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
}

// Sealer seals the recorded intents of CreateIntentSealed.
var Sealer gcmSealer

// redactor keeps a recorded intent without its client secret.
type redactor struct{}

func (redactor) Seal(_ context.Context, plain []byte) ([]byte, error) {
	var in Intent
	if err := json.Unmarshal(plain, &in); err != nil {
		return nil, err
	}
	in.ClientSecret = ""
	return json.Marshal(in)
}

func (redactor) Open(_ context.Context, sealed []byte) ([]byte, error) { return sealed, nil }

func redacting() redactor { return redactor{} }

func intent(ctx context.Context, kind, order string) (Intent, error) {
	return Intent{ID: "pi_" + order, ClientSecret: "pi_" + order + "_secret_e2e"}, effect(ctx, kind, order)
}

// CreateIntentSealed records its intent encrypted.
//
//once:forever key=order seal=Sealer
func CreateIntentSealed(ctx context.Context, order string) (Intent, error) {
	return intent(ctx, "intent-sealed", order)
}

// CreateIntentRedacted records its intent without the client secret.
//
//once:forever key=order seal=redacting()
func CreateIntentRedacted(ctx context.Context, order string) (Intent, error) {
	return intent(ctx, "intent-redacted", order)
}

// CreateIntentDigest records only the digest of its intent.
//
//once:forever key=order result=digest
func CreateIntentDigest(ctx context.Context, order string) (Intent, error) {
	return intent(ctx, "intent-digest", order)
}

// CreateIntentNone records nothing of its intent.
//
//once:forever key=order result=none
func CreateIntentNone(ctx context.Context, order string) (Intent, error) {
	return intent(ctx, "intent-none", order)
}

// CreateIntentPlain records its intent as it is: the control, whose secret is stored.
//
//once:forever key=order result=value
func CreateIntentPlain(ctx context.Context, order string) (Intent, error) {
	return intent(ctx, "intent-plain", order)
}
