// Package adoption holds the test that follows the README's adoption path in a fresh module
// outside the repository: install through a replace, one directive, go generate, goose, and
// two concurrent calls of the guarded function with one effect. It is a module of its own so
// goose stays out of the main go.mod.
package adoption
