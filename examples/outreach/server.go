package outreach

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	once "github.com/oncekit/once/runtime"
)

// Handler returns the app's HTTP API and pages:
//
//	GET  /me                      the signed-in user (Bearer token)
//	POST /threads                 {"campaign_id", "creator_id"}: open a conversation
//	POST /imports                 {"city"}: queue an import of a city's creators
//	POST /billing/plan            {"plan"}: ask the billing provider for another plan
//	POST /webhooks/billing        the billing provider's events
//	POST /webhooks/inbound        the email provider's delivered replies
//	GET  /o/{token}               a conversation's page, as linked from its email
//	POST /o/{token}/unsubscribe   stop writing to the conversation's creator
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /me", a.signedIn(a.handleMe))
	mux.Handle("POST /threads", a.signedIn(a.handleStartThread))
	mux.Handle("POST /imports", a.signedIn(a.handleImport))
	mux.Handle("POST /billing/plan", a.signedIn(a.handlePlan))
	mux.HandleFunc("POST /webhooks/billing", a.handleBillingEvent)
	mux.HandleFunc("POST /webhooks/inbound", a.handleInbound)
	mux.HandleFunc("GET /o/{token}", a.handleLink)
	mux.HandleFunc("POST /o/{token}/unsubscribe", a.handleUnsubscribe)
	// Every request gets its own request scope: the lifetime of //once:request promises.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(once.WithRequestScope(r.Context())))
	})
}

type tokenKey struct{}

// signedIn lets a request through only with a known Bearer token.
func (a *App) signedIn(h func(http.ResponseWriter, *http.Request, User)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" {
			writeError(w, http.StatusUnauthorized, "sign in with a Bearer token")
			return
		}
		ctx := context.WithValue(r.Context(), tokenKey{}, token)
		// The answer's account summary asks for the user again (answer): the request
		// promise makes the two one query.
		u, err := a.user(ctx)
		if err != nil {
			a.fail(w, err)
			return
		}
		h(w, r.WithContext(ctx), u)
	})
}

// user returns the signed-in user of the request ctx belongs to.
func (a *App) user(ctx context.Context) (User, error) {
	token, _ := ctx.Value(tokenKey{}).(string)
	if token == "" {
		return User{}, ErrUnauthorized
	}
	u, _, err := a.CurrentUserOnce(ctx, token)
	return u, err
}

// answer writes v with the signed-in user's account summary beside it.
func (a *App) answer(ctx context.Context, w http.ResponseWriter, status int, v any) {
	u, err := a.user(ctx)
	if err != nil {
		a.fail(w, err)
		return
	}
	writeJSON(w, status, map[string]any{"account": map[string]any{"id": u.ID, "plan": u.Plan}, "result": v})
}

func (a *App) handleMe(w http.ResponseWriter, r *http.Request, u User) {
	a.answer(r.Context(), w, http.StatusOK, u)
}

