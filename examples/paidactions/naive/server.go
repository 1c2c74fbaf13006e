package naive

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/oncekit/once/examples/paidactions"
)

// Server is the naive editor's paid-action endpoint, POST /jobs/{job}/actions, answering
// as the editor does (202 with the transaction; "duplicate" when the look-up found one).
// Jobs and render inputs are made with package paidactions.
type Server struct {
	Store *Store
	mux   *http.ServeMux
}

// NewServer returns the naive endpoint over store.
func NewServer(store *Store) *Server {
	s := &Server{Store: store, mux: http.NewServeMux()}
	s.mux.HandleFunc("POST /jobs/{job}/actions", s.claimAction)
	return s
}

// ServeHTTP routes the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) claimAction(w http.ResponseWriter, r *http.Request) {
	job, err := strconv.ParseInt(r.PathValue("job"), 10, 64)
	if err != nil {
		http.Error(w, "bad job id", http.StatusBadRequest)
		return
	}
	var a paidactions.PaidAction
	if err := json.NewDecoder(r.Body).Decode(&a); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.JobID = job
	t, created, err := s.Store.Claim(r.Context(), r.Header.Get(paidactions.AccountHeader), a)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(struct {
		paidactions.Transaction
		Duplicate bool `json:"duplicate"`
	}{t, !created})
}
