// Package readposts talks to a directory service whose API takes POST for reads as well
// as writes: a request's purpose, said by the name of the function that sends it, tells
// which repeat matters.
package readposts

import (
	"bytes"
	"net/http"
	"net/url"
)

type Directory struct {
	http *http.Client
	base string
}

// listTeams POSTs a paging request: a read, whatever the method.
func (d *Directory) listTeams(page []byte) error {
	_, err := d.http.Post(d.base+"/teams/query", "application/json", bytes.NewReader(page))
	return err
}

// GetMember POSTs a look-up: a read.
func (d *Directory) GetMember(body []byte) error {
	req, err := http.NewRequest(http.MethodPost, d.base+"/members/get", bytes.NewReader(body))
	if err != nil {
		return err
	}
	_, err = d.http.Do(req)
	return err
}

// getOrCreateTeam says it may create: an effect.
func (d *Directory) getOrCreateTeam(body []byte) error {
	_, err := d.http.Post(d.base+"/teams", "application/json", bytes.NewReader(body)) // want `call to \(\*http.Client\).Post has no //once: promise and the provider takes no idempotency key: a retry sends the POST again; declare a promise on Directory.getOrCreateTeam`
	return err
}

// inviteMember creates an invitation: an effect.
func (d *Directory) inviteMember(body []byte) error {
	_, err := d.http.Post(d.base+"/invitations", "application/json", bytes.NewReader(body)) // want `call to \(\*http.Client\).Post has no //once: promise`
	return err
}

// endPartnerLogoutSession tells a partner the session ended: ending it twice changes
// nothing.
func endPartnerLogoutSession(endpoint, session string) error {
	_, err := http.PostForm(endpoint, url.Values{"session": {session}})
	return err
}

// revokePartnerGrant withdraws a grant: revoking it twice leaves it revoked.
func revokePartnerGrant(endpoint, grant string) error {
	_, err := http.PostForm(endpoint, url.Values{"grant": {grant}})
	return err
}

// announceLogouts posts a digest of the day's logouts to a chat room: "logouts" is not
// the word, and the digest is a message a repeat sends again.
func announceLogouts(endpoint, digest string) error {
	_, err := http.PostForm(endpoint, url.Values{"text": {digest}}) // want `call to http.PostForm has no //once: promise`
	return err
}
