// Package api serves the shop's webhooks.
package api

import (
	"context"
	"net/http"

	"shop/mailer"
	"shop/notify"

	once "github.com/oncekit/once/runtime"
)

type Handler struct {
	mail *mailer.Mailer
	db   once.DB
}

func (h *Handler) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST /hooks/paid", h.orderPaid)
	mux.HandleFunc("POST /hooks/paid-v2", h.orderPaidOnce)
}

// orderPaid is called again by the provider whenever it does not see a 200 in time:
// every retry emails the receipt again.
func (h *Handler) orderPaid(w http.ResponseWriter, r *http.Request) {
	o := notify.Order{ID: r.FormValue("order"), Email: r.FormValue("email")}
	if err := notify.Receipt(r.Context(), h.mail, o); err != nil { // want `call to notify.Receipt reaches \(\*sesv2.Client\).SendEmail \(through \(\*mailer.Mailer\).Send\) with no //once: promise: a retry sends the email again`
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// orderPaidOnce sends through sendReceipt's generated guard.
func (h *Handler) orderPaidOnce(w http.ResponseWriter, r *http.Request) {
	o := notify.Order{ID: r.FormValue("order"), Email: r.FormValue("email")}
	if _, err := h.sendReceiptOnce(r.Context(), h.db, o); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// sendReceipt emails a receipt once per order.
//
//once:forever key=o.ID
func (h *Handler) sendReceipt(ctx context.Context, o notify.Order) error {
	return notify.Receipt(ctx, h.mail, o)
}
