// Package docscheck holds the tests that keep the repository's Markdown honest: the README
// stays short enough to read before adopting, and every relative link in it and in docs/
// reaches a file.
package docscheck
