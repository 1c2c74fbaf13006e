// Package locks enrolls students in courses: a check-then-insert serialised by a lock,
// a promise, or the callers' locks, and the same without.
package locks

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
)

var ErrEnrolled = errors.New("enrolled")

const (
	find   = `SELECT count(*) FROM enrollments WHERE course_id = $1 AND student_id = $2`
	insert = `INSERT INTO enrollments (course_id, student_id) VALUES ($1, $2)`
)

// EnrollAdvisory takes a transaction's advisory lock on the course first.
func EnrollAdvisory(ctx context.Context, tx pgx.Tx, course, student int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, course); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, insert, course, student)
	return err
}

// EnrollUnderCourse locks the course's row, a parent of the rows checked.
func EnrollUnderCourse(ctx context.Context, tx pgx.Tx, course, student int64) error {
	var id int64
	if err := tx.QueryRow(ctx, `SELECT id FROM courses WHERE id = $1 FOR UPDATE`, course).Scan(&id); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, insert, course, student)
	return err
}

// EnrollLockingItself locks the enrollments it finds: none, when there is none to find,
// and two calls both insert.
func EnrollLockingItself(ctx context.Context, tx pgx.Tx, course, student int64) error {
	rows, err := tx.Query(ctx, `SELECT id FROM enrollments WHERE course_id = $1 AND student_id = $2 FOR UPDATE`, course, student)
	if err != nil {
		return err
	}
	defer rows.Close()
	if rows.Next() {
		return ErrEnrolled
	}
	_, err = tx.Exec(ctx, insert, course, student) // want `insert into enrollments is decided by a read of enrollments`
	return err
}

// EnrollSerializable runs in a serializable transaction.
func EnrollSerializable(ctx context.Context, db *pgxpool.Pool, course, student int64) error {
	tx, err := db.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return err
	}
	var n int
	if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err = tx.Exec(ctx, insert, course, student)
	return err
}

// EnrollPromised declares the transaction promise the decision needs.
//
//once:transaction key=course
func EnrollPromised(ctx context.Context, tx pgx.Tx, course, student int64) error {
	var n int
	if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, insert, course, student)
	return err
}

// EnrollGuarded runs the check and insert under a runtime guard.
func EnrollGuarded(ctx context.Context, db *pgxpool.Pool, course, student int64) error {
	_, _, err := once.Forever[int]{Name: "enroll"}.Do(ctx, db, once.MustKey(course, student), func(ctx context.Context) (int, error) {
		var n int
		if err := db.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
			return 0, err
		}
		_, err := db.Exec(ctx, insert, course, student)
		return 1, err
	})
	return err
}

// EnrollLatched takes a try-lock and goes on only when it got it.
func EnrollLatched(ctx context.Context, db *pgxpool.Pool, course, student int64) error {
	var got bool
	if err := db.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, course).Scan(&got); err != nil || !got {
		return err
	}
	var n int
	if err := db.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := db.Exec(ctx, insert, course, student)
	return err
}

// enroll checks and inserts through the transaction it is given. Every caller locks the
// course's row in that transaction first.
func enroll(ctx context.Context, tx pgx.Tx, course, student int64) error {
	var n int
	if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, insert, course, student)
	return err
}

func lockCourse(ctx context.Context, tx pgx.Tx, course int64) error {
	_, err := tx.Exec(ctx, `SELECT id FROM courses WHERE id = $1 FOR UPDATE`, course)
	return err
}

// EnrollMany locks the course through a helper, then enrolls each student.
func EnrollMany(ctx context.Context, tx pgx.Tx, course int64, students []int64) error {
	if err := lockCourse(ctx, tx, course); err != nil {
		return err
	}
	for _, s := range students {
		if err := enroll(ctx, tx, course, s); err != nil {
			return err
		}
	}
	return nil
}

// EnrollOne locks the course in SQL, then enrolls.
func EnrollOne(ctx context.Context, tx pgx.Tx, course, student int64) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, course); err != nil {
		return err
	}
	return enroll(ctx, tx, course, student)
}

// enrollLoose checks and inserts too, but one of its callers takes no lock.
func enrollLoose(ctx context.Context, tx pgx.Tx, course, student int64) error {
	var n int
	if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, insert, course, student) // want `insert into enrollments is decided by a read of enrollments`
	return err
}

func EnrollLocked(ctx context.Context, tx pgx.Tx, course, student int64) error {
	if err := lockCourse(ctx, tx, course); err != nil {
		return err
	}
	return enrollLoose(ctx, tx, course, student)
}

func EnrollUnlocked(ctx context.Context, tx pgx.Tx, course, student int64) error {
	return enrollLoose(ctx, tx, course, student)
}

// EnrollOtherTx locks the course in one transaction and enrolls in another: the lock
// holds in its own transaction only.
func EnrollOtherTx(ctx context.Context, lockTx, tx pgx.Tx, course, student int64) error {
	if err := lockCourse(ctx, lockTx, course); err != nil {
		return err
	}
	return enrollElsewhere(ctx, tx, course, student)
}

func enrollElsewhere(ctx context.Context, tx pgx.Tx, course, student int64) error {
	var n int
	if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
		return err
	}
	_, err := tx.Exec(ctx, insert, course, student) // want `insert into enrollments is decided by a read of enrollments`
	return err
}

// EnrollInTable runs the check and insert inside a Table guard's transaction: its promise is
// the caller's own table, so what the function reads and writes elsewhere is still judged.
func EnrollInTable(ctx context.Context, db *pgxpool.Pool, course, student int64) error {
	_, err := once.Table{Name: "seats"}.Do(ctx, db, func(ctx context.Context, tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, find, course, student).Scan(&n); err != nil || n > 0 {
			return err
		}
		_, err := tx.Exec(ctx, insert, course, student) // want `insert into enrollments is decided by a read of enrollments`
		return err
	})
	return err
}
