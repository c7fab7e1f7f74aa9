package feature

// Tests may speak SQL: this literal is not reported.
var query = "SELECT 1 FROM campaigns c WHERE c.id = $1"
