package once

// jsonParam returns encoded JSON as the parameter of a json column: as text, or nil (SQL
// NULL) for nil. A []byte would do under pgx's default exec mode, which learns the column's
// type from a prepared statement; but in the modes a transaction pooler allows (exec,
// simple_protocol) pgx sends a []byte as bytea text (`\x7b...`), which the json input
// refuses (22P02), and the outcome it carries would go unrecorded.
func jsonParam(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}
