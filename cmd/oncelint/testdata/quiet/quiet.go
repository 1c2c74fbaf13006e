// Package quiet computes and sends nothing.
package quiet

import "strings"

// Title capitalises a word.
func Title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
