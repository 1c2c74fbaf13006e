package bad

import "context"

type User struct {
	ID    int64
	Score float64
}

//once:forever key=u.ID
type Mailer interface{ Send() error }
