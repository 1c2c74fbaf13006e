package naive

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// Handler returns the app's HTTP API, with the routes of outreach.App.Handler.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /threads", a.handleStartThread)
	mux.HandleFunc("POST /imports", a.handleImport)
	mux.HandleFunc("POST /billing/plan", a.handlePlan)
	mux.HandleFunc("POST /webhooks/billing", a.handleBillingEvent)
	mux.HandleFunc("POST /webhooks/inbound", a.handleInbound)
	mux.HandleFunc("GET /o/{token}", a.handleLink)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(once.WithRequestScope(r.Context())))
	})
}

type user struct {
	id          int64
	email, plan string
}

var errUnauthorized = errors.New("naive: unknown token")

func (a *App) user(r *http.Request) (user, error) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var u user
	err := a.db.QueryRow(r.Context(), `SELECT u.id, u.email, coalesce(s.plan, 'free')
		FROM users u LEFT JOIN subscriptions s ON s.user_id = u.id WHERE u.api_token = $1`, token).Scan(&u.id, &u.email, &u.plan)
	if errors.Is(err, pgx.ErrNoRows) {
		return user{}, errUnauthorized
	}
	return u, err
}

var errLimitReached = errors.New("naive: this month's conversations are used up")

func (a *App) handleStartThread(w http.ResponseWriter, r *http.Request) {
	u, err := a.user(r)
	if err != nil {
		fail(w, err)
		return
	}
	var req struct {
		CampaignID int64 `json:"campaign_id"`
		CreatorID  int64 `json:"creator_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, started, err := a.startThread(r.Context(), u, req.CampaignID, req.CreatorID)
	if errors.Is(err, errLimitReached) {
		// A memo "so the email goes out once": it lasts one request, and every refused
		// request is a new one.
		once.Request{Name: "naive.limit"}.Do(r.Context(), strconv.FormatInt(u.id, 10), func(ctx context.Context) error { // ONCE006: a memo that lasts one request
			body, _ := json.Marshal(map[string]string{"to": u.email, "subject": "You have opened all of this month's conversations", "tag": "limit"})
			resp, err := http.Post(a.cfg.MailURL+"/v1/emails", "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
			return err
		})
		http.Error(w, err.Error(), http.StatusPaymentRequired)
		return
	}
	if err != nil {
		fail(w, err)
		return
	}
	status := http.StatusOK
	if started {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"result": map[string]any{"id": id, "started": started}})
}

const insertThread = `INSERT INTO outreach_threads (campaign_id, creator_id, user_id, token, created_at)
	VALUES ($1, $2, $3, $4, $5) RETURNING id`

// startThread counts the month's conversations and looks for this one, then inserts.
func (a *App) startThread(ctx context.Context, u user, campaignID, creatorID int64) (id int64, started bool, err error) {
	now := a.now()
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	var used int
	if err := a.db.QueryRow(ctx, `SELECT count(*) FROM outreach_threads WHERE user_id = $1 AND created_at >= $2`, u.id, month).Scan(&used); err != nil {
		return 0, false, err
	}
	err = a.db.QueryRow(ctx, `SELECT id FROM outreach_threads WHERE campaign_id = $1 AND creator_id = $2`, campaignID, creatorID).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, err
	}
	if used >= Allowance(u.plan) {
		return 0, false, errLimitReached
	}
	a.cfg.Hooks.checked("thread")
	token := strings.ToLower(rand.Text()[:16])
	err = a.db.QueryRow(ctx, insertThread, campaignID, creatorID, u.id, token, now).Scan(&id) // ONCE005: two requests both counted, both insert
	if err != nil {
		return 0, false, err
	}
	if _, _, err := a.enqueue(ctx, "send_outreach", "outreach:"+strconv.FormatInt(id, 10), map[string]int64{"id": id}); err != nil {
		return 0, false, err
	}
	return id, true, nil
}

// enqueue queues a job unless one with its key is pending or running, by looking first.
func (a *App) enqueue(ctx context.Context, kind, key string, payload any) (id int64, queued bool, err error) {
	err = a.db.QueryRow(ctx, `SELECT id FROM jobs WHERE dedupe_key = $1 AND status IN ('pending', 'running')`, key).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, err
	}
	a.cfg.Hooks.checked("job")
	p, err := json.Marshal(payload)
	if err != nil {
		return 0, false, err
	}
	err = a.db.QueryRow(ctx, `INSERT INTO jobs (kind, dedupe_key, payload, run_after) VALUES ($1, $2, $3, $4) RETURNING id`, // ONCE005: two requests both looked, both insert
		kind, key, string(p), a.now()).Scan(&id)
	return id, err == nil, err
}

func (a *App) handleImport(w http.ResponseWriter, r *http.Request) {
	if _, err := a.user(r); err != nil {
		fail(w, err)
		return
	}
	var req struct {
		City string `json:"city"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	city := strings.ToLower(strings.TrimSpace(req.City))
	id, queued, err := a.enqueue(r.Context(), "import", "import:"+city, map[string]string{"city": city})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"result": map[string]any{"job": id, "queued": queued}})
}

