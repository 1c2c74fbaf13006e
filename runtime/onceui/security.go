package onceui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
)

// csrfCookie holds the browser's nonce; a form carries the nonce with its HMAC under the
// handler's secret (a signed double submit), so a page of another site, which can neither
// read the cookie nor sign, cannot forge a token.
const csrfCookie = "once_csrf"

// csrfToken returns the form token for r, setting the nonce cookie on w when r has none.
func (h *handler) csrfToken(w http.ResponseWriter, r *http.Request) string {
	nonce := ""
	if c, err := r.Cookie(csrfCookie); err == nil && validNonce(c.Value) {
		nonce = c.Value
	} else {
		b := make([]byte, 18)
		rand.Read(b)
		nonce = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: nonce, Path: h.base + "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	}
	return nonce + "." + h.sign(nonce)
}

func validNonce(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == 18
}

func (h *handler) sign(nonce string) string {
	m := hmac.New(sha256.New, h.secret)
	m.Write([]byte("once csrf\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF reports why the form's token does not match r's cookie, "" when it does.
func (h *handler) checkCSRF(r *http.Request) string {
	c, err := r.Cookie(csrfCookie)
	if err != nil {
		return "no CSRF cookie: reload the page and try again"
	}
	nonce, mac, ok := strings.Cut(r.PostFormValue("csrf"), ".")
	if !ok || nonce == "" {
		return "the form has no CSRF token"
	}
	if !hmac.Equal([]byte(nonce), []byte(c.Value)) || !hmac.Equal([]byte(mac), []byte(h.sign(nonce))) {
		return "the form's CSRF token does not match: reload the page and try again"
	}
	return ""
}

// checkSameOrigin reports why r does not come from a page of this host, "" when it does:
// by Sec-Fetch-Site where the browser sends it, else by Origin, else by Referer. A request
// that carries none of them is refused (a browser sends at least one with a POST).
func checkSameOrigin(r *http.Request) string {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" {
		if s != "same-origin" {
			return "cross-origin request (Sec-Fetch-Site: " + s + ")"
		}
		return ""
	}
	from := r.Header.Get("Origin")
	what := "Origin"
	if from == "" || from == "null" {
		from, what = r.Header.Get("Referer"), "Referer"
	}
	if from == "" {
		return "request has neither Sec-Fetch-Site, Origin nor Referer: cannot tell its origin"
	}
	u, err := url.Parse(from)
	if err != nil || u.Host == "" {
		return "request's " + what + " is not a URL"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if !strings.EqualFold(u.Host, r.Host) || u.Scheme != scheme {
		return "cross-origin request (" + what + ": " + u.Scheme + "://" + u.Host + ")"
	}
	return ""
}
