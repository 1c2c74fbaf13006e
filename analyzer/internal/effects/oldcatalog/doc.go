// Package oldcatalog is the provider table of the analysis ONCE005 still shares with the
// checks that replaced it; it goes with that analysis.
package oldcatalog
