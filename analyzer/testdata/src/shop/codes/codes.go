// Package codes emails one-time codes and links the ways sign-in and password-reset // want package:"once002"
// endpoints do. A message carrying a secret minted for it is a new message each time: a
// second request asks for a new code, which replaces the first. It is reported only when
// the code tests the clock before sending, meaning to refuse a resend within an interval
// that two requests pass together.
package codes

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net/smtp"
	"time"
)

type Mailer struct {
	addr string
	from string
}

func (m *Mailer) send(to, body string) error {
	return smtp.SendMail(m.addr, nil, m.from, []string{to}, []byte(body)) // want `call to smtp.SendMail has no //once: promise`
}

// newCode returns six random digits.
func newCode() string { // want newCode:`unstable\(codes.newCode, which returns rand.IntN\)`
	return fmt.Sprintf("%06d", mrand.IntN(1000000))
}

// newToken returns a random link token.
func newToken() (string, error) { // want newToken:`unstable\(codes.newToken, which returns rand.Read\)`
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// SendLoginCode mints a code and emails it: a second request sends a new code, by design.
func SendLoginCode(to string) error {
	code := newCode()
	return smtp.SendMail("mail:25", nil, "login@shop.test", []string{to}, []byte("Your code: "+code))
}

// SendResetLink mints a link token and emails the link.
func SendResetLink(to string) error {
	token, err := newToken()
	if err != nil {
		return err
	}
	link := "https://shop.test/reset?token=" + token
	return smtp.SendMail("mail:25", nil, "reset@shop.test", []string{to}, []byte(link))
}

// SendInviteCode hands the code it mints to a helper that writes the message: the helper
// is given a fresh code by its one caller.
func SendInviteCode(to string) error {
	return mailCode(to, newCode())
}

func mailCode(to, code string) error {
	body := fmt.Sprintf("Your invitation code is %s", code)
	return smtp.SendMail("mail:25", nil, "invite@shop.test", []string{to}, []byte(body))
}

type User struct {
	Email      string
	CodeSentAt time.Time
}

// SendPhoneCode refuses a resend within a minute, by a test of the clock no lock holds:
// two requests both pass it and both send.
func SendPhoneCode(u *User) error {
	if time.Since(u.CodeSentAt) < time.Minute {
		return fmt.Errorf("wait a minute")
	}
	code := newCode()
	err := smtp.SendMail("mail:25", nil, "codes@shop.test", []string{u.Email}, []byte(code)) // want `call to smtp.SendMail has no //once: promise`
	u.CodeSentAt = time.Now()
	return err
}

// allowSend is the resend interval, tested in a helper.
func allowSend(u *User) error {
	if now := time.Now(); now.Sub(u.CodeSentAt) < time.Minute {
		return fmt.Errorf("wait a minute")
	}
	return nil
}

// SendEmailCode tests the interval through allowSend first: reported too.
func SendEmailCode(u *User) error {
	if err := allowSend(u); err != nil {
		return err
	}
	return smtp.SendMail("mail:25", nil, "codes@shop.test", []string{u.Email}, []byte(newCode())) // want `call to smtp.SendMail has no //once: promise`
}

// Welcome carries nothing minted: a second call is a second welcome.
func Welcome(m *Mailer, u *User) error {
	return m.send(u.Email, "Welcome!")
}

// Stamped carries the clock, not a secret: a retry sends the same notice again.
func Stamped(u *User) error {
	body := "Signed in at " + time.Now().Format(time.RFC3339)
	return smtp.SendMail("mail:25", nil, "notices@shop.test", []string{u.Email}, []byte(body)) // want `call to smtp.SendMail has no //once: promise`
}
