// Package server is the application: its calls of logkit are no effects, its own POST
// to a partner is.
package server

import (
	"net/http"
	"strings"

	"example.com/logkit"
)

type Server struct {
	sess *logkit.Session
	mux  *http.ServeMux
}

func (s *Server) routes() {
	logkit.Route(s.mux, "/order", s.order)
}

func (s *Server) order(w http.ResponseWriter, r *http.Request) {
	c := logkit.NewClient("https://logs.example.com")
	_ = c
	user := s.sess.Get("user")
	if err := logkit.Exchange("https://id.example.com/token", r.FormValue("code")); err != nil {
		logkit.Error(err.Error())
		return
	}
	_, _ = http.Post("https://partner.example.com/orders", "text/plain", strings.NewReader(user)) // want `call to http.Post has no //once: promise and the provider takes no idempotency key: a retry sends the POST again; declare a promise on Server.order`
}
