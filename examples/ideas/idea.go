package ideas

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// Idea is one idea a run produced.
type Idea struct {
	ID       int64  `json:"id"`
	RunID    int64  `json:"run_id"`
	Position int    `json:"position"`
	Title    string `json:"title"`
	// Status is "new", "refined" or "dismissed".
	Status string `json:"status"`
	// Revision counts the refinements: a refinement is asked for a revision, and makes the
	// next one.
	Revision int `json:"revision"`
}

// ErrNoIdea: no idea has that id.
var ErrNoIdea = errors.New("ideas: no such idea")

// ErrNotRefinable: the idea was dismissed, or is no longer at the revision the refinement
// was asked for (another refinement came first). Nothing was paid for.
var ErrNotRefinable = errors.New("ideas: idea cannot be refined as asked")

const ideaColumns = `id, run_id, position, title, status, revision`

func scanIdea(row pgx.Row) (Idea, error) {
	var i Idea
	err := row.Scan(&i.ID, &i.RunID, &i.Position, &i.Title, &i.Status, &i.Revision)
	return i, err
}

// LoadIdea reads one idea.
func LoadIdea(ctx context.Context, db once.DB, id int64) (Idea, error) {
	i, err := scanIdea(db.QueryRow(ctx, `SELECT `+ideaColumns+` FROM ideas WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return Idea{}, fmt.Errorf("idea %d: %w", id, ErrNoIdea)
	}
	if err != nil {
		return Idea{}, fmt.Errorf("reading idea %d: %w", id, err)
	}
	return i, nil
}

func runIdeas(ctx context.Context, db once.DB, run int64) ([]Idea, error) {
	rows, err := db.Query(ctx, `SELECT `+ideaColumns+` FROM ideas WHERE run_id = $1 ORDER BY position`, run)
	if err != nil {
		return nil, fmt.Errorf("reading the ideas of run %d: %w", run, err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Idea, error) { return scanIdea(row) })
	if err != nil {
		return nil, fmt.Errorf("reading the ideas of run %d: %w", run, err)
	}
	return list, nil
}

// Refine rewrites an idea along the organisation's note, paying the model once per revision:
// a double click, or a second tab that saw the same revision, gets the first refinement's
// result. The same revision refined with a different note is refused (once.ErrMismatch)
// rather than answered with a refinement of something else. Refining never creates a run,
// so it never touches the allowance.
//
//once:forever key=idea,revision fingerprint=note
func (a *App) Refine(ctx context.Context, idea int64, revision int, note string) (Idea, error) {
	cur, err := LoadIdea(ctx, a.db, idea)
	if err != nil {
		return Idea{}, err
	}
	if cur.Status == "dismissed" || cur.Revision != revision {
		// Not a terminal failure: the key (idea, revision) stays free, so a form showing a
		// revision the idea has not reached yet does not spoil that revision for ever.
		return Idea{}, fmt.Errorf("idea %d is %s at revision %d, refinement asked for revision %d: %w",
			idea, cur.Status, cur.Revision, revision, ErrNotRefinable)
	}
	// Every attempt at this refinement sends the same key, so a retry after a lost answer
	// is not billed again.
	attempt, ok := once.AttemptFrom(ctx)
	if !ok {
		return Idea{}, fmt.Errorf("refining idea %d: not run under its forever promise", idea)
	}
	title, err := a.model.refine(once.WithProviderKey(ctx, attempt.ProviderKey("refine")), cur, note)
	if err != nil {
		return Idea{}, fmt.Errorf("refining idea %d: %w", idea, err)
	}
	out, err := scanIdea(a.db.QueryRow(ctx, `UPDATE ideas SET title = $3, status = 'refined', revision = revision + 1
		WHERE id = $1 AND revision = $2 AND status <> 'dismissed' RETURNING `+ideaColumns, idea, revision, title))
	if errors.Is(err, pgx.ErrNoRows) {
		return Idea{}, fmt.Errorf("idea %d was dismissed while it was refined: %w", idea, ErrNotRefinable)
	}
	if err != nil {
		return Idea{}, fmt.Errorf("saving the refinement of idea %d: %w", idea, err)
	}
	return out, nil
}

// Dismiss sets an idea aside. It is free and idempotent by construction (a second dismissal
// changes nothing), and like refining it never creates a run.
func Dismiss(ctx context.Context, db once.DB, idea int64) (Idea, error) {
	i, err := scanIdea(db.QueryRow(ctx, `UPDATE ideas SET status = 'dismissed' WHERE id = $1 RETURNING `+ideaColumns, idea))
	if errors.Is(err, pgx.ErrNoRows) {
		return Idea{}, fmt.Errorf("idea %d: %w", idea, ErrNoIdea)
	}
	if err != nil {
		return Idea{}, fmt.Errorf("dismissing idea %d: %w", idea, err)
	}
	return i, nil
}
