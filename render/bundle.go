package render

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// ServerBuildOptions are the esbuild options for a bundle that goja runs.
// They live here once so the real build (scripts/build) and the test fixtures
// produce bundles the same way.
// root is the project root (where node_modules lives); relative entry and
// out paths are resolved against it.
func ServerBuildOptions(root, entry, outFile string) api.BuildOptions {
	return api.BuildOptions{
		AbsWorkingDir: root,
		EntryPoints:   []string{entry},
		Outfile:       outFile,
		Bundle:        true,
		Write:         true,
		Format:        api.FormatIIFE,
		// "browser" keeps esbuild from assuming Node built-ins; goja has neither.
		Platform: api.PlatformBrowser,
		// goja runs ES5.1 plus most of ES2015-2020; es2017 lowers the rest
		// (object spread, ?. and ??) so nothing newer reaches it.
		Target:            api.ES2017,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		JSX:               api.JSXAutomatic,
		Define:            map[string]string{"process.env.NODE_ENV": `"production"`},
		// The legacy server build provides renderToString and touches no host
		// API (MessageChannel, TextEncoder, ...) that goja lacks.
		// react-dom's package exports hide cjs/, so alias to the file path
		// (alias targets starting with ./ resolve in AbsWorkingDir).
		Alias: map[string]string{
			"react-dom/server": "./node_modules/react-dom/cjs/react-dom-server-legacy.browser.production.js",
		},
		Plugins:  []api.Plugin{joinChunksPlugin},
		LogLevel: api.LogLevelSilent,
	}
}

// joinChunksPlugin rewrites React's renderToString to collect chunks in an
// array and join them once. Under goja, `result += chunk` copies the whole
// string on every chunk, which dominated render time (DESIGN.md measures it).
// The build fails loudly if React's code changes shape, so the patch never
// silently stops applying.
var joinChunksPlugin = api.Plugin{
	Name: "react-join-chunks",
	Setup: func(b api.PluginBuild) {
		b.OnLoad(api.OnLoadOptions{Filter: `react-dom-server-legacy\.browser\.production\.js$`}, func(args api.OnLoadArgs) (api.OnLoadResult, error) {
			raw, err := os.ReadFile(args.Path)
			if err != nil {
				return api.OnLoadResult{}, fmt.Errorf("read %s: %w", args.Path, err)
			}
			src := string(raw)
			for _, r := range chunkJoinRewrites {
				if strings.Count(src, r[0]) != 1 {
					return api.OnLoadResult{}, fmt.Errorf("react-join-chunks: expected one %q in %s", r[0], args.Path)
				}
				src = strings.Replace(src, r[0], r[1], 1)
			}
			if src, err = ownKeyLoops(src); err != nil {
				return api.OnLoadResult{}, fmt.Errorf("react-join-chunks: %s: %w", args.Path, err)
			}
			return api.OnLoadResult{Contents: &src, Loader: api.LoaderJS}, nil
		})
	},
}

var chunkJoinRewrites = [][2]string{
	{"fatalError = null,\n    result = \"\",", "fatalError = null,\n    result = [],"},
	{"null !== chunk && (result += chunk);", "null !== chunk && result.push(chunk);"},
	{"if (!readyToStream) throw Error(formatProdErrorMessage(426));\n  return result;", "if (!readyToStream) throw Error(formatProdErrorMessage(426));\n  return result.join(\"\");"},
	// React escapes text and attribute values one character at a time,
	// appending each escape to a growing string: a JSON attribute of island
	// props (thousands of quotes) cost O(n^2) copies under goja. The
	// engine's native escape (natives.go) gives the same output; without
	// it (Node), global replaces do, in a few linear passes.
	{escapeLoop, escapeReplace},
	// A segment's chunks reached the result one JS call and one native push
	// each, three times what rendering them cost under goja; they go as one
	// native join per run of chunks between child segments (join turns a
	// null chunk into "", as the push skipped it).
	{flushLoop, flushJoin},
}

