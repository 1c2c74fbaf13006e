package onceui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// actions maps each action's name (the path after /act/) to what it does with the form:
// always through an audited operator function (onceops.Audit), never the console's own SQL.
var actions = map[string]func(ctx context.Context, db once.DB, a onceops.Audit, f form) error{
	"resolve-done": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		var result any
		if s := f.get("result"); s != "" {
			if !json.Valid([]byte(s)) {
				return fmt.Errorf("%w: result is not JSON", once.ErrInvalid)
			}
			result = json.RawMessage(s)
		}
		return a.ResolveDone(ctx, db, f.get("id"), result)
	},
	"resolve-failed": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		return a.ResolveFailed(ctx, db, f.get("id"), f.get("message"))
	},
	"resolve-retry": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		return a.ResolveRetry(ctx, db, f.get("id"))
	},
	"close": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		id, err := f.int("id")
		if err != nil {
			return err
		}
		return a.CloseClaim(ctx, db, id)
	},
	"rearm": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		_, err := a.Rearm(ctx, db, f.get("name"), f.get("key"))
		return err
	},
	"refund": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		n, err := f.int("n")
		if err != nil {
			return err
		}
		return a.Refund(ctx, db, f.get("name"), f.get("key"), n)
	},
	"reset": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		_, err := a.ResetAllowance(ctx, db, f.get("name"), f.get("key"))
		return err
	},
	"release": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		return a.ForceRelease(ctx, db, f.get("name"), f.get("key"))
	},
	"revive": func(ctx context.Context, db once.DB, a onceops.Audit, f form) error {
		id, err := f.int("id")
		if err != nil {
			return err
		}
		return a.ReviveFollowUp(ctx, db, id)
	},
}

// form reads a POST's fields.
type form struct{ r *http.Request }

func (f form) get(name string) string { return f.r.PostFormValue(name) }

func (f form) int(name string) (int64, error) {
	n, err := strconv.ParseInt(f.get(name), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q is not a whole number", once.ErrInvalid, name, f.get(name))
	}
	return n, nil
}

// maxForm bounds an action's form: a reason and a result, not an upload.
const maxForm = 64 << 10

// act takes an action: refused in read-only mode, from another origin, without a matching
// CSRF token, without a user or without a reason; else made, audited, and the browser sent
// back to the page it came from.
func (h *handler) act(w http.ResponseWriter, r *http.Request) {
	if h.readOnly {
		h.fail(w, r, http.StatusForbidden, "this console is read-only: actions are turned off")
		return
	}
	if why := checkSameOrigin(r); why != "" {
		h.fail(w, r, http.StatusForbidden, "refused: "+why)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, http.StatusBadRequest, "the form could not be read: "+err.Error())
		return
	}
	if why := h.checkCSRF(r); why != "" {
		h.fail(w, r, http.StatusForbidden, "refused: "+why)
		return
	}
	do, ok := actions[r.PathValue("action")]
	if !ok {
		h.fail(w, r, http.StatusNotFound, "no action "+strconv.Quote(r.PathValue("action")))
		return
	}
	user := h.user(r)
	if user == "" {
		h.fail(w, r, http.StatusForbidden, "refused: no acting user (the app's authentication names none)")
		return
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if reason == "" {
		h.fail(w, r, http.StatusBadRequest, "an action needs a reason: say why, for the audit")
		return
	}
	err := do(r.Context(), h.db, onceops.Audit{Actor: user, Reason: reason}, form{r})
	switch {
	case errors.Is(err, onceops.ErrNotUncertain), errors.Is(err, onceops.ErrNotDead), errors.Is(err, onceops.ErrNoClaim):
		h.fail(w, r, http.StatusConflict, err.Error()+": the page was out of date; nothing was changed")
		return
	case errors.Is(err, onceops.ErrNoOperation), errors.Is(err, onceops.ErrNoFollowUp):
		h.fail(w, r, http.StatusNotFound, err.Error())
		return
	case errors.Is(err, once.ErrInvalid):
		h.fail(w, r, http.StatusBadRequest, err.Error()+"; nothing was changed")
		return
	case err != nil:
		h.dbFail(w, r, "the action", err)
		return
	}
	back := r.PostFormValue("back")
	if !strings.HasPrefix(back, h.base+"/") || strings.HasPrefix(back, "//") || strings.ContainsAny(back, "\\\r\n") {
		back = h.base + "/audit"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}
