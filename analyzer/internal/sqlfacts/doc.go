// Package sqlfacts reads what ONCE005 needs to know of SQL: what one statement does
// (reads, inserts, updates, locks; its tables, the columns it compares and sets, its
// conflict clause), and the unique constraints a project declares, in its migrations
// and schema files, in the string literals of its Go files, in ent schema types and in
// its models' struct tags. It is not a parser: it recognises the statements a
// check-then-insert is made of, and the DDL that makes one safe.
package sqlfacts
