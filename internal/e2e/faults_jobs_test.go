package e2e

// jobFamilies are the matrix's job families: compliance, media, audiences,
// catalogs, insights.
func jobFamilies() []family { return nil }
