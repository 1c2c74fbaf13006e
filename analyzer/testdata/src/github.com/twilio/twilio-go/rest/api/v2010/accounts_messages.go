// Package openapi is a stub of twilio-go's api/v2010 package.
package openapi

type ApiService struct{ baseURL string }

type CreateMessageParams struct {
	To   *string
	From *string
	Body *string
}

func (params *CreateMessageParams) SetTo(To string) *CreateMessageParams {
	params.To = &To
	return params
}
func (params *CreateMessageParams) SetFrom(From string) *CreateMessageParams {
	params.From = &From
	return params
}
func (params *CreateMessageParams) SetBody(Body string) *CreateMessageParams {
	params.Body = &Body
	return params
}

type ApiV2010Message struct{ Sid *string }

// CreateMessage sends a message.
func (c *ApiService) CreateMessage(params *CreateMessageParams) (*ApiV2010Message, error) {
	return &ApiV2010Message{}, nil
}
