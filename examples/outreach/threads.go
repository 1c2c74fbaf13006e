package outreach

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// Thread is a conversation between a brand's campaign and a creator.
type Thread struct {
	ID         int64  `json:"id"`
	CampaignID int64  `json:"campaign_id"`
	CreatorID  int64  `json:"creator_id"`
	Token      string `json:"token"`
	// Started says this call opened it; false means it already existed and nothing was
	// spent.
	Started bool `json:"started"`
}

// NewThread is a conversation about to be inserted.
type NewThread struct {
	CampaignID, CreatorID, UserID int64
	Token                         string
	CreatedAt                     time.Time
}

var (
	// ErrLimitReached: the user has opened all the conversations their plan allows this
	// month.
	ErrLimitReached = errors.New("outreach: this month's conversations are used up")
	// ErrNotFound: the campaign, creator or link does not exist (or is not the user's).
	ErrNotFound = errors.New("outreach: not found")
)

// StartThread opens a conversation with a creator for one of the user's campaigns and
// queues its first email, spending one of the month's conversations. Spending is a
// decision made from a read (count this month's conversations, compare with the plan),
// so it runs under a lock per user: two requests of one user cannot both count four of
// five and both open a fifth. The lock is named for the allowance, not the function, so
// anything else that spends it takes the same lock.
//
//once:transaction key=user.ID name=outreach.allowance
func (a *App) StartThread(ctx context.Context, tx pgx.Tx, user User, campaignID, creatorID int64) (Thread, error) {
	var ok bool
	err := tx.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM campaigns WHERE id = $1 AND user_id = $2)
		   AND EXISTS (SELECT 1 FROM creators WHERE id = $3)`, campaignID, user.ID, creatorID).Scan(&ok)
	if err != nil {
		return Thread{}, fmt.Errorf("checking the campaign and creator: %w", err)
	}
	if !ok {
		return Thread{}, ErrNotFound
	}
	token := newToken()
	now := a.now()
	// The insert is the check for "one conversation per creator per campaign"; a second
	// start of the same conversation spends nothing.
	id, out, err := InsertThreadOnce(ctx, tx, NewThread{CampaignID: campaignID, CreatorID: creatorID, UserID: user.ID, Token: token, CreatedAt: now})
	if err != nil {
		return Thread{}, err
	}
	if out.Status == once.Duplicate {
		t := Thread{CampaignID: campaignID, CreatorID: creatorID}
		err := tx.QueryRow(ctx, `SELECT id, token FROM outreach_threads WHERE campaign_id = $1 AND creator_id = $2`,
			campaignID, creatorID).Scan(&t.ID, &t.Token)
		if err != nil {
			return Thread{}, fmt.Errorf("reading the existing conversation: %w", err)
		}
		return t, nil
	}
	// Counted after the insert, under the lock: the new conversation is in the count, and no
	// other spender of this user's allowance is between the count and the commit.
	var used int
	var plan string
	err = tx.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM outreach_threads WHERE user_id = $1 AND created_at >= $2),
		       coalesce((SELECT plan FROM subscriptions WHERE user_id = $1), 'free')`,
		user.ID, monthStart(now)).Scan(&used, &plan)
	if err != nil {
		return Thread{}, fmt.Errorf("counting this month's conversations: %w", err)
	}
	if used > Allowance(plan) {
		return Thread{}, ErrLimitReached // rolls the insert back
	}
	if _, _, err := EnqueueJobOnce(ctx, tx, Job{Kind: JobSendOutreach, DedupeKey: "outreach:" + strconv.FormatInt(id, 10), Payload: jobRef{ID: id}, RunAfter: now}); err != nil {
		return Thread{}, err
	}
	// A conversation could be opened, so a "limit reached" episode, if any, is over.
	if _, err := a.RearmNotifyLimitReached(ctx, tx, user); err != nil {
		return Thread{}, err
	}
	return Thread{ID: id, CampaignID: campaignID, CreatorID: creatorID, Token: token, Started: true}, nil
}

// InsertThread inserts a conversation unless the creator already has one for the
// campaign. The unique index is the guarantee; the insert is the check.
//
//once:forever table=outreach_threads columns=campaign_id,creator_id
func InsertThread(ctx context.Context, tx pgx.Tx, t NewThread) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO outreach_threads (campaign_id, creator_id, user_id, token, created_at)
		VALUES ($1, $2, $3, $4, $5) `+InsertThreadConflict+` RETURNING id`,
		t.CampaignID, t.CreatorID, t.UserID, t.Token, t.CreatedAt).Scan(&id)
	return id, once.InsertConflict(err)
}

// NotifyLimitReached tells the user their plan's conversations for the month are used up.
// It is an episode: the first refused start tells them, the forty after it do not, and
// the first start that works again (a new month, a bigger plan) rearms it.
//
//once:episode key=user.ID
func (a *App) NotifyLimitReached(ctx context.Context, user User) error {
	_, err := a.mail.send(ctx, Email{
		To:      user.Email,
		Subject: "You have opened all of this month's conversations",
		Text:    fmt.Sprintf("Your %s plan opens %d conversations a month. Upgrade to open more now.", user.Plan, Allowance(user.Plan)),
		Tag:     "limit",
	})
	return err
}

// ThreadPage is what a creator's link shows.
type ThreadPage struct {
	Campaign, Pitch, Creator string
	Unsubscribed             bool
}

// threadByToken reads the conversation a link names; ok is false for a token that names
// none.
func (a *App) threadByToken(ctx context.Context, token string) (p ThreadPage, ok bool, err error) {
	err = a.db.QueryRow(ctx, `
		SELECT c.name, c.pitch, cr.name,
		       EXISTS (SELECT 1 FROM suppressions s WHERE s.address_hash = encode(sha256(lower(cr.email)::bytea), 'hex'))
		FROM outreach_threads t
		JOIN campaigns c ON c.id = t.campaign_id
		JOIN creators cr ON cr.id = t.creator_id
		WHERE t.token = $1`, token).Scan(&p.Campaign, &p.Pitch, &p.Creator, &p.Unsubscribed)
	if errors.Is(err, pgx.ErrNoRows) {
		return ThreadPage{}, false, nil
	}
	if err != nil {
		return ThreadPage{}, false, fmt.Errorf("reading the conversation of a link: %w", err)
	}
	return p, true, nil
}

// newToken returns a conversation's link token: 16 random base32 characters (80 bits), so
// a link cannot be guessed from another. It names a row and is stored before it is used;
// it is never an idempotency key.
func newToken() string {
	return strings.ToLower(rand.Text()[:16])
}
