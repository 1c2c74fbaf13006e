package outreach_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
)

const duplicates = 40 // concurrent duplicates per duplicates

// The same conversation opened by 40 requests at once (double clicks, retries, two tabs):
// one conversation, one queued job, one email, and nothing spent twice.
func TestStartThread_DuplicateStormOpensOneConversationSendsOneEmail(t *testing.T) {
	t.Parallel()
	e := setup(t)
	creator := fixture.SeedCreators(t, e.db, 1)[0]

	codes := make([]int, duplicates)
	storm.Run(duplicates, func(i int) {
		codes[i], _ = e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creator})
	})
	if got := statuses(codes); got[http.StatusCreated] != 1 || got[http.StatusOK] != duplicates-1 {
		t.Errorf("answers: %v, want one 201 and %d 200", got, duplicates-1)
	}
	if n := e.count(`SELECT count(*) FROM outreach_threads`); n != 1 {
		t.Errorf("%d conversations, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM jobs WHERE kind = 'send_outreach'`); n != 1 {
		t.Errorf("%d send jobs, want 1", n)
	}

	// Eight workers drain the queue together.
	storm.Run(8, func(int) { e.drain() })
	if got := emails(t, e.mail); got["outreach"] != 1 {
		t.Errorf("outreach emails at the provider: %d, want 1", got["outreach"])
	}
	if n := e.count(`SELECT count(*) FROM outreach_emails`); n != 1 {
		t.Errorf("%d outreach_emails rows, want 1", n)
	}
}

// Forty different conversations at once on a plan that allows five a month: exactly five
// open. The refused ones send one "limit reached" email between them, not forty; the
// episode ends when a conversation can be opened again (next month), and the next time the
// limit is reached the user hears again.
func TestStartThread_AllowanceStormOpensExactlyTheAllowance(t *testing.T) {
	t.Parallel()
	e := setup(t)
	creators := fixture.SeedCreators(t, e.db, duplicates+10)

	codes := make([]int, duplicates)
	storm.Run(duplicates, func(i int) {
		codes[i], _ = e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creators[i]})
	})
	if got := statuses(codes); got[http.StatusCreated] != 5 || got[http.StatusPaymentRequired] != duplicates-5 {
		t.Errorf("answers: %v, want five 201 and %d 402", got, duplicates-5)
	}
	if n := e.count(`SELECT count(*) FROM outreach_threads`); n != 5 {
		t.Errorf("%d conversations, want the allowance, 5", n)
	}
	if got := emails(t, e.mail); got["limit"] != 1 {
		t.Errorf("limit emails: %d, want 1 for the episode", got["limit"])
	}

	// Next month: the allowance is back, the first start rearms the episode.
	e.clock.Add(31 * 24 * time.Hour)
	for i := range 6 {
		code, body := e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creators[duplicates+i]})
		want := http.StatusCreated
		if i == 5 {
			want = http.StatusPaymentRequired
		}
		if code != want {
			t.Fatalf("start %d next month: %d %s, want %d", i+1, code, body, want)
		}
	}
	if got := emails(t, e.mail); got["limit"] != 2 {
		t.Errorf("limit emails after the second month's limit: %d, want 2", got["limit"])
	}
}

// The signed-in user is loaded once per request although two parts of the request ask,
// and once again for the next request: a memo, not a guard.
func TestCurrentUser_LoadedOncePerRequest(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i := 1; i <= 3; i++ {
		code, body := e.do("GET", e.url, "/me", nil)
		if code != http.StatusOK || !strings.Contains(string(body), `"plan":"free"`) {
			t.Fatalf("GET /me: %d %s", code, body)
		}
		if n := e.app.Stats.UserLookups.Load(); n != int64(i) {
			t.Errorf("after %d requests, %d user lookups, want %d", i, n, i)
		}
	}
	// Without a request scope the memo refuses to run rather than silently not memoising.
	if _, _, err := e.app.CurrentUserOnce(context.Background(), e.brand.Token); err == nil {
		t.Error("CurrentUserOnce without a request scope: no error")
	}
}