func (a *App) handleStartThread(w http.ResponseWriter, r *http.Request, u User) {
	var req struct {
		CampaignID int64 `json:"campaign_id"`
		CreatorID  int64 `json:"creator_id"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	t, _, err := a.StartThreadOnce(r.Context(), a.db, u, req.CampaignID, req.CreatorID)
	if errors.Is(err, ErrLimitReached) {
		if _, nerr := a.NotifyLimitReachedOnce(r.Context(), a.db, u); nerr != nil {
			slog.Error("outreach: telling a user their limit is reached", "user", u.ID, "err", nerr)
		}
		writeError(w, http.StatusPaymentRequired, "this month's conversations are used up: upgrade to open more")
		return
	}
	if err != nil {
		a.fail(w, err)
		return
	}
	status := http.StatusOK
	if t.Started {
		status = http.StatusCreated
	}
	a.answer(r.Context(), w, status, t)
}

func (a *App) handleImport(w http.ResponseWriter, r *http.Request, u User) {
	var req importPayload
	if !readJSON(w, r, &req) {
		return
	}
	city := strings.ToLower(strings.TrimSpace(req.City))
	if city == "" {
		writeError(w, http.StatusBadRequest, "name a city")
		return
	}
	key := "import:" + city
	id, out, err := EnqueueJobOnce(r.Context(), a.db, Job{Kind: JobImport, DedupeKey: key, Payload: importPayload{City: city}, RunAfter: a.now()})
	if err != nil {
		a.fail(w, err)
		return
	}
	status := http.StatusAccepted
	if out.Status == once.InFlight {
		// Already queued or running: answer with the job that is, so the client follows it.
		open, ok, err := a.openJob(r.Context(), key)
		if err != nil {
			a.fail(w, err)
			return
		}
		if !ok {
			writeError(w, http.StatusConflict, "that import just finished: queue it again")
			return
		}
		id, status = open, http.StatusOK
	}
	a.answer(r.Context(), w, status, map[string]any{"job": id, "queued": out.Ran()})
}

func (a *App) handlePlan(w http.ResponseWriter, r *http.Request, u User) {
	var req struct {
		Plan string `json:"plan"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if req.Plan != "free" && req.Plan != "pro" && req.Plan != "team" {
		writeError(w, http.StatusBadRequest, "plan must be free, pro or team")
		return
	}
	sub, err := a.subscription(r.Context(), u.ID)
	if err != nil {
		a.fail(w, err)
		return
	}
	id, _, err := a.RequestPlanChangeOnce(r.Context(), sub, req.Plan)
	if perr := (*ProviderError)(nil); errors.As(err, &perr) && (perr.Status == http.StatusConflict || perr.Status == http.StatusBadRequest) {
		// The same key is in flight, or was used for another plan: a change from this state
		// of the subscription is already under way.
		writeError(w, http.StatusConflict, "a plan change is already under way; it shows once the billing provider confirms it")
		return
	}
	if err != nil {
		a.fail(w, err)
		return
	}
	a.answer(r.Context(), w, http.StatusAccepted, map[string]any{"request": id})
}

// handleBillingEvent reads which customer an event is about and nothing else. (A real
// deployment verifies the provider's signature on the body first.)
func (a *App) handleBillingEvent(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Type string `json:"type"`
		Data struct {
			Object struct {
				ID       string `json:"id"`
				Customer string `json:"customer"`
			} `json:"object"`
		} `json:"data"`
	}
	if !readJSON(w, r, &ev) {
		return
	}
	if !slices.Contains(BillingEvents, ev.Type) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	customer := ev.Data.Object.Customer
	if ev.Type == "customer.deleted" {
		customer = ev.Data.Object.ID
	}
	if customer == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if _, _, err := a.SyncCustomerOnce(r.Context(), a.db, customer); err != nil {
		a.fail(w, err) // the provider delivers again later: one more read of the truth
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *App) handleInbound(w http.ResponseWriter, r *http.Request) {
	var in Inbound
	if !readJSON(w, r, &in) {
		return
	}
	if in.MessageID == "" {
		writeError(w, http.StatusBadRequest, "message_id is required")
		return
	}
	in.ReceivedAt = a.now()
	if _, _, err := RecordInboundOnce(r.Context(), a.db, in); err != nil {
		a.fail(w, err)
		return
	}
	// Recorded now or before: either way the provider may stop delivering it.
	w.WriteHeader(http.StatusNoContent)
}

var pages = template.Must(template.New("").Parse(`
{{define "thread"}}<!doctype html><title>{{.Campaign}}</title>
<h1>{{.Campaign}}</h1><p>Hi {{.Creator}},</p><p>{{.Pitch}}</p>
{{if .Unsubscribed}}<p>You will not hear from us again.</p>{{else}}<form method="post" action="unsubscribe"><button>Stop these emails</button></form>{{end}}
{{end}}
{{define "expired"}}<!doctype html><title>Link expired</title>
<h1>This link is no longer active</h1><p>The conversation it pointed to is no longer here. Nothing went wrong on your side.</p>
{{end}}
{{define "unsubscribed"}}<!doctype html><title>Unsubscribed</title>
<h1>You will not hear from us again</h1>
{{end}}`))

// handleLink shows a conversation's page. A token that names nothing answers 200 with a
// page saying the link has expired, not an error: whoever clicked a link in an email did
// nothing wrong, and should not be shown a broken page.
func (a *App) handleLink(w http.ResponseWriter, r *http.Request) {
	p, ok, err := a.threadByToken(r.Context(), r.PathValue("token"))
	if err != nil {
		a.fail(w, err)
		return
	}
	if !ok {
		page(w, "expired", nil)
		return
	}
	page(w, "thread", p)
}

func (a *App) handleUnsubscribe(w http.ResponseWriter, r *http.Request) {
	ok, err := a.unsubscribe(r.Context(), r.PathValue("token"))
	if err != nil {
		a.fail(w, err)
		return
	}
	if !ok {
		page(w, "expired", nil)
		return
	}
	page(w, "unsubscribed", nil)
}

func page(w http.ResponseWriter, name string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pages.ExecuteTemplate(w, name, data); err != nil {
		slog.Error("outreach: rendering a page", "page", name, "err", err)
	}
}

// fail answers an error: the app's own errors with their status, anything else as a 500
// whose detail goes to the log, not to the client.
func (a *App) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, ErrUnauthorized):
		writeError(w, http.StatusUnauthorized, "unknown token")
	case errors.Is(err, ErrNotFound):
		writeError(w, http.StatusNotFound, "not found")
	default:
		slog.Error("outreach: request failed", "err", err)
		writeError(w, http.StatusInternalServerError, "something went wrong; try again")
	}
}

func readJSON(w http.ResponseWriter, r *http.Request, into any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	if err := dec.Decode(into); err != nil {
		writeError(w, http.StatusBadRequest, "the body must be JSON: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Error("outreach: writing an answer", "err", err)
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}
