// Package notices emails users; the crons of another package decide when.
package notices

import (
	"strings"
	"time"

	"github.com/resend/resend-go/v2"

	"shop/tasklock"
)

type Notices struct {
	Mail  *resend.Client
	Locks *tasklock.Locker
}

// Referral is called only by a cron after its lease was taken (crons.RewardReferrals):
// no finding here.
func (n *Notices) Referral(to string) error {
	_, err := n.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{strings.ToLower(to)}, Subject: "You earned storage"})
	return err
}

// Upgrade is called by a cron that ignores its lease's outcome (crons.NudgeUpgrades).
func (n *Notices) Upgrade(to string) error {
	_, err := n.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{strings.ToLower(to)}, Subject: "Upgrade"}) // want `call to \(\*resend.Client\).Emails.Send has no //once: promise`
	return err
}

// Collected mutes itself for ten minutes per user with a lease of its own.
func (n *Notices) Collected(to string) error {
	if !n.Locks.TryLock("collected_"+to, 10*time.Minute) {
		return nil
	}
	_, err := n.Mail.Emails.Send(&resend.SendEmailRequest{To: []string{to}, Subject: "Files collected"})
	return err
}
