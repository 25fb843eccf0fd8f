package groups

import "testing"

// TestUnitCompareVersions: versions compare as versions, not as strings
// and not by the order they arrived in: numeric segments as numbers, a v
// prefix ignored, a pre-release before its release, build metadata
// ignored; anything else is not a version.
func TestUnitCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"1.10", "1.9", 1},                   // not string order ("1.10" < "1.9" as strings)
		{"1.9", "1.10", -1},                  //
		{"v1.2.3", "1.2.3", 0},               // v prefix
		{"V2.0", "v1.99.99", 1},              //
		{"1.2", "1.2.0", 0},                  // missing segments are 0
		{"2.0.0-rc.1", "2.0.0", -1},          // pre-release before its release
		{"2.0.0", "2.0.0-rc.1", 1},           //
		{"2.0.0-rc.2", "2.0.0-rc.10", -1},    // numeric identifiers as numbers
		{"1.0.0-alpha", "1.0.0-alpha.1", -1}, // a prefix is older
		{"1.0.0-1", "1.0.0-alpha", -1},       // numeric before alphanumeric
		{"1.0.0-alpha", "1.0.0-beta", -1},    //
		{"1.0.0+build.7", "1.0.0+build.9", 0},
		{"10", "9", 1},
	} {
		got, ok := CompareVersions(c.a, c.b)
		if !ok || got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, true", c.a, c.b, got, ok, c.want)
		}
	}
	for _, bad := range []string{"", "v", "latest", "1..2", "1.2-", "1.x", "hmac:0123456789abcdef01234567", "-1", "1.2.3-rc..1"} {
		if _, ok := CompareVersions(bad, "1.0"); ok {
			t.Errorf("CompareVersions(%q, 1.0) ok; want not a version", bad)
		}
		if IsVersion(bad) {
			t.Errorf("IsVersion(%q) = true", bad)
		}
	}
}
