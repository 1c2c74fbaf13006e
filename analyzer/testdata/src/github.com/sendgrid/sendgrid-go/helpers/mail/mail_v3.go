// Package mail is a stub of sendgrid-go's mail helpers.
package mail

type Email struct {
	Name    string
	Address string
}

type SGMailV3 struct {
	From    *Email
	Subject string
}

func NewEmail(name string, address string) *Email { return &Email{Name: name, Address: address} }

func NewSingleEmail(from *Email, subject string, to *Email, plainTextContent string, htmlContent string) *SGMailV3 {
	return &SGMailV3{From: from, Subject: subject}
}
