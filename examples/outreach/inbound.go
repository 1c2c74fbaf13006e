package outreach

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
)

// Inbound is a message the email provider delivered to one of the app's reply addresses.
// The provider delivers at least once: the same message can arrive again, at any time.
type Inbound struct {
	MessageID  string `json:"message_id"`
	To         string `json:"to"`
	From       string `json:"from"`
	Text       string `json:"text"`
	ReceivedAt time.Time
}

// token returns the conversation token of the reply address the message was sent to.
func (in Inbound) token() string {
	local, domain, ok := strings.Cut(in.To, "@")
	if !ok || !strings.EqualFold(domain, replyDomain) {
		return ""
	}
	return strings.TrimPrefix(local, "reply+")
}

// RecordInbound records a delivered message, once per provider message id, and queues the
// brand's notification in the same transaction, so the notification exists exactly when
// the message was recorded. A redelivery's insert finds the row and does nothing: the
// insert is the check.
//
//once:forever table=inbound_emails columns=provider_message_id
func RecordInbound(ctx context.Context, tx pgx.Tx, in Inbound) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO inbound_emails (provider_message_id, thread_id, sender, body, received_at)
		VALUES ($1, (SELECT id FROM outreach_threads WHERE token = $2), $3, $4, $5) `+RecordInboundConflict+` RETURNING id`,
		in.MessageID, in.token(), in.From, in.Text, in.ReceivedAt).Scan(&id)
	if err != nil {
		return 0, once.InsertConflict(err)
	}
	_, _, err = EnqueueJobOnce(ctx, tx, Job{Kind: JobNotifyReply, DedupeKey: "reply:" + strconv.FormatInt(id, 10), Payload: jobRef{ID: id}, RunAfter: in.ReceivedAt})
	return id, err
}
