package once

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// BehindPooler reports whether conn reaches its server through a pooler that hides the
// server's process id, as the clean-up of an unseen claim judges it.
func BehindPooler(ctx context.Context, conn *pgx.Conn) (bool, error) { return behindPooler(ctx, conn) }
