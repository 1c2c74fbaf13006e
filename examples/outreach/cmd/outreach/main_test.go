package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/cmdtest"
	"github.com/oncekit/once/examples/outreach/internal/fakebilling"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The command migrates an empty database, serves the API, runs the worker (the outreach
// email goes out without anyone driving it), and stops cleanly when its context ends.
func TestRun_ServesMigratesAndWorks(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	mail, source, billing := fakeprovider.New(t), fakeprovider.New(t), fakebilling.New(t)
	cmd := cmdtest.Start(t, run, []string{"-addr", "127.0.0.1:0"}, map[string]string{
		"DATABASE_URL": db.URL, "MAIL_URL": mail.URL, "SOURCE_URL": source.URL, "BILLING_URL": billing.URL,
	})
	base := cmd.URL

	pool := db.Pool(t, 2)
	brand := fixture.SeedBrand(t, pool, "acme", "free", time.Now())
	creator := fixture.SeedCreators(t, pool, 1)[0]
	req, _ := http.NewRequest("POST", base+"/threads", strings.NewReader(`{"campaign_id":`+itoa(brand.CampaignID)+`,"creator_id":`+itoa(creator)+`}`))
	req.Header.Set("Authorization", "Bearer "+brand.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /threads: %d %s", resp.StatusCode, body)
	}
	var r struct{ Result struct{ Token string } }
	json.Unmarshal(body, &r)

	// The worker polls every two seconds.
	deadline := time.Now().Add(20 * time.Second)
	for mail.Effects() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := mail.Effects(); n != 1 {
		t.Errorf("emails sent by the running worker: %d, want 1", n)
	}
	resp, err = http.Get(base + "/o/" + r.Result.Token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the conversation's page: %d", resp.StatusCode)
	}

	if err := cmd.Stop(); err != nil {
		t.Errorf("run after its context ended: %v", err)
	}
}

// Without its settings the command says which is missing, and does nothing.
func TestRun_MissingSettingIsAnError(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Errorf("run with no settings: %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Without the providers' URLs the command calls local fakes, and says so; when it stops it
// says what each performed.
func TestRun_WithoutProviderURLsCallsLocalFakes(t *testing.T) {
	t.Parallel()
	cmd := cmdtest.Start(t, run, []string{"-addr", "127.0.0.1:0"}, map[string]string{"DATABASE_URL": pgtest.NewDatabase(t).URL})
	if err := cmd.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"MAIL_URL is not set: the email API is a local fake at http://127.0.0.1:",
		"SOURCE_URL is not set: the places source is a local fake at http://127.0.0.1:",
		"BILLING_URL is not set: the billing API is a local fake at http://127.0.0.1:",
		"the fake email API performed 0 effects\n",
		"the fake places source performed 0 effects\n",
		"the fake billing API performed 0 plan changes\n",
	} {
		if !strings.Contains(cmd.Log(), want) {
			t.Errorf("the log does not say %q:\n%s", want, cmd.Log())
		}
	}
}
