// Package message is a stub of watermill's router, as far as the tests call it.
package message

// Message is a message delivered to a handler.
type Message struct {
	UUID    string
	Payload []byte
}

// Subscriber delivers messages.
type Subscriber interface{}

// Publisher publishes messages.
type Publisher interface{}

// HandlerFunc handles a message and returns the messages to publish.
type HandlerFunc func(msg *Message) ([]*Message, error)

// NoPublishHandlerFunc handles a message.
type NoPublishHandlerFunc func(msg *Message) error

// Handler is a registered handler.
type Handler struct{}

// Router routes messages to handlers.
type Router struct{}

func (r *Router) AddHandler(handlerName string, subscribeTopic string, subscriber Subscriber, publishTopic string, publisher Publisher, handlerFunc HandlerFunc) *Handler {
	return &Handler{}
}

func (r *Router) AddNoPublisherHandler(handlerName string, subscribeTopic string, subscriber Subscriber, handlerFunc NoPublishHandlerFunc) *Handler {
	return &Handler{}
}

func (r *Router) AddConsumerHandler(handlerName string, subscribeTopic string, subscriber Subscriber, handlerFunc NoPublishHandlerFunc) *Handler {
	return &Handler{}
}
