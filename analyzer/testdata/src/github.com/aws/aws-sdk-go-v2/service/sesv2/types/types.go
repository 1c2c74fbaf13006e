// Package types is a stub of aws-sdk-go-v2's sesv2/types package.
package types

type Destination struct{ ToAddresses []string }
type Content struct{ Data *string }
type Body struct{ Text, Html *Content }
type Message struct {
	Subject *Content
	Body    *Body
}
type EmailContent struct{ Simple *Message }
