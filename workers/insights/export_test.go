package insights

// insightsLockKey is storage/postgres' advisory lock key of the applier.
const insightsLockKey = 0x61766961727969