const flushLoop = `      for (var childIdx = 0; childIdx < segment.length; childIdx++) {
        for (r = segment[childIdx]; chunkIdx < r.index; chunkIdx++)
          destination.push(chunks[chunkIdx]);
        r = flushSegment(request, destination, r, hoistableState);
      }
      for (; chunkIdx < chunks.length - 1; chunkIdx++)
        destination.push(chunks[chunkIdx]);
      chunkIdx < chunks.length && (r = destination.push(chunks[chunkIdx]));
      return r;`

const flushJoin = `      for (var childIdx = 0; childIdx < segment.length; childIdx++) {
        r = segment[childIdx];
        chunkIdx < r.index &&
          (destination.push(chunks.slice(chunkIdx, r.index).join("")),
          (chunkIdx = r.index));
        r = flushSegment(request, destination, r, hoistableState);
      }
      chunkIdx < chunks.length &&
        (r = destination.push((chunkIdx ? chunks.slice(chunkIdx) : chunks).join("")));
      return r;`

const escapeLoop = `  var match = matchHtmlRegExp.exec(text);
  if (match) {
    var html = "",
      index,
      lastIndex = 0;
    for (index = match.index; index < text.length; index++) {
      switch (text.charCodeAt(index)) {
        case 34:
          match = "&quot;";
          break;
        case 38:
          match = "&amp;";
          break;
        case 39:
          match = "&#x27;";
          break;
        case 60:
          match = "&lt;";
          break;
        case 62:
          match = "&gt;";
          break;
        default:
          continue;
      }
      lastIndex !== index && (html += text.slice(lastIndex, index));
      lastIndex = index + 1;
      html += match;
    }
    text = lastIndex !== index ? html + text.slice(lastIndex, index) : html;
  }
  return text;`

const escapeReplace = `  if (typeof __marqueeEscape === "function") return __marqueeEscape(text);
  if (!matchHtmlRegExp.test(text)) return text;
  return text
    .replace(/&/g, "&amp;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#x27;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;");`

// propsLoop is React's walk over an element's props (every element
// rendered runs one or more).
var propsLoop = regexp.MustCompile(`for \((var )?([A-Za-z_$][\w$]*) in props\)`)

// propsLoops is how many of them React's server renderer has: a different
// count means its code changed shape, and the rewrite is looked at again.
const propsLoops = 22

// ownKeyLoops walks props with Object.keys instead of for-in. Under goja a
// for-in also walks Object.prototype's properties for enumerable ones,
// which doubled the cost of every element's props loop; every loop checks
// hasOwnProperty or copies from a plain object, so the keys visited are the
// same, in the same order.
func ownKeyLoops(src string) (string, error) {
	n := 0
	out := propsLoop.ReplaceAllStringFunc(src, func(loop string) string {
		m := propsLoop.FindStringSubmatch(loop)
		n++
		keys, i := fmt.Sprintf("$ownKeys%d", n), fmt.Sprintf("$ownKey%d", n)
		decl := ""
		if m[1] != "" {
			decl = m[2] + ", "
		}
		return fmt.Sprintf("for (var %s%s = Object.keys(props), %s = 0; %s < %s.length && ((%s = %s[%s]), !0); %s++)",
			decl, keys, i, i, keys, m[2], keys, i, i)
	})
	if n != propsLoops {
		return "", fmt.Errorf("expected %d loops over props, found %d", propsLoops, n)
	}
	return out, nil
}

// BuildServerBundle bundles entry into outFile for goja. Relative paths are
// taken from the project root (found by walking up to go.mod), so it works
// from scripts/build and from tests running in render/.
func BuildServerBundle(entry, outFile string) error {
	root, err := ProjectRoot()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(outFile) {
		outFile = filepath.Join(root, outFile)
	}
	res := api.Build(ServerBuildOptions(root, entry, outFile))
	return BuildError(res.Errors)
}

// ProjectRoot is the nearest directory at or above the working directory
// that holds go.mod.
func ProjectRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BuildError turns esbuild messages into one readable error (nil if none).
func BuildError(msgs []api.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	formatted := api.FormatMessages(msgs, api.FormatMessagesOptions{Kind: api.ErrorMessage})
	return fmt.Errorf("esbuild: %d error(s):\n%s", len(msgs), strings.Join(formatted, ""))
}
