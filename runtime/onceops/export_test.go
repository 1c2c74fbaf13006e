package onceops

// RollUpWithMargin is RollUp with a margin of the test's choosing, so that a test can put
// yesterday inside it whatever the time of day.
var RollUpWithMargin = rollUp
