package alerter

import "testing"

func TestValidDatabase(t *testing.T) {
	for _, ok := range []string{"errtrail", "errtrail_e2e_1", "_x"} {
		if err := ValidDatabase(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "bad-name", "db; DROP TABLE x", "1db", "a.b"} {
		if ValidDatabase(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
