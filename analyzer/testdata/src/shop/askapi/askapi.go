// Package askapi answers questions with a model over HTTP. A handler that hands the
// request's question to the model and writes the answer back keeps nothing: a repeated
// request is a new question, which the requester owns as it does a GET. One that stores
// the answer, or also sends an email, is judged as usual, and so is a model call made
// outside a handler.
package askapi

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/smtp"

	"github.com/tmc/langchaingo/llms"

	"shop/askstore"
)

type API struct {
	m      llms.Model
	db     *sql.DB
	keeper Keeper
}

// Keeper keeps answers somewhere this package does not say.
type Keeper interface {
	SaveAnswer(q, a string)
}

// Routes registers the handlers.
func (a *API) Routes(mux *http.ServeMux) {
	mux.HandleFunc("/ask", a.Ask)
	mux.HandleFunc("/ask-and-keep", a.AskAndKeep)
	mux.HandleFunc("/ask-and-mail", a.AskAndMail)
	mux.HandleFunc("/ask-and-save", a.AskAndSave)
	mux.HandleFunc("/ask-later", a.AskLater)
}

// Ask relays the question to the model and answers with what it says.
func (a *API) Ask(w http.ResponseWriter, r *http.Request) {
	answer, err := a.ask(r.Context(), r.FormValue("q"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	fmt.Fprint(w, answer)
}

func (a *API) ask(ctx context.Context, q string) (string, error) {
	return a.m.Call(ctx, "Answer briefly: "+q)
}

// AskAndKeep stores the answer: a repeated request stores another.
func (a *API) AskAndKeep(w http.ResponseWriter, r *http.Request) {
	q := r.FormValue("q")
	answer, err := a.m.Call(r.Context(), q) // want `call to \(llms.Model\).Call has no //once: promise and the provider takes no idempotency key: a retry runs \(and bills\) the model call again; declare a promise on API.AskAndKeep \(ONCE001\)$`
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	if _, err := a.db.ExecContext(r.Context(), `INSERT INTO answers (question, answer) VALUES ($1, $2)`, q, answer); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprint(w, answer)
}

// AskAndMail also emails the answer: the email is an effect of its own.
func (a *API) AskAndMail(w http.ResponseWriter, r *http.Request) {
	answer, err := a.m.Call(r.Context(), r.FormValue("q")) // want `declare a promise on API.AskAndMail; API.AskAndMail also calls smtp.SendMail with no promise`
	if err != nil {
		return
	}
	_ = smtp.SendMail("mail:25", nil, "ask@shop.test", []string{r.FormValue("to")}, []byte(answer))
}

// Digest asks outside any request: judged as usual.
func (a *API) Digest(ctx context.Context, text string) (string, error) {
	return a.m.Call(ctx, "Digest: "+text) // want `declare a promise on API.Digest \(ONCE001\)$`
}

// AskAndSave keeps the answer through a function named for a store.
func (a *API) AskAndSave(w http.ResponseWriter, r *http.Request) {
	q := r.FormValue("q")
	answer, err := a.m.Call(r.Context(), q) // want `declare a promise on API.AskAndSave \(ONCE001\)$`
	if err != nil {
		return
	}
	askstore.SaveAnswer(q, answer)
	fmt.Fprint(w, answer)
}

// AskLater answers from a goroutine, after the request has been answered: the answer
// is kept for a later poll, and a redelivered request asks again.
func (a *API) AskLater(w http.ResponseWriter, r *http.Request) {
	q := r.FormValue("q")
	go func() {
		answer, err := a.m.Call(context.Background(), q) // want `declare a promise on API.AskLater \(ONCE001\)$`
		if err == nil {
			askstore.SaveAnswer(q, answer)
		}
	}()
	fmt.Fprint(w, askstore.Latest(q))
}

// AskAndKeepBehind keeps the answer through the package's own interface.
func (a *API) AskAndKeepBehind(w http.ResponseWriter, r *http.Request) {
	q := r.FormValue("q")
	answer, err := a.m.Call(r.Context(), q) // want `declare a promise on API.AskAndKeepBehind \(ONCE001\)$`
	if err != nil {
		return
	}
	a.keeper.SaveAnswer(q, answer)
	fmt.Fprint(w, answer)
}
