// Package quotaapi checks quotas at three levels of calls and eight call sites.
package quotaapi

import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"shop/quota"
)

type API struct{ ses *sesv2.Client }

func (a *API) Upload(w http.ResponseWriter, r *http.Request) { a.check(r.Context(), "u") }
func (a *API) Share(w http.ResponseWriter, r *http.Request)  { a.check(r.Context(), "s") }

func (a *API) check(ctx context.Context, who string) {
	if over(who) {
		a.notify(ctx, who)
	}
}

func (a *API) notify(ctx context.Context, who string) {
	switch who {
	case "u":
		_ = quota.NotifyOver(ctx, a.ses, who)
	case "s":
		_ = quota.NotifyOver(ctx, a.ses, who)
	case "a":
		_ = quota.NotifyOver(ctx, a.ses, who)
	case "b":
		_ = quota.NotifyOver(ctx, a.ses, who)
	case "c":
		_ = quota.NotifyOver(ctx, a.ses, who)
	case "d":
		_ = quota.NotifyOver(ctx, a.ses, who)
	case "e":
		_ = quota.NotifyOver(ctx, a.ses, who)
	default:
		_ = quota.NotifyOver(ctx, a.ses, who)
	}
}

func over(who string) bool { return who != "" }

// warnOnce warns once per account.
//
//once:forever key=who
func (a *API) warnOnce(ctx context.Context, who string) error {
	return quota.Warn(ctx, a.ses, who)
}

// remindOnce reminds once per account.
//
//once:forever key=who
func (a *API) remindOnce(ctx context.Context, who string) error {
	return quota.Remind(ctx, a.ses, who)
}

// Nag reminds on every call.
func (a *API) Nag(w http.ResponseWriter, r *http.Request) {
	_ = quota.Remind(r.Context(), a.ses, "n") // want `call to quota.Remind reaches \(\*sesv2.Client\).SendEmail \(through quota.send\) with no //once: promise`
}
