package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"marquee/store"
)

// writers is the mixed mode of issue 22: members liking and unliking,
// replying and following at a set total rate while wrk reads, so the
// figures show what engagement costs the pages.
type writers struct {
	base    string
	cookies []string
	userIDs []string
	postIDs []string
	appID   string
	// liked (post -> reaction id) and following, per member, carry over
	// from one run to the next.
	liked     []map[string]string
	following []bool
	count     []int // writes made, per member
	done      atomic.Int64
	failed    atomic.Int64
	// why counts the failures by answer ("429", "503", "error" for no
	// answer): a rate limit refusing a member's tenth reply a minute is
	// the product working, a 5xx is not.
	mu      sync.Mutex
	why     map[string]int
	example map[string]string // the first failure of each kind
}

// failures says how many writes failed and why, for the summary line.
func (w *writers) failures() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.why))
	for k := range w.why {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d, first: %.160s", k, w.why[k], w.example[k]))
	}
	if len(parts) == 0 {
		return "0 failed"
	}
	return fmt.Sprintf("%d refused or failed (%s)", w.failed.Load(), strings.Join(parts, ", "))
}

// newWriters makes n members of the demo app with sessions and picks the
// posts they engage with.
func newWriters(ctx context.Context, st *store.Storage, base string, n int) (*writers, error) {
	demo, err := st.AppByIDOrName(ctx, "demo")
	if err != nil {
		return nil, err
	}
	community, err := st.CommunityOfApp(ctx, demo.ID)
	if err != nil {
		return nil, err
	}
	posts, err := st.CommunityPosts(ctx, community.ID, store.MessagePost, 1, 6)
	if err != nil {
		return nil, err
	}
	w := &writers{base: base, appID: demo.ID}
	for _, p := range posts.Messages {
		w.postIDs = append(w.postIDs, p.ID)
	}
	if len(w.postIDs) == 0 {
		return nil, fmt.Errorf("the demo has no posts to like")
	}
	stamp := time.Now().UnixNano()
	for i := 0; i < n; i++ {
		u, err := st.CreateUser(ctx, fmt.Sprintf("writer%d-%d@bench.test", i, stamp), fmt.Sprintf("writer%d_%d", i, stamp%100000), "x")
		if err != nil {
			return nil, err
		}
		// Confirmed, as the demo's own members are: posting and replying
		// wait for a confirmed address, and the bench's replies were
		// all refused for it.
		if _, err := st.DB().NewUpdate().Model((*store.User)(nil)).Set("email_verified = ?", true).Where("id = ?", u.ID).Exec(ctx); err != nil {
			return nil, err
		}
		if _, err := st.Follow(ctx, demo.ID, u.ID); err != nil {
			return nil, err
		}
		token, err := st.CreateSession(ctx, u.ID, "bench")
		if err != nil {
			return nil, err
		}
		w.cookies = append(w.cookies, "marquee_session="+token)
		w.userIDs = append(w.userIDs, u.ID)
		w.liked = append(w.liked, map[string]string{})
		w.following = append(w.following, true)
		w.count = append(w.count, 0)
	}
	return w, nil
}

// run writes at rate per second in all until ctx ends (one run at a time):
// each member writes on its own schedule (rate/n a second, the members
// staggered), so a slow answer delays only that member's next write. Of
// every 20 writes, 16 are a like or an unlike, 2 a reply and 2 an unfollow
// or a follow.
func (w *writers) run(ctx context.Context, rate int) {
	if rate <= 0 {
		return
	}
	n := len(w.cookies)
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for m := 0; m < n; m++ {
		wg.Add(1)
		go func(m int) {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(m) * time.Second / time.Duration(rate)):
			}
			tick := time.NewTicker(time.Duration(n) * time.Second / time.Duration(rate))
			defer tick.Stop()
			for {
				w.write(client, m)
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}(m)
	}
	wg.Wait()
}

// write makes member m's next write.
func (w *writers) write(client *http.Client, member int) {
	n := w.count[member]*len(w.cookies) + member
	w.count[member]++
	liked, following := w.liked, w.following
	post := w.postIDs[(n/len(w.cookies))%len(w.postIDs)]
	var err error
	switch n % 20 {
	case 7, 17:
		_, err = w.call(client, member, "POST", "/api/messages", map[string]any{
			"content": fmt.Sprintf("Bench reply %d", n), "type": "REPLY", "parentMessageId": post})
	case 9, 19:
		path := "/api/notifications/unfollow/" + w.appID
		if !following[member] {
			path = "/api/notifications/follow/" + w.appID
		}
		if _, err = w.call(client, member, "POST", path, nil); err == nil {
			following[member] = !following[member]
		}
	default:
		if !following[member] {
			return // only followers may react
		}
		if id, ok := liked[member][post]; ok {
			if _, err = w.call(client, member, "DELETE", "/api/messages/"+post+"/reactions/"+id, nil); err == nil {
				delete(liked[member], post)
			}
			break
		}
		var got struct {
			Data struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		var b []byte
		if b, err = w.call(client, member, "POST", "/api/messages/"+post+"/reactions", map[string]any{"reaction": "❤️"}); err == nil {
			if json.Unmarshal(b, &got) == nil && got.Data.ID != "" {
				liked[member][post] = got.Data.ID
			}
		}
	}
	if err != nil {
		w.failed.Add(1)
		reason := "error"
		var refused *refusal
		if errors.As(err, &refused) {
			reason = strconv.Itoa(refused.status)
		}
		w.mu.Lock()
		if w.why == nil {
			w.why, w.example = map[string]int{}, map[string]string{}
		}
		if w.why[reason]++; w.why[reason] == 1 {
			w.example[reason] = err.Error()
		}
		w.mu.Unlock()
	} else {
		w.done.Add(1)
	}
}

func (w *writers) call(client *http.Client, member int, method, path string, body any) ([]byte, error) {
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, w.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Cookie", w.cookies[member])
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	if res.StatusCode >= 300 {
		return nil, &refusal{status: res.StatusCode, what: fmt.Sprintf("%s %s: %d %s", method, path, res.StatusCode, buf.String())}
	}
	return buf.Bytes(), nil
}

// refusal is a write the server answered with an error status.
type refusal struct {
	status int
	what   string
}

func (r *refusal) Error() string { return r.what }