// handlePlan asks the billing provider for another plan, with a key made from the clock.
func (a *App) handlePlan(w http.ResponseWriter, r *http.Request) {
	u, err := a.user(r)
	if err != nil {
		fail(w, err)
		return
	}
	var req struct {
		Plan string `json:"plan"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var customer string
	if err := a.db.QueryRow(r.Context(), `SELECT customer_id FROM subscriptions WHERE user_id = $1`, u.id).Scan(&customer); err != nil {
		fail(w, err)
		return
	}
	body, _ := json.Marshal(map[string]string{"plan": req.Plan})
	hreq, err := http.NewRequestWithContext(r.Context(), http.MethodPost, a.cfg.BillingURL+"/v1/subscriptions/"+customer, bytes.NewReader(body))
	if err != nil {
		fail(w, err)
		return
	}
	hreq.Header.Set("Idempotency-Key", fmt.Sprintf("plan-change-%d-%d", u.id, time.Now().UnixNano())) // ONCE002: every click is a new key
	resp, err := a.cfg.HTTP.Do(hreq)
	if err != nil {
		fail(w, err)
		return
	}
	resp.Body.Close()
	writeJSON(w, http.StatusAccepted, map[string]any{"result": map[string]any{"status": resp.StatusCode}})
}

// handleBillingEvent applies the state the event carries, in the order events arrive.
func (a *App) handleBillingEvent(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Object struct {
				Customer  string    `json:"customer"`
				Plan      string    `json:"plan"`
				Status    string    `json:"status"`
				UpdatedAt time.Time `json:"updated_at"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o := ev.Data.Object
	if !strings.HasPrefix(ev.Type, "customer.subscription.") || o.Customer == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if _, err := a.db.Exec(r.Context(), `UPDATE subscriptions SET plan = $2, status = $3, updated_at = $4 WHERE customer_id = $1`,
		o.Customer, o.Plan, o.Status, o.UpdatedAt); err != nil {
		fail(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleInbound records a delivered reply and tells the brand, unless this process has seen
// the message before.
func (a *App) handleInbound(w http.ResponseWriter, r *http.Request) {
	var in struct {
		MessageID string `json:"message_id"`
		To        string `json:"to"`
		From      string `json:"from"`
		Text      string `json:"text"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if _, seen := a.seen.LoadOrStore(in.MessageID, true); seen { // ONCE003: another instance never saw it
		w.WriteHeader(http.StatusNoContent)
		return
	}
	local, _, _ := strings.Cut(in.To, "@")
	token := strings.TrimPrefix(local, "reply+")
	var brand string
	err := a.db.QueryRow(r.Context(), `INSERT INTO inbound_emails (provider_message_id, thread_id, sender, body, received_at)
		VALUES ($1, (SELECT id FROM outreach_threads WHERE token = $2), $3, $4, $5)
		RETURNING coalesce((SELECT u.email FROM outreach_threads t JOIN users u ON u.id = t.user_id WHERE t.token = $2), '')`,
		in.MessageID, token, in.From, in.Text, a.now()).Scan(&brand)
	if err != nil {
		fail(w, err)
		return
	}
	if brand != "" {
		body, _ := json.Marshal(map[string]string{"to": brand, "subject": in.From + " answered", "text": in.Text, "tag": "reply"})
		resp, err := http.Post(a.cfg.MailURL+"/v1/emails", "application/json", bytes.NewReader(body))
		if err != nil {
			fail(w, err)
			return
		}
		resp.Body.Close()
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleLink shows a conversation; an unknown token is an error page.
func (a *App) handleLink(w http.ResponseWriter, r *http.Request) {
	var name string
	err := a.db.QueryRow(r.Context(), `SELECT c.name FROM outreach_threads t JOIN campaigns c ON c.id = t.campaign_id WHERE t.token = $1`,
		r.PathValue("token")).Scan(&name)
	if err != nil {
		fail(w, err)
		return
	}
	fmt.Fprintf(w, "<h1>%s</h1>", html.EscapeString(name))
}

func fail(w http.ResponseWriter, err error) {
	if errors.Is(err, errUnauthorized) {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	http.Error(w, err.Error(), http.StatusInternalServerError)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
