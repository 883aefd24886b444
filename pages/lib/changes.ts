// What a render shows that the clock alone changes ("5m ago" turning "6m
// ago", an event starting): each helper that reads the props' "now" notes
// when its text would next read differently, and the server keeps the
// rendered page no longer than the earliest (render.Result.ChangesAt,
// server/http_pagecache_expiry.go). In the browser the notes are never read.
let earliest = Infinity;

// changesAt notes that something shown reads differently from ms (since the
// epoch) on.
export function changesAt(ms: number): void {
  if (ms > 0 && ms < earliest) earliest = ms;
}

// takeChanges answers the earliest note since the last call (0 for none)
// and forgets the notes: the server bundle calls it before and after each
// render.
export function takeChanges(): number {
  const t = earliest;
  earliest = Infinity;
  return isFinite(t) ? t : 0;
}
