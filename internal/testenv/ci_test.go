package testenv

import "testing"

// TestUnitIsCI: every value a CI service sets counts as CI; only an unset
// CI, "0" and "false" (in any case, around spaces) do not. A value such as
// "yes" or "True" that counted as "not CI" would turn every missing server
// into a skip and let integration tests vanish from a CI run.
func TestUnitIsCI(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "0": false, "false": false, "FALSE": false, " False ": false,
		"true": true, "1": true, "yes": true, "True": true, "on": true, "ci": true,
	} {
		if got := isCI(v); got != want {
			t.Errorf("isCI(%q) = %v, want %v", v, got, want)
		}
	}
}
