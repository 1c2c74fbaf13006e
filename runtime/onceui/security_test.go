package onceui_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// retry is the form that resolves the fixtures' uncertain operation for a retry.
func retry(f fixtures, token string) url.Values {
	v := url.Values{"id": {f.uncertainID}, "reason": {"provider has no record of it"}, "back": {base + "/uncertain"}}
	if token != "" {
		v.Set("csrf", token)
	}
	return v
}

// A POST without the CSRF token, or with a token not signed for the browser's cookie, is
// refused and changes nothing; the same POST with the page's token resolves the operation.
func TestAction_RefusedWithoutTheCSRFToken(t *testing.T) {
	t.Parallel()
	pool, f := setup(t)
	srv := console(t, pool, false)
	b := newBrowser(t, srv)
	token := b.token()
	if token == "" {
		t.Fatal("the page has no CSRF token")
	}

	if code, body := b.post(base+"/act/resolve-retry", retry(f, ""), nil); code != http.StatusForbidden || !strings.Contains(body, "CSRF") {
		t.Fatalf("POST without a token: %d %s", code, body)
	}
	// A token of another browser (its own cookie) does not fit this browser's cookie.
	other := newBrowser(t, srv).token()
	if code, _ := b.post(base+"/act/resolve-retry", retry(f, other), nil); code != http.StatusForbidden {
		t.Fatalf("POST with another browser's token: %d", code)
	}
	// A nonce with a made-up signature.
	nonce, _, _ := strings.Cut(token, ".")
	if code, _ := b.post(base+"/act/resolve-retry", retry(f, nonce+".forged"), nil); code != http.StatusForbidden {
		t.Fatalf("POST with a forged signature: %d", code)
	}
	if s, n := state(t, pool, f.uncertainID), audits(t, pool); s != "uncertain" || n != 0 {
		t.Fatalf("after refused POSTs: state %s, %d audit rows; want uncertain, none", s, n)
	}

	if code, body := b.post(base+"/act/resolve-retry", retry(f, token), nil); code != http.StatusSeeOther {
		t.Fatalf("POST with the token: %d %s", code, body)
	}
	if s, n := state(t, pool, f.uncertainID), audits(t, pool); s != "released" || n != 1 {
		t.Fatalf("after the POST: state %s, %d audit rows; want released, one", s, n)
	}
}

// A POST from another origin is refused, however it says so (Sec-Fetch-Site, Origin,
// Referer) and even with a valid token; one that says nothing of its origin too.
func TestAction_RefusedFromAnotherOrigin(t *testing.T) {
	t.Parallel()
	pool, f := setup(t)
	srv := console(t, pool, false)
	b := newBrowser(t, srv)
	token := b.token()
	for _, h := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
		{"Sec-Fetch-Site": "same-site", "Origin": "https://sub.evil.example"},
		{"Origin": "https://evil.example"},
		{"Origin": strings.Replace(srv.URL, "http://", "https://", 1)},
		{"Referer": "https://evil.example/page"},
		{"Origin": "null", "Referer": "http://evil.example/"},
		{},
	} {
		if code, body := b.post(base+"/act/resolve-retry", retry(f, token), h); code != http.StatusForbidden {
			t.Fatalf("POST with %v: %d %s, want 403", h, code, body)
		}
	}
	if s, n := state(t, pool, f.uncertainID), audits(t, pool); s != "uncertain" || n != 0 {
		t.Fatalf("after cross-origin POSTs: state %s, %d audit rows", s, n)
	}
	// Where the browser sends only a Referer of this origin, the POST is taken.
	if code, body := b.post(base+"/act/resolve-retry", retry(f, token), map[string]string{"Referer": srv.URL + base + "/uncertain"}); code != http.StatusSeeOther {
		t.Fatalf("same-origin POST by Referer: %d %s", code, body)
	}
	if s := state(t, pool, f.uncertainID); s != "released" {
		t.Fatalf("state %s after a same-origin POST", s)
	}
}

