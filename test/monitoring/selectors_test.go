package monitoring_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// promqlKeywords are identifiers that are not metric names: aggregation
// operators, set operators and modifiers. Functions are recognised by the
// parenthesis that follows them.
var promqlKeywords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "count": true, "stddev": true, "stdvar": true, "group": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true,
	"and": true, "or": true, "unless": true, "by": true, "without": true, "on": true, "ignoring": true,
	"group_left": true, "group_right": true, "bool": true, "offset": true, "inf": true, "nan": true,
}

// selectorsOf returns the instant vector selectors of a PromQL expression
// (metric name and label matchers, as written), in order and without
// duplicates. It understands the PromQL this project writes: selectors,
// ranges, offsets, function calls, aggregations with by/without, and
// binary operators with on/ignoring/group_left/group_right.
func selectorsOf(expr string) []string {
	var out []string
	seen := map[string]bool{}
	i := 0
	skipSpace := func(j int) int {
		for j < len(expr) && (expr[j] == ' ' || expr[j] == '\n' || expr[j] == '\t') {
			j++
		}
		return j
	}
	// closing finds the end of a bracketed run starting at expr[j] == open.
	closing := func(j int, open, close byte) int {
		depth := 0
		for ; j < len(expr); j++ {
			switch expr[j] {
			case '"':
				for j++; j < len(expr) && expr[j] != '"'; j++ {
					if expr[j] == '\\' {
						j++
					}
				}
			case open:
				depth++
			case close:
				depth--
				if depth == 0 {
					return j
				}
			}
		}
		return len(expr) - 1
	}
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isIdent := func(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '"': // a string outside braces (label_replace arguments)
			for i++; i < len(expr) && expr[i] != '"'; i++ {
				if expr[i] == '\\' {
					i++
				}
			}
			i++
		case c == '[':
			i = closing(i, '[', ']') + 1
		case c == '{':
			i = closing(i, '{', '}') + 1
		case c >= '0' && c <= '9' || c == '.':
			for i < len(expr) && (isIdent(expr[i]) || expr[i] == '.') {
				i++ // a number or a duration (5m, 1e+06)
			}
		case isIdentStart(c):
			start := i
			for i < len(expr) && isIdent(expr[i]) {
				i++
			}
			word := expr[start:i]
			next := skipSpace(i)
			switch {
			case word == "by" || word == "without" || word == "on" || word == "ignoring" || word == "group_left" || word == "group_right":
				if next < len(expr) && expr[next] == '(' {
					i = closing(next, '(', ')') + 1 // a label list
				}
			case word == "offset":
				i = next
				for i < len(expr) && (isIdent(expr[i]) || expr[i] == '-') {
					i++
				}
			case promqlKeywords[strings.ToLower(word)]:
			case next < len(expr) && expr[next] == '(':
				// a function call
			case next < len(expr) && expr[next] == '{':
				end := closing(next, '{', '}')
				sel := word + expr[next:end+1]
				if !seen[sel] {
					seen[sel] = true
					out = append(out, sel)
				}
				i = end + 1
			default:
				if !seen[word] {
					seen[word] = true
					out = append(out, word)
				}
			}
		default:
			i++
		}
	}
	return out
}

func TestSelectorsOf(t *testing.T) {
	cases := map[string]struct {
		expr string
		want []string
	}{
		"ratio of two sums": {
			expr: `(
  sum by (writer) (increase(a_total{job="j"}[20m]))
/
  sum by (writer) (increase(b_total{job="j"}[20m]))
) > 0.5`,
			want: []string{`a_total{job="j"}`, `b_total{job="j"}`},
		},
		"offset and unless": {
			expr: `sum(increase(c_total{job="j"}[20m])) > 0 or sum(c_total{job="j"} unless c_total{job="j"} offset 20m) > 0`,
			want: []string{`c_total{job="j"}`},
		},
		"histogram quantile": {
			expr: `histogram_quantile(0.99, sum by (name, le) (rate(q_bucket{job="j"}[1m]))) > 60`,
			want: []string{`q_bucket{job="j"}`},
		},
		"on and a matcher with a comma and braces in its value": {
			expr: `max(up{job="j"}) == 1 unless on () max(leader{job="j", name="a,b}c"}) == 1`,
			want: []string{`up{job="j"}`, `leader{job="j", name="a,b}c"}`},
		},
		"a string argument": {
			expr: `label_replace(m{job="j"}, "x", "$1", "y", "(.*)")`,
			want: []string{`m{job="j"}`},
		},
		"bare metric names and absent": {
			expr: `absent(up == 1) or process_resident_memory_bytes`,
			want: []string{"up", "process_resident_memory_bytes"},
		},
		"dashboard variables": {
			expr: `sum by (writer, operation) (rate(w_total{job=~"$job"}[$__rate_interval]))`,
			want: []string{`w_total{job=~"$job"}`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, selectorsOf(tc.expr)); diff != "" {
				t.Errorf("selectors (-want +got):\n%s", diff)
			}
		})
	}
}
