//go:build !unix

package optimal

import "errors"

func syscallAlive(int) error { return errors.New("not probed on this system") }
