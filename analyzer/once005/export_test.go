package once005

// Facts is the analyzer that reads what SQL functions send, for tests of its facts.
var Facts = factsAnalyzer
