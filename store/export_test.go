package store

// RefreshPageVersionsRound is one round of RefreshPageVersions.
var RefreshPageVersionsRound = (*Storage).refreshPageVersions

// RefreshActiveRounds is how many rounds a version unread is refreshed.
const RefreshActiveRounds = refreshActiveRounds

// RefreshEvery is the pace of RefreshPageVersions' rounds.
const RefreshEvery = refreshEvery
