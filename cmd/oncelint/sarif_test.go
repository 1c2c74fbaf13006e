package main_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// -sarif writes the findings of testdata/app as the golden SARIF log says, with the module
// root (which differs between checkouts) replaced by ROOT and the rules' texts (the checks'
// documentation, checked for shape below) by DOC.
func TestSARIF_Golden(t *testing.T) {
	t.Parallel()
	out, code := run(t, "app", nil, oncelint, "-sarif", "./...")
	if code != 3 {
		t.Fatalf("exit code %d, want 3 (findings)\n%s", code, out)
	}
	root, err := filepath.Abs(filepath.Join("testdata", "app"))
	if err != nil {
		t.Fatal(err)
	}
	checkSARIFShape(t, []byte(out))
	got := goldenForm(t, strings.ReplaceAll(out, "file://"+filepath.ToSlash(root)+"/", "file:///ROOT/"))
	golden := filepath.Join("testdata", "app.sarif")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("-sarif output differs from %s (go test -run TestSARIF_Golden -update to rewrite):\n%s", golden, got)
	}
}

// goldenForm replaces the rules' texts by DOC.
func goldenForm(t *testing.T, out string) string {
	t.Helper()
	var log map[string]any
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, run := range log["runs"].([]any) {
		driver := run.(map[string]any)["tool"].(map[string]any)["driver"].(map[string]any)
		for _, rule := range driver["rules"].([]any) {
			for _, k := range []string{"shortDescription", "help"} {
				rule.(map[string]any)[k] = map[string]any{"text": "DOC"}
			}
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(log); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkSARIFShape checks what the SARIF 2.1.0 schema requires of the parts oncelint fills
// in, and what a code-scanning dashboard needs to place a finding.
func checkSARIFShape(t *testing.T, data []byte) {
	t.Helper()
	var log struct {
		Schema  string `json:"$schema"`
		Version string
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string
					Rules []struct {
						ID               string
						ShortDescription struct{ Text string }
						Help             struct{ Text string }
					}
				}
			}
			OriginalURIBaseIDs map[string]struct{ URI string } `json:"originalUriBaseIds"`
			Results            []struct {
				RuleID           string
				RuleIndex        int
				Level            string
				Message          struct{ Text string }
				Locations        []sarifLocation
				RelatedLocations []sarifLocation
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&log); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if log.Version != "2.1.0" || !strings.Contains(log.Schema, "sarif-2.1.0") || len(log.Runs) != 1 {
		t.Fatalf("version %q, schema %q, %d runs: want 2.1.0, the 2.1.0 schema, one run", log.Version, log.Schema, len(log.Runs))
	}
	r := log.Runs[0]
	if r.Tool.Driver.Name != "oncelint" {
		t.Errorf("driver name %q", r.Tool.Driver.Name)
	}
	var ids []string
	for i, rule := range r.Tool.Driver.Rules {
		ids = append(ids, rule.ID)
		if want := "ONCE00" + string(rune('0'+i)); rule.ID != want {
			t.Errorf("rule %d is %q, want %q", i, rule.ID, want)
		}
		if rule.ShortDescription.Text == "" || rule.Help.Text == "" {
			t.Errorf("rule %s has no description or help", rule.ID)
		}
	}
	if len(ids) != 7 {
		t.Errorf("rules %v, want ONCE000 to ONCE006", ids)
	}
	if len(r.Results) == 0 {
		t.Fatal("no results")
	}
	related := 0
	for _, res := range r.Results {
		if res.RuleIndex < 0 || res.RuleIndex >= len(ids) || ids[res.RuleIndex] != res.RuleID {
			t.Errorf("result %q: ruleIndex %d does not name its rule", res.RuleID, res.RuleIndex)
		}
		if res.Message.Text == "" || res.Level != "warning" || len(res.Locations) != 1 {
			t.Errorf("result %q: message %q, level %q, %d locations", res.RuleID, res.Message.Text, res.Level, len(res.Locations))
		}
		for _, loc := range append(res.Locations, res.RelatedLocations...) {
			checkLocation(t, loc, r.OriginalURIBaseIDs)
		}
		for _, loc := range res.RelatedLocations {
			related++
			if loc.ID < 1 || loc.Message == nil || loc.Message.Text == "" {
				t.Errorf("related location of %q: id %d, message %v", res.RuleID, loc.ID, loc.Message)
			}
		}
	}
	if related == 0 {
		t.Error("no related locations: the shared mail service's declaration should be one")
	}
}

type sarifLocation struct {
	ID               int
	Message          *struct{ Text string }
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI       string
			URIBaseID string `json:"uriBaseId"`
		}
		Region struct{ StartLine, StartColumn, EndLine, EndColumn int }
	}
}

func checkLocation(t *testing.T, loc sarifLocation, bases map[string]struct{ URI string }) {
	t.Helper()
	a, reg := loc.PhysicalLocation.ArtifactLocation, loc.PhysicalLocation.Region
	if a.URI == "" || strings.HasPrefix(a.URI, "/") {
		t.Errorf("artifact URI %q: want a relative or file URI", a.URI)
	}
	if a.URIBaseID != "" {
		if base, ok := bases[a.URIBaseID]; !ok || !strings.HasSuffix(base.URI, "/") {
			t.Errorf("uriBaseId %q is not a directory in originalUriBaseIds", a.URIBaseID)
		}
	}
	if reg.StartLine < 1 || reg.StartColumn < 1 || (reg.EndLine != 0 && (reg.EndLine < reg.StartLine || reg.EndColumn < 1)) {
		t.Errorf("%s: region %+v", a.URI, reg)
	}
}

// Each result carries the fingerprint a baseline records, and the run carries the
// coverage summary.
func TestSARIF_FingerprintsAndCoverage(t *testing.T) {
	t.Parallel()
	out, _ := run(t, "app", nil, oncelint, "-sarif", "./...")
	var log struct {
		Runs []struct {
			Results []struct {
				PartialFingerprints map[string]string `json:"partialFingerprints"`
			}
			Properties map[string]struct {
				Packages, Effects, Findings int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || len(log.Runs) != 1 {
		t.Fatalf("not one SARIF run: %v\n%s", err, out)
	}
	for _, r := range log.Runs[0].Results {
		if len(r.PartialFingerprints["oncelint/v1"]) != 24 {
			t.Errorf("result without its fingerprint: %v", r.PartialFingerprints)
		}
	}
	if c := log.Runs[0].Properties["oncelint/coverage"]; c.Packages != 5 || c.Effects != 7 || c.Findings != 3 {
		t.Errorf("run properties: coverage %+v", c)
	}
}
