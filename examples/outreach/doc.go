// Package outreach is a small outreach app, in which brands open conversations with
// creators by email, that keeps every "only once" in it at the length of promise the job
// needs, each declared with a //once: directive:
//
//   - the signed-in user is loaded once per request, however many parts of the request
//     ask (request);
//   - a conversation spends the user's monthly allowance under a per-user lock, because
//     the decision is made from a count (transaction);
//   - a paid data source's daily request budget is a counter reserved by one conditional
//     upsert (statement, table=);
//   - the operator hears about a blocked source once per outage, and the latch is rearmed
//     by the next request that works, with a process-local set only saving round trips in
//     front of it (episode, table=); the "limit reached" email works the same way
//     (episode);
//   - a job queue lets a key in once while the work is pending or running, and again after
//     it finished (open, table=);
//   - a conversation per creator per campaign, an inbound message per provider id, a
//     suppression per address: unique indexes where the insert is the check (forever,
//     table=); an unknown link answers a friendly page;
//   - every email and paid call carries an idempotency key derived from the row it is
//     about; a plan change's key includes the subscription's updated-at on purpose, so it
//     is the same for one state and new for the next (provider);
//   - one daily digest per user per day (forever), walked by one instance at a time
//     (lease);
//   - the billing webhook ignores its payload except for the customer it names and
//     re-reads the truth from the billing API under a per-customer lock (transaction).
//
// The package naive is the same app written with the mechanisms the story started with;
// the tests run the same storms against both and count what lasts.
package outreach

//go:generate go tool oncegen -migrations migrations -format migrate .
