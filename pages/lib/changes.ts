// What a render shows that the clock alone changes ("5m ago" turning "6m
// ago", an event starting): each helper that reads the props' "now" notes
// when its text would next read differently, and the server keeps the
// rendered page no longer than the earliest (render.Result.ChangesAt,
// server/http_pagecache_expiry.go). In the browser the notes are never read.
//
// Relative times are noted apart from the rest: a page whose only change is
// a relative time is brought up to date by the server rewriting those texts
// (render.Restamp), not by a render, so it needs to know when anything else
// changes and how many relative times the page shows (each in an <Ago>).
let earliest = Infinity;
let otherEarliest = Infinity;
let agoShown = 0;

// changesAt notes that something shown reads differently from ms (since the
// epoch) on.
export function changesAt(ms: number): void {
  if (ms > 0 && ms < otherEarliest) otherEarliest = ms;
  agoChangesAt(ms);
}

// agoChangesAt is changesAt for a relative time (lib/format.ts).
export function agoChangesAt(ms: number): void {
  if (ms > 0 && ms < earliest) earliest = ms;
}

// agoShownOnce counts a relative time shown (lib/format.ts): the server
// rewrites a page only when it finds as many marked (lib/Ago.tsx).
export function agoShownOnce(): void {
  agoShown++;
}

export type Changes = {
  // changesAt: the earliest note (0 for none); otherChangesAt: the earliest
  // of the notes that are not relative times; ago: relative times shown.
  changesAt: number;
  otherChangesAt: number;
  ago: number;
};

// takeChanges answers the notes since the last call and forgets them: the
// server bundle calls it before and after each render.
export function takeChanges(): Changes {
  const out = {
    changesAt: isFinite(earliest) ? earliest : 0,
    otherChangesAt: isFinite(otherEarliest) ? otherEarliest : 0,
    ago: agoShown,
  };
  earliest = Infinity;
  otherEarliest = Infinity;
  agoShown = 0;
  return out;
}
