package render

import (
	"bytes"
	"strconv"
	"time"
)

// A page whose only change with the clock is its relative times ("5m ago"
// turning "6m ago") is brought up to date by rewriting those texts, not by
// rendering it again: a render of a community page is its data and some 10
// ms of goja, the rewrite a scan of the bytes. At a thousand apps with
// recent posts every page changes each minute, and those renders were a
// seventh of the server's CPU while visitors read them (scripts/bench apps).
//
// Restamp gives the bytes a render at now would give, provided nothing else
// the page shows changes before now (Result.OtherChangesAt, and what the
// loaders note): pages/lib/Ago.tsx marks each relative time, RelativeTime
// is pages/lib/format.ts's relativeTime in Go (TestRelativeTimeMatchesTheBundle
// compares them), and the islands' props carry "now" as the render had it.

// agoOpen and agoMark are how React writes <Ago>: <time dateTime="…" data-ago="">…</time>.
var (
	agoOpen  = []byte(`<time dateTime="`)
	agoMark  = []byte(`" data-ago="">`)
	agoClose = []byte(`</time>`)
	nowOpen  = []byte(`&quot;now&quot;:&quot;`)
)

// Restamp rewrites doc, rendered with props.now = was and showing ago
// relative times, as of now. It answers the new bytes and when the first
// of their relative times changes again (zero: none will), or false when
// the bytes are not what such a render makes (a relative time without its
// mark, a date it cannot read): the page is to be rendered instead.
func Restamp(doc []byte, was, now time.Time, ago int) ([]byte, time.Time, bool) {
	out := make([]byte, 0, len(doc)+64)
	var changes time.Time
	found := 0
	rest := doc
	for {
		i := bytes.Index(rest, agoOpen)
		if i < 0 {
			break
		}
		start := i + len(agoOpen)
		quote := bytes.IndexByte(rest[start:], '"')
		if quote < 0 || !bytes.HasPrefix(rest[start+quote:], agoMark) {
			out = append(out, rest[:start]...) // another <time>
			rest = rest[start:]
			continue
		}
		iso := rest[start : start+quote]
		textStart := start + quote + len(agoMark)
		end := bytes.Index(rest[textStart:], agoClose)
		if end < 0 {
			return nil, time.Time{}, false
		}
		at, err := time.Parse(time.RFC3339Nano, string(iso))
		if err != nil {
			return nil, time.Time{}, false
		}
		text, next := RelativeTime(at, now)
		out = append(out, rest[:textStart]...)
		out = append(out, text...)
		rest = rest[textStart+end:]
		found++
		if !next.IsZero() && (changes.IsZero() || next.Before(changes)) {
			changes = next
		}
	}
	out = append(out, rest...)
	if found != ago {
		return nil, time.Time{}, false
	}
	// The islands' props: the feed's next pages are shown as of the same now.
	from := append(append(bytes.Clone(nowOpen), PropsTime(was)...), "&quot;"...)
	to := append(append(bytes.Clone(nowOpen), PropsTime(now)...), "&quot;"...)
	return bytes.ReplaceAll(out, from, to), changes, true
}

// PropsTime is a time as the page props carry it (encoding/json's form).
func PropsTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

var months = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// RelativeTime is relativeTime of pages/lib/format.ts: the text of at as of
// now, and when it next reads differently (zero: a date, never).
func RelativeTime(at, now time.Time) (string, time.Time) {
	a, n := at.UnixMilli(), now.UnixMilli()
	seconds := floorDiv(n-a, 1000)
	if seconds < 60 {
		return "just now", time.UnixMilli(a + 60_000)
	}
	minutes := seconds / 60
	if minutes < 60 {
		return strconv.FormatInt(minutes, 10) + "m ago", time.UnixMilli(a + (minutes+1)*60_000)
	}
	hours := minutes / 60
	if hours < 24 {
		return strconv.FormatInt(hours, 10) + "h ago", time.UnixMilli(a + (hours+1)*3_600_000)
	}
	days := hours / 24
	if days <= 30 {
		return strconv.FormatInt(days, 10) + "d ago", time.UnixMilli(a + (days+1)*86_400_000)
	}
	u := time.UnixMilli(a).UTC()
	return months[u.Month()-1] + " " + strconv.Itoa(u.Day()) + ", " + strconv.Itoa(u.Year()), time.Time{}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
