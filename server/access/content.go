package access

import (
	"strings"
	"unicode/utf8"

	"marquee/store"
)

// Content is how much of an app's paid content a viewer may see. It is the
// one rule behind every path that shows content (issue 27 item 9): pages
// and their JSON (the subscription gate), the landing previews, the
// notifications list, page and web push, search, feeds, sitemaps and media.
type Content int

const (
	// ContentAll: everything the viewer's role allows (no gate holds them).
	ContentAll Content = iota
	// ContentTeaser: the gate holds the viewer back (required mode). The
	// landing page shows short teasers (post text cut to the landing's 120
	// characters, no media, whose signed links would be the files
	// themselves); nothing else.
	ContentTeaser
	// ContentNone: the gate holds the viewer back and the landing page is
	// the only public part (landingPageOnly): no previews at all.
	ContentNone
)

// ContentFor decides what a viewer of an app may see, from the app's
// settings, the viewer's role and whether they hold a valid subscription.
func ContentFor(settings store.AppSettings, role string, hasValidSubscription bool) Content {
	switch {
	case !Gated(settings, role, hasValidSubscription):
		return ContentAll
	case settings.Features.SubscriptionGating.Settings.LandingPageOnly:
		return ContentNone
	}
	return ContentTeaser
}

// TeaserChars is how much of a post a teaser shows: the landing page's cut
// (SPEC.md section 9: 120 characters on landing posts).
const TeaserChars = 120

// Teaser cuts text for a viewer who may only see teasers.
func Teaser(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= TeaserChars {
		return text
	}
	r := []rune(text)
	return strings.TrimSpace(string(r[:TeaserChars-1])) + "…"
}

// paidNotices are the notification kinds whose text quotes paid content
// (a post's first words, an event's name, a reply).
var paidNotices = map[string]string{
	store.KindNewPost:     "New post for members",
	store.KindNewEvent:    "New event for members",
	store.KindEventUpdate: "An event for members was updated",
	store.KindReply:       "New reply for members",
}

// NoticeText is a notification's text as the viewer may read it: a viewer
// who may not see the app's content reads that there is something new for
// members, not what it says. Notices about the viewer's own orders,
// donations and membership are theirs and stay as written.
func NoticeText(c Content, kind, text string) string {
	if c == ContentAll {
		return text
	}
	if generic, ok := paidNotices[kind]; ok {
		return generic
	}
	return text
}
