// Package sarif writes oncelint's findings as a SARIF 2.1.0 log, the format code-scanning
// dashboards read: one rule per check (ONCE000 to ONCE006) with its help text, one result per
// finding with its location and the related locations that explain it.
package sarif

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"
)

// Rule is one check: its code, its name and its documentation.
type Rule struct {
	ID   string // ONCE001
	Name string // once001
	Doc  string // the analyzer's Doc: a title line, a blank line, the explanation
}

// Position is a span of a source file; lines and columns count from 1, columns in bytes.
type Position struct {
	File               string // absolute path
	Line, Column       int
	EndLine, EndColumn int // zero when the finding is a point
}

// Related is a second place that explains a finding.
type Related struct {
	Position
	Message string
}

// Finding is one diagnostic. Fingerprint, when set, identifies it across runs whatever
// lines move (written as the result's partialFingerprints).
type Finding struct {
	RuleID  string
	Message string
	Position
	Related     []Related
	Fingerprint string
}

// Write writes one run of the tool as a SARIF log. Files under root are named relative to
// it (as %SRCROOT%, which the log maps to root), the rest by absolute file URI. props,
// when not nil, are the run's properties (oncelint's coverage summary).
func Write(w io.Writer, tool, version, infoURI, root string, rules []Rule, findings []Finding, props any) error {
	src := sources{}
	ruleIndex := map[string]int{}
	var sRules []rule
	for i, r := range rules {
		ruleIndex[r.ID] = i
		title, help, _ := strings.Cut(r.Doc, "\n")
		help = strings.TrimSpace(help)
		if help == "" {
			help = title
		}
		sRules = append(sRules, rule{
			ID:                   r.ID,
			Name:                 r.Name,
			ShortDescription:     text{Text: title},
			Help:                 text{Text: help},
			DefaultConfiguration: config{Level: "warning"},
		})
	}
	results := []result{}
	for _, f := range findings {
		i, ok := ruleIndex[f.RuleID]
		if !ok {
			return fmt.Errorf("sarif: finding at %s:%d has rule %q, which is not among the rules", f.File, f.Line, f.RuleID)
		}
		res := result{
			RuleID:    f.RuleID,
			RuleIndex: i,
			Level:     "warning",
			Message:   text{Text: f.Message},
			Locations: []location{{PhysicalLocation: src.physical(root, f.Position)}},
		}
		if f.Fingerprint != "" {
			res.PartialFingerprints = map[string]string{"oncelint/v1": f.Fingerprint}
		}
		for j, rel := range f.Related {
			res.RelatedLocations = append(res.RelatedLocations, location{
				ID:               j + 1,
				PhysicalLocation: src.physical(root, rel.Position),
				Message:          &text{Text: rel.Message},
			})
		}
		results = append(results, res)
	}
	slices.SortStableFunc(results, func(a, b result) int {
		pa, pb := a.Locations[0].PhysicalLocation, b.Locations[0].PhysicalLocation
		if c := strings.Compare(pa.ArtifactLocation.URI, pb.ArtifactLocation.URI); c != 0 {
			return c
		}
		if c := pa.Region.StartLine - pb.Region.StartLine; c != 0 {
			return c
		}
		if c := pa.Region.StartColumn - pb.Region.StartColumn; c != 0 {
			return c
		}
		return strings.Compare(a.RuleID, b.RuleID)
	})
	doc := log{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs: []run{{
			Tool: tool_{Driver: driver{Name: tool, Version: version, InformationURI: infoURI, Rules: sRules}},
			OriginalURIBaseIDs: map[string]artifact{
				"%SRCROOT%": {URI: fileURI(root) + "/"},
			},
			ColumnKind: "unicodeCodePoints",
			Results:    results,
			Properties: props,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("sarif: %w", err)
	}
	return nil
}

// sources holds the lines of the files read so far, to count columns in code points as the
// log says it does (Go counts them in bytes).
type sources map[string][]string

func (s sources) column(file string, line, byteCol int) int {
	lines, ok := s[file]
	if !ok {
		data, err := os.ReadFile(file)
		if err == nil {
			lines = strings.Split(string(data), "\n")
		}
		s[file] = lines
	}
	if line < 1 || line > len(lines) || byteCol < 1 || byteCol-1 > len(lines[line-1]) {
		return byteCol
	}
	return utf8.RuneCountInString(lines[line-1][:byteCol-1]) + 1
}

func (s sources) physical(root string, p Position) physicalLocation {
	loc := physicalLocation{Region: region{StartLine: p.Line, StartColumn: s.column(p.File, p.Line, p.Column)}}
	if p.EndLine > 0 {
		loc.Region.EndLine, loc.Region.EndColumn = p.EndLine, s.column(p.File, p.EndLine, p.EndColumn)
	}
	if rel, err := filepath.Rel(root, p.File); err == nil && root != "" && !strings.HasPrefix(rel, "..") {
		loc.ArtifactLocation = artifact{URI: (&url.URL{Path: filepath.ToSlash(rel)}).EscapedPath(), URIBaseID: "%SRCROOT%"}
	} else {
		loc.ArtifactLocation = artifact{URI: fileURI(p.File)}
	}
	return loc
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// The SARIF 2.1.0 objects oncelint fills in, with the schema's property names.
type (
	log struct {
		Schema  string `json:"$schema"`
		Version string `json:"version"`
		Runs    []run  `json:"runs"`
	}
	run struct {
		Tool               tool_               `json:"tool"`
		OriginalURIBaseIDs map[string]artifact `json:"originalUriBaseIds,omitempty"`
		ColumnKind         string              `json:"columnKind"`
		Results            []result            `json:"results"`
		Properties         any                 `json:"properties,omitempty"`
	}
	tool_ struct {
		Driver driver `json:"driver"`
	}
	driver struct {
		Name           string `json:"name"`
		Version        string `json:"version,omitempty"`
		InformationURI string `json:"informationUri,omitempty"`
		Rules          []rule `json:"rules"`
	}
	rule struct {
		ID                   string `json:"id"`
		Name                 string `json:"name"`
		ShortDescription     text   `json:"shortDescription"`
		Help                 text   `json:"help"`
		DefaultConfiguration config `json:"defaultConfiguration"`
	}
	config struct {
		Level string `json:"level"`
	}
	text struct {
		Text string `json:"text"`
	}
	result struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             text              `json:"message"`
		Locations           []location        `json:"locations"`
		RelatedLocations    []location        `json:"relatedLocations,omitempty"`
		PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
	}
	location struct {
		ID               int              `json:"id,omitempty"`
		PhysicalLocation physicalLocation `json:"physicalLocation"`
		Message          *text            `json:"message,omitempty"`
	}
	physicalLocation struct {
		ArtifactLocation artifact `json:"artifactLocation"`
		Region           region   `json:"region"`
	}
	artifact struct {
		URI       string `json:"uri"`
		URIBaseID string `json:"uriBaseId,omitempty"`
	}
	region struct {
		StartLine   int `json:"startLine"`
		StartColumn int `json:"startColumn,omitempty"`
		EndLine     int `json:"endLine,omitempty"`
		EndColumn   int `json:"endColumn,omitempty"`
	}
)
