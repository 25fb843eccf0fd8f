package groups

import (
	"strconv"
	"strings"
)

// CompareVersions compares two agent versions as versions: -1 when a is
// older than b, 0 when they are equal, +1 when a is newer. ok is false
// when either is not a version, and then the order means nothing.
//
// A version is an optional "v" or "V", one or more dot-separated numeric
// segments (missing trailing segments count as 0: 1.2 = 1.2.0), an
// optional pre-release after "-" and optional build metadata after "+"
// (ignored). Segments compare as numbers (1.10 > 1.9); a pre-release is
// older than its release (2.0.0-rc.1 < 2.0.0), and pre-releases compare
// by their dot-separated identifiers as in Semantic Versioning 2.0.0
// (numeric ones as numbers and before alphanumeric ones; a shorter list
// that is a prefix of a longer one is older).
func CompareVersions(a, b string) (c int, ok bool) {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	if !oka || !okb {
		return 0, false
	}
	n := max(len(va.nums), len(vb.nums))
	for i := 0; i < n; i++ {
		x, y := seg(va.nums, i), seg(vb.nums, i)
		if x != y {
			return cmp(x < y), true
		}
	}
	switch {
	case len(va.pre) == 0 && len(vb.pre) == 0:
		return 0, true
	case len(va.pre) == 0:
		return 1, true
	case len(vb.pre) == 0:
		return -1, true
	}
	for i := 0; i < len(va.pre) && i < len(vb.pre); i++ {
		if c := comparePre(va.pre[i], vb.pre[i]); c != 0 {
			return c, true
		}
	}
	switch {
	case len(va.pre) < len(vb.pre):
		return -1, true
	case len(va.pre) > len(vb.pre):
		return 1, true
	}
	return 0, true
}

// IsVersion reports whether s reads as a version (CompareVersions).
func IsVersion(s string) bool {
	_, ok := parseVersion(s)
	return ok
}

type version struct {
	nums []uint64
	pre  []string
}

func parseVersion(s string) (version, bool) {
	var v version
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		pre := s[i+1:]
		s = s[:i]
		if pre == "" {
			return v, false
		}
		v.pre = strings.Split(pre, ".")
		for _, p := range v.pre {
			if p == "" {
				return v, false
			}
		}
	}
	if s == "" {
		return v, false
	}
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.ParseUint(part, 10, 64)
		if err != nil || part == "" || part[0] == '+' {
			return v, false
		}
		v.nums = append(v.nums, n)
	}
	return v, true
}

func seg(nums []uint64, i int) uint64 {
	if i < len(nums) {
		return nums[i]
	}
	return 0
}

func cmp(less bool) int {
	if less {
		return -1
	}
	return 1
}

// comparePre compares two pre-release identifiers.
func comparePre(a, b string) int {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		if na == nb {
			return 0
		}
		return cmp(na < nb)
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return strings.Compare(a, b)
}
