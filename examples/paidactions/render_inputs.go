package paidactions

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	once "github.com/oncekit/once/runtime"
)

// Errors of render-input snapshots, tested with errors.Is.
var (
	// ErrNoSnapshot: the job has no render inputs of the version asked for.
	ErrNoSnapshot = errors.New("no such render inputs")
	// ErrNoVoiceLock: the snapshot has no voice model; a paid action will not guess one.
	ErrNoVoiceLock = errors.New("no locked voice model")
	// ErrNoProductLock: the snapshot has no product identity lock; a paid action will not
	// let the generator drift to a look-alike product.
	ErrNoProductLock = errors.New("no product identity lock")
)

// RenderInputs is what a paid action renders with: the creative intent that must survive a
// regenerate, a retry and a resume.
type RenderInputs struct {
	// VoiceModelID keeps the voice the same across candidates.
	VoiceModelID string `json:"voice_model_id"`
	// ProductLock pins the product the video shows; nil for a draft without one.
	ProductLock *ProductLock `json:"product_identity_lock,omitempty"`
	// Prompt is the standing instruction of the job.
	Prompt PromptContract `json:"prompt"`
}

// ProductLock is a product identity lock: the product and the reference images the
// generator must match.
type ProductLock struct {
	ProductID         string   `json:"product_id"`
	ReferenceImageIDs []string `json:"reference_image_ids"`
	// LockedAt is when the lock was saved (the database's clock); set by SaveRenderInputs.
	LockedAt time.Time `json:"locked_at"`
}

// PromptContract is the job's standing instruction.
type PromptContract struct {
	Instruction    string `json:"instruction"`
	NegativePrompt string `json:"negative_prompt,omitempty"`
}

// Snapshot is one saved version of a job's render inputs. Snapshots are never changed:
// saving new inputs makes a new version.
type Snapshot struct {
	JobID   int64 `json:"job_id"`
	Version int   `json:"version"`
	RenderInputs
}

// SaveRenderInputs stores in as the job's next render-inputs version and returns it. The
// version is decided from a read (the highest so far), so concurrent saves for one job take
// turns under a transaction lock, and each gets its own version.
//
//once:transaction key=jobID timeout=5s
func SaveRenderInputs(ctx context.Context, tx pgx.Tx, jobID int64, in RenderInputs) (int, error) {
	var product *string
	refs := []string{}
	if in.ProductLock != nil {
		product = &in.ProductLock.ProductID
		refs = append(refs, in.ProductLock.ReferenceImageIDs...)
	}
	var voice *string
	if in.VoiceModelID != "" {
		voice = &in.VoiceModelID
	}
	var version int
	err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) + 1 FROM render_inputs WHERE job_id = $1`, jobID).Scan(&version)
	if err != nil {
		return 0, fmt.Errorf("reading render inputs of job %d: %w", jobID, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO render_inputs
	(job_id, version, voice_model_id, product_id, reference_image_ids, locked_at, instruction, negative_prompt)
VALUES ($1, $2, $3, $4, $5, CASE WHEN $4::text IS NULL THEN NULL ELSE now() END, $6, $7)`,
		jobID, version, voice, product, refs, in.Prompt.Instruction, in.Prompt.NegativePrompt)
	if err != nil {
		return 0, fmt.Errorf("saving render inputs v%d of job %d: %w", version, jobID, err)
	}
	return version, nil
}

// checkRenderInputs refuses inputs that cannot be saved: a product lock without a product.
func checkRenderInputs(in RenderInputs) error {
	if in.ProductLock != nil && strings.TrimSpace(in.ProductLock.ProductID) == "" {
		return errors.New("product_identity_lock needs product_id (omit the lock for a draft without one)")
	}
	return nil
}

// LoadSnapshot reads version of the job's render inputs, or an error wrapping
// ErrNoSnapshot.
func LoadSnapshot(ctx context.Context, db once.DB, jobID int64, version int) (Snapshot, error) {
	s := Snapshot{JobID: jobID, Version: version}
	var voice, product *string
	var refs []string
	var lockedAt *time.Time
	err := db.QueryRow(ctx, `SELECT voice_model_id, product_id, reference_image_ids, locked_at, instruction, negative_prompt
FROM render_inputs WHERE job_id = $1 AND version = $2`, jobID, version).
		Scan(&voice, &product, &refs, &lockedAt, &s.Prompt.Instruction, &s.Prompt.NegativePrompt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Snapshot{}, fmt.Errorf("job %d: %w v%d", jobID, ErrNoSnapshot, version)
	}
	if err != nil {
		return Snapshot{}, fmt.Errorf("loading render inputs v%d of job %d: %w", version, jobID, err)
	}
	if voice != nil {
		s.VoiceModelID = *voice
	}
	if product != nil {
		s.ProductLock = &ProductLock{ProductID: *product, ReferenceImageIDs: refs}
		if lockedAt != nil {
			s.ProductLock.LockedAt = lockedAt.UTC()
		}
	}
	return s, nil
}

// Hydrate returns the render inputs a paid action runs with, from its snapshot, refusing a
// snapshot that lost the voice or the product lock: rendering with a default voice or an
// unlocked product would spend money on something the user did not ask for.
func Hydrate(s Snapshot, action Kind) (RenderInputs, error) {
	if s.VoiceModelID == "" {
		return RenderInputs{}, fmt.Errorf("cannot %s job %d with render inputs v%d: %w", action, s.JobID, s.Version, ErrNoVoiceLock)
	}
	if s.ProductLock == nil || s.ProductLock.ProductID == "" {
		return RenderInputs{}, fmt.Errorf("cannot %s job %d with render inputs v%d: %w", action, s.JobID, s.Version, ErrNoProductLock)
	}
	return s.RenderInputs, nil
}
