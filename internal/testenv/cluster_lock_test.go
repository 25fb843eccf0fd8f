package testenv

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

// TestUnitLayoutLock: a test that uses a layout (shared lock) keeps out a
// test that stops its nodes (exclusive) until it ends, while another user
// gets in at once; a stopper keeps out users too. The "node" is a made-up
// address: no server is involved.
func TestUnitLayoutLock(t *testing.T) {
	first := "test-layout-lock:" + strconv.Itoa(os.Getpid())
	try := func(how int) bool { // can a third party take the lock now?
		t.Helper()
		f, err := os.OpenFile(lockName(first), os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return true
		}
		if err != syscall.EWOULDBLOCK {
			t.Fatal(err)
		}
		return false
	}
	t.Cleanup(func() { os.Remove(lockName(first)) })

	t.Run("user", func(t *testing.T) {
		lockLayout(t, first, syscall.LOCK_SH)
		if try(syscall.LOCK_EX) {
			t.Error("a stopper got the layout while a test used it")
		}
		if !try(syscall.LOCK_SH) {
			t.Error("another user was kept out by a user")
		}
	})
	if !try(syscall.LOCK_EX) {
		t.Error("the user's lock outlived its test")
	}
	t.Run("stopper", func(t *testing.T) {
		lockLayout(t, first, syscall.LOCK_EX)
		if try(syscall.LOCK_SH) {
			t.Error("a user got the layout while a test stopped its nodes")
		}
	})
	if !try(syscall.LOCK_SH) {
		t.Error("the stopper's lock outlived its test")
	}
}
