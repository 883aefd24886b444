package render

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// RelativeTime is the bundle's relativeTime in Go: the same text and the
// same next change, at every boundary, for times as the props carry them
// (nanoseconds, as encoding/json writes them) and as the database gives
// them (whole seconds, milliseconds).
func TestRelativeTimeMatchesTheBundle(t *testing.T) {
	rt := formatRuntime(t)
	now := time.Date(2026, 11, 30, 23, 41, 7, 123456789, time.UTC)
	var ages []time.Duration
	for _, d := range []time.Duration{0, time.Second, time.Minute, time.Hour, 24 * time.Hour, 30 * 24 * time.Hour, 31 * 24 * time.Hour} {
		ages = append(ages, d-time.Millisecond, d-time.Nanosecond, d, d+time.Nanosecond, d+time.Millisecond, d+999*time.Millisecond)
	}
	ages = append(ages, -time.Hour, 90*time.Second, 59*time.Minute+59*time.Second, 5*time.Hour+3*time.Minute, 400*24*time.Hour)
	for _, age := range ages {
		for _, at := range []time.Time{now.Add(-age), now.Add(-age).Truncate(time.Second), now.Add(-age).Truncate(time.Millisecond)} {
			text, next := RelativeTime(at, now)
			if _, err := rt.RunString("changes.takeChanges()"); err != nil {
				t.Fatal(err)
			}
			v, err := rt.RunString(fmt.Sprintf("[format.relativeTime(%q, %q), changes.takeChanges().changesAt]", PropsTime(at), PropsTime(now)))
			if err != nil {
				t.Fatal(err)
			}
			got := v.Export().([]any)
			wantNext := int64(0)
			if !next.IsZero() {
				wantNext = next.UnixMilli()
			}
			if got[0] != text || fmt.Sprint(got[1]) != fmt.Sprint(wantNext) {
				t.Errorf("%s before now: bundle says %q, next %v; Go says %q, next %d", age, got[0], got[1], text, wantNext)
			}
		}
	}
}

// Restamp rewrites every marked relative time and the islands' now, and
// nothing else; it refuses bytes that are not what a render makes.
func TestRestamp(t *testing.T) {
	was := time.Date(2026, 11, 30, 12, 0, 0, 500_000_000, time.UTC)
	now := was.Add(7 * time.Minute)
	ago := func(at time.Time, text string) string {
		return `<time dateTime="` + PropsTime(at) + `" data-ago="">` + text + `</time>`
	}
	island := func(t time.Time) string {
		return `<marquee-island data-props="{&quot;base&quot;:&quot;/apps/a&quot;,&quot;now&quot;:&quot;` + PropsTime(t) + `&quot;}">`
	}
	event := `<time dateTime="2026-12-01T18:00:00Z">Dec 1, 6:00 PM</time>`
	doc := "<p>" + ago(was.Add(-30*time.Second), "just now") + event + ago(was.Add(-2*time.Hour), "2h ago") + "</p>" + island(was)
	out, changes, ok := Restamp([]byte(doc), was, now, 2)
	want := "<p>" + ago(was.Add(-30*time.Second), "7m ago") + event + ago(was.Add(-2*time.Hour), "2h ago") + "</p>" + island(now)
	if !ok || string(out) != want {
		t.Fatalf("Restamp = %v\n%s\nwant\n%s", ok, out, want)
	}
	if wantChanges := was.Add(-30 * time.Second).Add(8 * time.Minute); !changes.Equal(wantChanges) {
		t.Errorf("changes at %v, want %v (the first post's 8th minute)", changes, wantChanges)
	}
	for name, bad := range map[string]struct {
		doc string
		ago int
	}{
		"a relative time without its mark": {doc, 3},
		"a mark more than rendered":        {doc, 1},
		"a date it cannot read":            {strings.Replace(doc, PropsTime(was.Add(-2*time.Hour)), "yesterday", 1), 2},
		"a mark never closed":              {strings.TrimSuffix(strings.Split(doc, "</time>")[0], ""), 1},
	} {
		if _, _, ok := Restamp([]byte(bad.doc), was, now, bad.ago); ok {
			t.Errorf("%s: rewritten", name)
		}
	}
}
