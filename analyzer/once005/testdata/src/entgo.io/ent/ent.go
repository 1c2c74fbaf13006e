// Package ent is a stub of ent's core package, which generated clients import.
package ent

// Field is a schema field.
type Field interface{}

// Index is a schema index.
type Index interface{}

// Schema is embedded by schema types.
type Schema struct{}
