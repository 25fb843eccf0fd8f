package loadgen

import (
	"fmt"
	"strconv"
)

func fmtSprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
func itoa(i int) string                    { return strconv.Itoa(i) }
