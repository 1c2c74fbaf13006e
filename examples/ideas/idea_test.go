package ideas

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// Refining or dismissing an idea never creates a run and never touches the allowance. A
// refinement is paid once per revision however many times it is sent (a double click, a
// second tab); the same revision with another note is refused, and a dismissed idea is not
// refined at all.
func TestIdeas_RefineAndDismissNeverCreateARun(t *testing.T) {
	t.Parallel()
	e := setup(t)
	run, _ := e.press()
	e.drain()
	ideas, err := runIdeas(t.Context(), e.db, run)
	if err != nil || len(ideas) != IdeasPerRun {
		t.Fatalf("ideas %+v (%v), want %d", ideas, err, IdeasPerRun)
	}
	usage, paid := e.usage(), e.api.Effects()
	refine := "/ideas/" + strconv.FormatInt(ideas[0].ID, 10) + "/refine"
	dismiss := "/ideas/" + strconv.FormatInt(ideas[1].ID, 10) + "/dismiss"
	form := url.Values{"revision": {"0"}, "note": {"aim at small bakeries"}}

	for _, loc := range e.storm(32, refine, form) {
		if loc != ProgressPath(run) {
			t.Fatalf("a refine press ended at %q, want the run's progress page", loc)
		}
	}
	for _, loc := range e.storm(8, dismiss, nil) {
		if loc != ProgressPath(run) {
			t.Fatalf("a dismiss press ended at %q, want the run's progress page", loc)
		}
	}
	if got := e.api.EffectsAt("/v1/refine"); got != 1 {
		t.Errorf("the model was paid %d times for one refinement, want 1", got)
	}
	refined, err := LoadIdea(t.Context(), e.db, ideas[0].ID)
	if err != nil || refined.Revision != 1 || refined.Status != "refined" {
		t.Errorf("refined idea %+v (%v), want revision 1, refined", refined, err)
	}
	if dismissed, _ := LoadIdea(t.Context(), e.db, ideas[1].ID); dismissed.Status != "dismissed" {
		t.Errorf("dismissed idea is %q", dismissed.Status)
	}

	// The same revision with another note: refused, not answered with the first refinement.
	if status, _ := e.post(refine, url.Values{"revision": {"0"}, "note": {"aim at florists"}}); status != http.StatusConflict {
		t.Errorf("refine revision 0 again with another note: %d, want 409", status)
	}
	// The next revision is a new refinement.
	if status, _ := e.post(refine, url.Values{"revision": {"1"}, "note": {"aim at florists"}}); status != http.StatusSeeOther {
		t.Errorf("refine revision 1: %d, want 303", status)
	}
	// A dismissed idea is not refined, and nothing is paid for trying.
	if status, _ := e.post(dismiss[:len(dismiss)-len("dismiss")]+"refine", form); status != http.StatusConflict {
		t.Errorf("refine a dismissed idea: %d, want 409", status)
	}

	if got := e.runs(); got != 1 {
		t.Errorf("%d runs after refining and dismissing, want 1", got)
	}
	if got := e.jobs(); got != 1 {
		t.Errorf("%d jobs after refining and dismissing, want 1", got)
	}
	if u := e.usage(); u != usage {
		t.Errorf("allowance %+v after refining and dismissing, want %+v", u, usage)
	}
	if got, want := e.api.Effects(), paid+2; got != want {
		t.Errorf("%d effects in all, want %d (the two refinements)", got, want)
	}
	if got := e.api.EffectsAt("/v1/research") + e.api.EffectsAt("/v1/ideas"); got != 2 {
		t.Errorf("%d research and ideation effects, want the run's 2", got)
	}
}
