package postgres

// EncodeOperations and DecodeOperations expose the stored form of a users
// batch to the external benchmark (docs/clever-parts.md).
var (
	EncodeOperations = encodeOperations
	DecodeOperations = decodeOperations
)
