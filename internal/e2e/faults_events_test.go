package e2e

// eventFamilies are the matrix's event families: the event dispatcher,
// webhook delivery, streams.
func eventFamilies() []family { return nil }
