// Package reports is an example app of once: a paid product that writes a report on a
// customer's submission with a model, and the places where that one intention can turn into
// two reports, two model bills, two usage deductions or two emails.
//
// A customer asks for a report with POST /submissions/{id}/reports and an Idempotency-Key:
// the operation reference, chosen by the client, the same on every retry of that one
// intention. The front door (runtime/oncehttp) keys the request by that reference within the
// authenticated account, records the answer (202, the queued job) and replays it to every
// retry; a second tab gets 409 while the first request runs, and the reference reused with
// another request gets 422. Regenerate (POST /reports/{id}/regenerate) is a new intention
// with a new reference, on purpose.
//
// The answer is quick because the paid work is not done in the request: the request records
// a job (one per operation, by a unique index), and a worker carries it out under
// GenerateReport's declared promise, once for the job however many workers pick it up or
// retry it. GenerateReport calls the model with an idempotency key derived from the
// operation, so a call whose answer was lost is repeated without a second bill; saves the
// report (one per job, by a unique index); records the usage in the ledger when it settles;
// and enqueues the owner's email as a follow-up, delivered by the worker with its own key,
// so a failing email service never makes the report again.
//
// The package naive holds the same app written the way such apps first go wrong.
//
//go:generate go tool oncegen -migrations migrations -format migrate .
package reports
