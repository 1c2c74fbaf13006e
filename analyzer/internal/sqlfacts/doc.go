// Package sqlfacts reads what ONCE005 needs to know of SQL: what a statement does, and
// the unique constraints a project declares (in schema files, Go string literals, ent
// schemas, models' tags). It recognises what a check-then-insert is made of; it is not
// a parser.
package sqlfacts
