package outreach_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
)

// startThread opens a conversation with the creator and sends its email; it returns the
// conversation's token.
func (e *env) startThread(creator int64) string {
	e.t.Helper()
	code, body := e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creator})
	if code != http.StatusCreated {
		e.t.Fatalf("opening a conversation: %d %s", code, body)
	}
	var r struct {
		Result struct{ Token string }
	}
	if err := json.Unmarshal(body, &r); err != nil {
		e.t.Fatal(err)
	}
	e.drain()
	return r.Result.Token
}

// post sends a body with no token (the providers' webhooks, the creator's browser).
func post(t *testing.T, url string, body any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// The email provider delivers a creator's answer 40 times at once, to two instances of the
// app: one message recorded, one notification queued, one email to the brand.
func TestInbound_RedeliveryStormRecordsOnceNotifiesOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	token := e.startThread(fixture.SeedCreators(t, e.db, 1)[0])
	_, second := e.instance()

	msg := map[string]string{"message_id": "msg_001", "to": "reply+" + token + "@replies.outreach.test", "from": "creator1@creators.test", "text": "Yes, send samples!"}
	codes := make([]int, duplicates)
	storm.Run(duplicates, func(i int) {
		url := e.url
		if i%2 == 1 {
			url = second
		}
		codes[i], _ = post(t, url+"/webhooks/inbound", msg)
	})
	if got := statuses(codes); got[http.StatusNoContent] != duplicates {
		t.Errorf("answers: %v, want %d 204", got, duplicates)
	}
	if n := e.count(`SELECT count(*) FROM inbound_emails`); n != 1 {
		t.Errorf("%d inbound rows, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM jobs WHERE kind = 'notify_reply'`); n != 1 {
		t.Errorf("%d notification jobs, want 1", n)
	}
	storm.Run(8, func(int) { e.drain() })
	if got := emails(t, e.mail)["reply"]; got != 1 {
		t.Errorf("reply notifications at the provider: %d, want 1", got)
	}
}

// A link in an email names a conversation by its token. The creator's unsubscribe,
// clicked 40 times, is one suppression; after it, the creator is not written to again,
// through this conversation or another. A token that names nothing answers a friendly
// page with 200, never an error.
func TestLinks_UnsubscribeOnceAndUnknownTokensAnswerAPage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	creator := fixture.SeedCreators(t, e.db, 1)[0]
	token := e.startThread(creator)

	resp, err := http.Get(e.url + "/o/" + token)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "acme spring launch") {
		t.Fatalf("the conversation's page: %d %s", resp.StatusCode, page)
	}

	codes := make([]int, duplicates)
	storm.Run(duplicates, func(i int) { codes[i], _ = post(t, e.url+"/o/"+token+"/unsubscribe", nil) })
	if got := statuses(codes); got[http.StatusOK] != duplicates {
		t.Errorf("answers: %v, want %d 200", got, duplicates)
	}
	if n := e.count(`SELECT count(*) FROM suppressions`); n != 1 {
		t.Errorf("%d suppressions, want 1", n)
	}

	// Another brand's campaign reaches the same creator: the job runs, nothing is sent.
	other := fixture.SeedBrand(t, e.db, "globex", "pro", start)
	var id int64
	err = e.db.QueryRow(context.Background(), `INSERT INTO outreach_threads (campaign_id, creator_id, user_id, token, created_at)
		VALUES ($1, $2, $3, 'othertoken', $4) RETURNING id`, other.CampaignID, creator, other.UserID, start).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(context.Background(), `INSERT INTO jobs (kind, dedupe_key, payload, run_after) VALUES ('send_outreach', 'outreach:other', jsonb_build_object('id', $1::bigint), $2)`, id, start); err != nil {
		t.Fatal(err)
	}
	e.drain()
	if got := emails(t, e.mail)["outreach"]; got != 1 {
		t.Errorf("outreach emails: %d, want 1 (the one before the unsubscribe)", got)
	}

	for _, path := range []string{"/o/abcdefghjkmn", "/o/abcdefghjkmn/unsubscribe"} {
		method := http.MethodGet
		if strings.HasSuffix(path, "unsubscribe") {
			method = http.MethodPost
		}
		req, _ := http.NewRequest(method, e.url+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "This link is no longer active") {
			t.Errorf("%s %s: %d %q, want 200 and the friendly page", method, path, resp.StatusCode, page)
		}
	}
	if n := e.count(`SELECT count(*) FROM suppressions`); n != 1 {
		t.Errorf("an unknown token wrote something: %d suppressions", n)
	}
}

// The email provider accepts the outreach email, then the connection drops before its
// answer: the job is retried with the same key, and the provider sends one email.
func TestSendOutreach_LostAnswerIsRetriedWithTheSameKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.mail.DropAfterAccept(1)
	creator := fixture.SeedCreators(t, e.db, 1)[0]
	code, body := e.do("POST", e.url, "/threads", map[string]int64{"campaign_id": e.brand.CampaignID, "creator_id": creator})
	if code != http.StatusCreated {
		t.Fatalf("%d %s", code, body)
	}
	e.drain() // the send's answer is lost: the job goes back to the queue
	if n := e.count(`SELECT count(*) FROM jobs WHERE status = 'pending' AND attempts = 1`); n != 1 {
		t.Fatalf("%d jobs waiting for a retry, want 1", n)
	}
	e.clock.Add(time.Minute)
	e.drain()
	if got := emails(t, e.mail)["outreach"]; got != 1 {
		t.Errorf("outreach emails sent by the provider: %d, want 1", got)
	}
	if r := e.mail.Replays(); r != 1 {
		t.Errorf("the retry was answered from the provider's record %d times, want 1", r)
	}
	if n := e.count(`SELECT count(*) FROM outreach_emails`); n != 1 {
		t.Errorf("%d outreach_emails rows, want 1", n)
	}
}

// The same lost answer on a connection kept alive from an earlier send: the HTTP client does
// not quietly send it again itself (it could, as the request carries Idempotency-Key), so
// the loss reaches the job, which is retried, with the same key, on the next pass.
func TestSendOutreach_LostAnswerOnAReusedConnectionReachesTheJob(t *testing.T) {
	t.Parallel()
	e := setup(t)
	creators := fixture.SeedCreators(t, e.db, 2)
	e.startThread(creators[0]) // its email leaves the connection to the provider open
	e.mail.DropAfterAccept(1)
	e.startThread(creators[1])
	if n := e.count(`SELECT count(*) FROM jobs WHERE status = 'pending' AND attempts = 1`); n != 1 {
		t.Fatalf("%d jobs waiting for a retry after the lost answer, want 1", n)
	}
	e.clock.Add(time.Minute)
	e.drain()
	if got := emails(t, e.mail)["outreach"]; got != 2 {
		t.Errorf("outreach emails sent by the provider: %d, want 2 (one per conversation)", got)
	}
	if r := e.mail.Replays(); r != 1 {
		t.Errorf("the retry was answered from the provider's record %d times, want 1", r)
	}
}
