// Package webcalls sends HTTP requests the ways real services do: reads and writes, by
// constant, through a reused request variable and through a helper that takes the method.
// Only a request that a repeat changes the far end again by is an effect: a POST or a
// PATCH, not a GET, nor a PUT or a DELETE (idempotent methods, RFC 9110 9.2.2).
package webcalls

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

type Client struct {
	http *http.Client
	base string
}

// ping is a GET: no effect.
func ping(base string) error {
	resp, err := http.Get(base + "/health")
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// fetch sends a GET with Do: no effect.
func (c *Client) fetch(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/orders/"+id, nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

// cancel sends a POST, built with a constant: an effect, keyed by a header on the
// request.
func (c *Client) cancel(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/orders/"+id+"/cancel", nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req) // want `call to \(\*http.Client\).Do has no idempotency key and no //once: promise: a retry sends the request again; set an Idempotency-Key header on the request, derived from a stable id, or declare a promise on Client.cancel`
	return err
}

// drop sends a DELETE: deleting again leaves what one delete left, so no effect.
func (c *Client) drop(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.base+"/orders/"+id, nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

// replace sends a PUT of a whole resource: a repeat stores the same state, no effect.
func (c *Client) replace(ctx context.Context, id, body string) error {
	req, err := http.NewRequestWithContext(ctx, "put", c.base+"/orders/"+id, strings.NewReader(body))
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

// reuse posts, then reuses the variable for a GET: only the POST is an effect.
func (c *Client) reuse(ctx context.Context, body string) error {
	req, err := http.NewRequest("POST", c.base+"/notes", strings.NewReader(body))
	if err != nil {
		return err
	}
	if _, err := c.http.Do(req); err != nil { // want `call to \(\*http.Client\).Do has no idempotency key`
		return err
	}
	req, err = http.NewRequest("GET", c.base+"/notes", nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

// search POSTs a query but turns the request into a GET before sending it: no effect.
func (c *Client) search(q string) error {
	req, err := http.NewRequest(http.MethodPost, c.base+"/search", strings.NewReader(q))
	if err != nil {
		return err
	}
	req.Method = http.MethodGet
	_, err = c.http.Do(req.WithContext(context.Background()))
	return err
}

// send is the helper every call goes through: the method is its caller's. One caller
// passes a POST, so the request is that caller's decision, and is reported there.
func (c *Client) send(ctx context.Context, method, path string) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

func (c *Client) list(ctx context.Context) error { return c.send(ctx, "GET", "/items") }

func (c *Client) create(ctx context.Context) error {
	return c.send(ctx, http.MethodPost, "/items") // want `call to \(\*webcalls.Client\).send reaches \(\*http.Client\).Do with no //once: promise: a retry sends the request again; declare a promise on Client.create or on \(\*webcalls.Client\).send`
}

// do sends a request built by its caller; archive gives it a PATCH, and is reported.
func (c *Client) do(req *http.Request) error {
	_, err := c.http.Do(req)
	return err
}

func (c *Client) archive(id string) error {
	req, _ := http.NewRequest(http.MethodPatch, c.base+"/archive/"+id, nil)
	return c.do(req) // want `call to \(\*webcalls.Client\).do reaches \(\*http.Client\).Do with no //once: promise: a retry sends the request again; declare a promise on Client.archive`
}

func (c *Client) show(id string) error {
	req, _ := http.NewRequest(http.MethodGet, c.base+"/show/"+id, nil)
	return c.do(req)
}

// call takes the method too, and two callers pass ones a repeat applies again (a PATCH
// and a POST; the DELETE is none): the helper is where the effect is reported, once, not
// at each caller.
func (c *Client) call(method, path string) error {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req) // want `call to \(\*http.Client\).Do has no idempotency key and no //once: promise: a retry sends the request again; set an Idempotency-Key header on the request, derived from a stable id, or declare a promise on Client.call`
	return err
}

func (c *Client) remove(id string) error { return c.call(http.MethodDelete, "/items/"+id) }

func (c *Client) rename(id string) error { return c.call(http.MethodPatch, "/items/"+id) }

func (c *Client) copyItem(id string) error { return c.call(http.MethodPost, "/items/"+id+"/copies") }

// sendRetrying takes the method and repeats the request until it succeeds: the loop is
// its own decision, so it is reported where it is, though one caller activates it.
func (c *Client) sendRetrying(method, path string) error {
	var err error
	for range 3 {
		req, _ := http.NewRequest(method, c.base+path, nil)
		if _, err = c.http.Do(req); err == nil { // want `declare a promise on Client.sendRetrying \(ONCE001\)$`
			return nil
		}
	}
	return err
}

func (c *Client) enqueue() error { return c.sendRetrying(http.MethodPost, "/jobs") }

// postTo sends a body to the URL it is given: a transport. Its one caller that sends to
// an endpoint which is no read decides the effect, and is reported; the one sending to a
// token endpoint, or named for a look-up, is no effect.
func (c *Client) postTo(target string, body string) error {
	_, err := c.http.Post(target, "application/json", strings.NewReader(body))
	return err
}

func (c *Client) subscribe(topic string) error {
	return c.postTo(c.base+"/subscriptions", topic) // want `call to \(\*webcalls.Client\).postTo reaches \(\*http.Client\).Post with no //once: promise: a retry sends the POST again; declare a promise on Client.subscribe`
}

func (c *Client) exchange(code string) error { return c.postTo(c.base+"/oauth/token", code) }

func (c *Client) findTopics(query string) error { return c.postTo(c.base+"/topics", query) }

// get is a helper taking the method that only ever gets GETs: no effect.
func (c *Client) get(method, path string) error {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

func (c *Client) items() error { return c.get(http.MethodGet, "/items") }

// Exported helper taking the method: judged where its callers, in other packages, pass
// one (see shop/webusers).
func (c *Client) Send(method, path string) error {
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

// token exchanges a code at an OAuth token endpoint, built from configuration: a read.
func token(issuer, code string) error {
	_, err := http.PostForm(issuer+"/oauth/token", url.Values{"code": {code}})
	return err
}

// googleToken exchanges a code at Google's token endpoint: a read.
func googleToken(code string) error {
	_, err := http.Post("https://oauth2.googleapis.com/token", "application/x-www-form-urlencoded", strings.NewReader("code="+code))
	return err
}

// verify checks a captcha answer: a read.
func verify(secret, answer string) error {
	endpoint := fmt.Sprintf("%s/recaptcha/api/siteverify", "https://www.google.com")
	_, err := http.PostForm(endpoint, url.Values{"secret": {secret}, "response": {answer}})
	return err
}

// backchannelLogout tells a relying party a session ended (OpenID Connect back-channel
// logout, to a URL from configuration): ending it again changes nothing.
func backchannelLogout(uri, logoutToken string) error {
	_, err := http.PostForm(uri, url.Values{"logout_token": {logoutToken}})
	return err
}

// apiLogin obtains an access token from a payment API's login endpoint: a read.
func (c *Client) apiLogin(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/v1/authentication/login", strings.NewReader("{}"))
	if err != nil {
		return err
	}
	_, err = c.http.Do(req)
	return err
}

const hookURL = "https://hooks.example.com/x"

// alert posts to a webhook at a URL of its own: an effect where it is.
func alert(text string) error {
	_, err := http.Post(hookURL, "text/plain", strings.NewReader(text)) // want `call to http.Post has no //once: promise and the provider takes no idempotency key: a retry sends the POST again; declare a promise on alert`
	return err
}

// mailingAction posts an action on a mailing list to the list's own endpoint. Whether it is
// an effect is what each caller asks it for.
func (c *Client) mailingAction(action, email string) error {
	_, err := c.http.Post(c.base+"/api/json/"+action+"?contact="+url.QueryEscape(email), "application/json", nil)
	return err
}

// Unsubscribe is named for a purpose a repeat does not change: the requests the helpers
// it calls make for it share that purpose, and are no effect.
func (c *Client) Unsubscribe(email string) error { return c.mailingAction("listunsubscribe", email) }

// notifyRemoval is named for a write: called for an unsubscribe, it still does what its
// name says, and Run, which decides it, is reported.
func (c *Client) notifyRemoval(email string) error {
	_, err := c.http.Post(c.base+"/notices", "text/plain", strings.NewReader(email))
	return err
}

// UnsubscribeAndTell unsubscribes and tells: only the notice is an effect.
func (c *Client) UnsubscribeAndTell(email string) error {
	if err := c.mailingAction("listunsubscribe", email); err != nil {
		return err
	}
	return c.notifyRemoval(email)
}

// Run calls each of them.
func Run(ctx context.Context, c *Client) {
	_ = ping(c.base)
	_ = c.fetch(ctx, "1")
	_ = c.cancel(ctx, "1")
	_ = c.reuse(ctx, "x")
	_ = c.search("q")
	_ = c.list(ctx)
	_ = c.create(ctx)
	_ = c.archive("1")
	_ = c.show("1")
	_ = c.items()
	_ = token("https://id.example.com", "c")
	_ = googleToken("c")
	_ = verify("s", "a")
	_ = alert("hi")
	_ = c.remove("1")
	_ = c.rename("1")
	_ = c.copyItem("1")
	_ = c.drop(ctx, "1")
	_ = c.replace(ctx, "1", "{}")
	_ = c.subscribe("news")
	_ = c.exchange("c")
	_ = c.findTopics("q")
	_ = c.enqueue()
	_ = backchannelLogout("https://rp.example.com/logout", "t")
	_ = c.apiLogin(ctx)
	_ = c.Unsubscribe("a@shop.test")
	_ = c.UnsubscribeAndTell("a@shop.test") // want `call to \(\*webcalls.Client\).UnsubscribeAndTell reaches \(\*http.Client\).Post \(through \(\*webcalls.Client\).notifyRemoval\)`
}
