// Package dbcall holds what once's runtime packages (once, onceschema, onceops) share in
// every call they make to the database: the refusal of arguments that cannot be used
// (ErrInvalid), durations as the statements take them, JSON parameters that survive a
// transaction pooler, reasons cut to what a column stores, and the context that finishes a
// call's writes after its caller gave up.
package dbcall