// In read-only mode every action is refused, with a valid token from the same origin, and
// the pages offer none.
func TestReadOnly_RefusesEveryAction(t *testing.T) {
	t.Parallel()
	pool, f := setup(t)
	// The token comes from a console that allows actions, with the same secret: a token
	// that would be taken there, so only the read-only switch refuses.
	rw := newBrowser(t, console(t, pool, false))
	srv := console(t, pool, true)
	b := newBrowser(t, srv)
	b.c.Jar = rw.c.Jar
	token := rw.token()
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	for action, form := range map[string]url.Values{
		"resolve-done":   {"id": {f.uncertainID}, "result": {"1"}},
		"resolve-failed": {"id": {f.uncertainID}, "message": {"declined"}},
		"resolve-retry":  {"id": {f.uncertainID}},
		"close":          {"id": {id(f.claimID)}},
		"rearm":          {"name": {f.latch}, "key": {"db-1"}},
		"refund":         {"name": {f.allowance}, "key": {"org-1"}, "n": {"1"}},
		"reset":          {"name": {f.allowance}, "key": {"org-1"}},
		"release":        {"name": {f.lease}, "key": {"org-1"}},
		"revive":         {"id": {id(f.followUpID)}},
	} {
		form.Set("csrf", token)
		form.Set("reason", "trying")
		if code, body := b.post(base+"/act/"+action, form, map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusForbidden || !strings.Contains(body, "actions are turned off") {
			t.Fatalf("%s in read-only mode: %d %s", action, code, body)
		}
	}
	if n := audits(t, pool); n != 0 {
		t.Fatalf("%d audit rows after refused actions", n)
	}
	var latchSet, used, held, dead, open int
	err := pool.QueryRow(t.Context(), `SELECT
	(SELECT count(*) FROM once.latches WHERE fired_at IS NOT NULL),
	(SELECT count(*) FROM once.counter_slots),
	(SELECT count(*) FROM once.leases WHERE released_at IS NULL),
	(SELECT count(*) FROM once.followups WHERE state = 'dead'),
	(SELECT count(*) FROM once.open_claims WHERE state = 'open')`).Scan(&latchSet, &used, &held, &dead, &open)
	if err != nil {
		t.Fatal(err)
	}
	if s := state(t, pool, f.uncertainID); s != "uncertain" || latchSet != 1 || used != 3 || held != 1 || dead != 1 || open != 1 {
		t.Fatalf("rows changed in read-only mode: state %s, latches %d, units %d, leases %d, dead %d, open %d", s, latchSet, used, held, dead, open)
	}
	for _, p := range []string{"/uncertain", "/claims", "/latches", "/allowances", "/leases", "/followups"} {
		if code, body := b.get(base + p); code != 200 || strings.Contains(body, "<form method=\"post\"") {
			t.Fatalf("read-only %s: %d, offers an action: %v", p, code, strings.Contains(body, "<form method=\"post\""))
		}
	}
}

// Keys, scopes and errors an attacker chose render as text: the <script> key and the
// error's <img onerror> never reach a page as markup.
func TestPages_RenderUserDataInert(t *testing.T) {
	t.Parallel()
	pool, _ := setup(t)
	srv := console(t, pool, false)
	b := newBrowser(t, srv)
	detail := base + "/operation?name=billing.Charge&scope=acct-1&key=" + url.QueryEscape(scriptKey)
	for _, p := range []string{"/uncertain", detail[len(base):]} {
		code, body := b.get(base + p)
		if code != 200 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "<img") {
			t.Fatalf("%s renders user data as markup:\n%s", p, body)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(&#34;key&#34;)&lt;/script&gt;") || !strings.Contains(body, "&lt;img src=x onerror=") {
			t.Fatalf("%s does not show the key and the error as text:\n%s", p, body)
		}
	}
	// The content security policy forbids scripts besides.
	resp, err := http.Get(srv.URL + base + "/uncertain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Fatalf("Content-Security-Policy %q", csp)
	}
}
