// Package crons runs daily jobs that email users, each behind a hand-written latch: a
// lease row, a try-lock, a claim by a conditional UPDATE, a token consumed by DELETE. The
// twins whose latch decides nothing (its result ignored, an UPDATE a repeat passes
// again) are reported.
package crons

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/resend/resend-go/v2"

	"shop/notices"
	"shop/tasklock"
)

type Crons struct {
	DB      *sql.DB
	Mail    *resend.Client
	Locks   *tasklock.Locker
	Notices *notices.Notices
}

// SayHello runs under the lease; the history check and insert inside it have no second
// run to race.
func (c *Crons) SayHello(ctx context.Context) {
	if !c.Locks.TryLock("hello", 24*time.Hour) {
		return
	}
	rows, err := c.DB.QueryContext(ctx, `SELECT id, email FROM users WHERE upgraded_at < now() - interval '7 days'`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var email string
		if rows.Scan(&id, &email) != nil {
			return
		}
		var sent int
		if c.DB.QueryRowContext(ctx, `SELECT count(*) FROM history WHERE user_id = $1 AND template = 'hello'`, id).Scan(&sent) != nil || sent > 0 {
			continue
		}
		if send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Hello"})) != nil {
			continue
		}
		c.DB.ExecContext(ctx, `INSERT INTO history (user_id, template) VALUES ($1, 'hello')`, id)
	}
}

// SayHelloAnyway takes the lease but ignores whether it got it: two instances both run.
func (c *Crons) SayHelloAnyway(ctx context.Context, id int64, email string) {
	c.Locks.TryLock("hello", 24*time.Hour)
	var sent int
	if c.DB.QueryRowContext(ctx, `SELECT count(*) FROM history WHERE user_id = $1 AND template = 'hello'`, id).Scan(&sent) != nil || sent > 0 {
		return
	}
	send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Hello"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
	c.DB.ExecContext(ctx, `INSERT INTO history (user_id, template) VALUES ($1, 'hello')`, id) // want `insert into history is decided by a read of history with no lock`
}

// SayHelloStamped branches on a "lock" whose statement refuses nothing.
func (c *Crons) SayHelloStamped(email string) {
	if !c.Locks.TryStamp("hello", 24*time.Hour) {
		return
	}
	send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Hello"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
}

// RewardReferrals runs under the lease and emails through another package's notice.
func (c *Crons) RewardReferrals(to string) {
	ok := c.Locks.TryLock("referrals", 10*time.Minute)
	if !ok {
		return
	}
	c.Notices.Referral(to)
}

// NudgeUpgrades drops the lease's outcome.
func (c *Crons) NudgeUpgrades(to string) {
	c.Locks.TryLock("nudges", 10*time.Minute)
	c.Notices.Upgrade(to)
}

// ClaimCoupon claims a coupon with an UPDATE from its unclaimed state: a repeat claims
// nothing and sends nothing.
func (c *Crons) ClaimCoupon(ctx context.Context, user int64, code, email string) error {
	res, err := c.DB.ExecContext(ctx, `UPDATE coupons SET claimed_by = $1 WHERE code = $2 AND claimed_by IS NULL`, user, code)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Your coupon " + code}))
}

// Cancel sets the flag whatever it was: the row count is 1 on a repeat too.
func (c *Crons) Cancel(ctx context.Context, user int64, email string) error {
	res, err := c.DB.ExecContext(ctx, `UPDATE subscriptions SET is_cancelled = true WHERE user_id = $1`, user)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Cancelled"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
}

// Accept moves a contact to the state given, from the states the caller allows: the
// statement cannot tell whether the new state is among them (a repeat may pass).
func (c *Crons) Accept(ctx context.Context, id int64, state string, from []string, email string) error {
	res, err := c.DB.ExecContext(ctx, `UPDATE contacts SET state = $1 WHERE id = $2 AND state = ANY($3)`, id, state, from)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Contact added"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
}

