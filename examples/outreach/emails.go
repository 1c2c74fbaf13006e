package outreach

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// replyDomain is the domain of conversations' reply addresses: reply+TOKEN@replyDomain.
const replyDomain = "replies.outreach.test"

// mailbox is a conversation's own reply address.
func mailbox(token string) string { return "reply+" + token + "@" + replyDomain }

// OutreachMessage is the first email of a conversation.
type OutreachMessage struct {
	ThreadID                            int64
	To, Creator, Brand, Campaign, Pitch string
	Token                               string
}

// SendOutreach emails a creator the campaign's pitch. Its promise is kept by the email
// provider: the key is derived from the conversation's row, so a job that runs again after
// the email left but before it was recorded (a lost answer, a killed worker) sends the same
// key, and the provider sends one email.
//
//once:provider key=m.ThreadID prefix=outreach ttl=24h
func (a *App) SendOutreach(ctx context.Context, m OutreachMessage) (string, error) {
	return a.mail.send(ctx, Email{
		To:      m.To,
		ReplyTo: mailbox(m.Token),
		Subject: m.Brand + ": " + m.Campaign,
		Text:    fmt.Sprintf("Hi %s,\n\n%s\n\nReply to this email, or read more at %s/o/%s", m.Creator, m.Pitch, a.cfg.PublicURL, m.Token),
		Tag:     "outreach",
	})
}

// sendOutreach is the send_outreach job: the conversation's first email, unless it went
// out already or the creator asked not to be written to.
func (a *App) sendOutreach(ctx context.Context, threadID int64) error {
	m := OutreachMessage{ThreadID: threadID}
	var suppressed, sent bool
	err := a.db.QueryRow(ctx, `
		SELECT cr.email, cr.name, u.name, c.name, c.pitch, t.token,
		       EXISTS (SELECT 1 FROM suppressions s WHERE s.address_hash = encode(sha256(lower(cr.email)::bytea), 'hex')),
		       EXISTS (SELECT 1 FROM outreach_emails e WHERE e.thread_id = t.id)
		FROM outreach_threads t
		JOIN campaigns c ON c.id = t.campaign_id
		JOIN creators cr ON cr.id = t.creator_id
		JOIN users u ON u.id = t.user_id
		WHERE t.id = $1`, threadID).Scan(&m.To, &m.Creator, &m.Brand, &m.Campaign, &m.Pitch, &m.Token, &suppressed, &sent)
	if errors.Is(err, pgx.ErrNoRows) {
		return &permanentError{fmt.Errorf("conversation %d: %w", threadID, ErrNotFound)}
	}
	if err != nil {
		return fmt.Errorf("reading conversation %d: %w", threadID, err)
	}
	if sent || suppressed {
		return nil
	}
	id, _, err := a.SendOutreachOnce(ctx, m)
	if err != nil {
		return err
	}
	_, err = a.db.Exec(ctx, `INSERT INTO outreach_emails (thread_id, provider_id, sent_at) VALUES ($1, $2, $3)
		ON CONFLICT (thread_id) DO NOTHING`, threadID, id, a.now())
	if err != nil {
		return fmt.Errorf("recording conversation %d's email: %w", threadID, err)
	}
	return nil
}

// ReplyNotice tells a brand that a creator answered.
type ReplyNotice struct {
	InboundID                   int64
	To, Creator, Campaign, Text string
}

// NotifyReply emails the brand a creator's answer. The key is derived from the inbound
// message's row: however many times the job runs, the brand gets one email per answer.
//
//once:provider key=n.InboundID prefix=answer ttl=24h
func (a *App) NotifyReply(ctx context.Context, n ReplyNotice) error {
	_, err := a.mail.send(ctx, Email{
		To:      n.To,
		Subject: n.Creator + " answered about " + n.Campaign,
		Text:    n.Text,
		Tag:     "reply",
	})
	return err
}

// notifyReply is the notify_reply job.
func (a *App) notifyReply(ctx context.Context, inboundID int64) error {
	n := ReplyNotice{InboundID: inboundID}
	err := a.db.QueryRow(ctx, `
		SELECT u.email, cr.name, c.name, i.body
		FROM inbound_emails i
		JOIN outreach_threads t ON t.id = i.thread_id
		JOIN campaigns c ON c.id = t.campaign_id
		JOIN creators cr ON cr.id = t.creator_id
		JOIN users u ON u.id = t.user_id
		WHERE i.id = $1`, inboundID).Scan(&n.To, &n.Creator, &n.Campaign, &n.Text)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil // a message to an address that is no conversation's: nobody to tell
	}
	if err != nil {
		return fmt.Errorf("reading inbound message %d: %w", inboundID, err)
	}
	_, err = a.NotifyReplyOnce(ctx, n)
	return err
}