// consume deletes a one-time token and says whether it was there.
func (c *Crons) consume(ctx context.Context, token string) error {
	res, err := c.DB.ExecContext(ctx, `DELETE FROM tokens WHERE token = $1`, token)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return sql.ErrNoRows
	}
	return nil
}

// ChangeEmail consumes the token first: a second submit finds it gone.
func (c *Crons) ChangeEmail(ctx context.Context, token, email string) error {
	if err := c.consume(ctx, token); err != nil {
		return err
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Your email changed"}))
}

// Digest takes a session advisory try-lock and sends only when it got it.
func (c *Crons) Digest(ctx context.Context, email string) error {
	var got bool
	if err := c.DB.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(42)`).Scan(&got); err != nil {
		return err
	}
	if !got {
		return nil
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Digest"}))
}

// DigestAnyway takes the try-lock and sends whatever it says.
func (c *Crons) DigestAnyway(ctx context.Context, email string) error {
	var got bool
	if err := c.DB.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(42)`).Scan(&got); err != nil {
		return err
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Digest"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
}

// Welcome records the welcome with INSERT .. ON CONFLICT DO NOTHING RETURNING: no row
// comes back on a repeat, and nothing is sent.
func (c *Crons) Welcome(ctx context.Context, user int64, email string) error {
	var id int64
	err := c.DB.QueryRowContext(ctx, `INSERT INTO welcomes (user_id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id`, user).Scan(&id)
	if err != nil {
		return err
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Welcome"}))
}

// send drops the provider's reply.
func send(_ *resend.SendEmailResponse, err error) error { return err }

// AlertDaily records the alert under today's date: the row is named by the clock, so the
// same outage alerts again tomorrow. A window, not a latch.
func (c *Crons) AlertDaily(ctx context.Context, provider, email string) error {
	today := time.Now().Format(time.DateOnly)
	var id int64
	err := c.DB.QueryRowContext(ctx, `INSERT INTO alert_days (provider, day) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING provider`, provider, today).Scan(&id)
	if err != nil {
		return err
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: provider + " is down"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
}

// Remind claims each reminder in the loop and skips the ones another run claimed.
func (c *Crons) Remind(ctx context.Context, ids []int64, email string) {
	for _, id := range ids {
		res, err := c.DB.ExecContext(ctx, `UPDATE reminders SET sent_at = now() WHERE id = $1 AND sent_at IS NULL`, id)
		if err != nil {
			continue
		}
		if n, _ := res.RowsAffected(); n == 0 {
			continue
		}
		send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Reminder"}))
	}
}

// Renew sends inside the branch that got the lease.
func (c *Crons) Renew(email string) {
	if c.Locks.TryLock("renewals", time.Hour) {
		send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Renewal"}))
	}
}

// RenewOnError checks only the lease's error: not getting it goes unnoticed.
func (c *Crons) RenewOnError(email string) error {
	_, err := c.Locks.Repo.AcquireLock("renewals", time.Now().Add(time.Hour).UnixMicro(), time.Now().UnixMicro())
	if err != nil {
		return err
	}
	return send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Renewal"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
}

// RemindEach hands the users to fanOut under the lease. fanOut gives each to a worker of a
// wait group: the workers run as part of fanOut, so remindOne is fanOut's callee, and
// covered with it by the lease.
func (c *Crons) RemindEach(ctx context.Context, emails []string) {
	if !c.Locks.TryLock("remind", 24*time.Hour) {
		return
	}
	c.fanOut(emails)
}

func (c *Crons) fanOut(emails []string) {
	var wg sync.WaitGroup
	for _, email := range emails {
		wg.Go(func() { c.remindOne(email) })
	}
	wg.Wait()
}

func (c *Crons) remindOne(email string) {
	send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Reminder"}))
}

// RemindAnyway fans out the same way with no lease: reported at the worker's callee.
func (c *Crons) RemindAnyway(ctx context.Context, emails []string) {
	var wg sync.WaitGroup
	for _, email := range emails {
		wg.Go(func() { c.remindAgain(email) })
	}
	wg.Wait()
}

func (c *Crons) remindAgain(email string) {
	send(c.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{email}, Subject: "Reminder"})) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
}
