package harness

import "fmt"

// Controllers collects the controllers one longhorn-manager runs on a
// node. Add takes a constructor's call as it is: until 1.7 Longhorn's
// constructors return the controller, from 1.7 on the controller and an
// error, and Go passes either result list to a final ...any parameter, so
// one main.go calls the constructors of every release from 1.5 on.
type Controllers struct {
	runners []Runner
	err     error
}

// Add records the controller of a constructor's results, or the error
// they end with. After an error, Add does nothing.
func (cs *Controllers) Add(results ...any) {
	if cs.err != nil {
		return
	}
	if len(results) == 0 || len(results) > 2 {
		cs.err = fmt.Errorf("harness: a controller's constructor returned %d values, want the controller and at most an error", len(results))
		return
	}
	if len(results) == 2 && results[1] != nil {
		err, ok := results[1].(error)
		if !ok {
			err = fmt.Errorf("harness: a controller's constructor returned %T where an error belongs", results[1])
		}
		cs.err = err
		return
	}
	ctl, ok := results[0].(interface {
		Run(workers int, stopCh <-chan struct{})
	})
	if !ok {
		cs.err = fmt.Errorf("harness: %T has no Run(workers int, stopCh <-chan struct{})", results[0])
		return
	}
	cs.runners = append(cs.runners, ctl.Run)
}

// Runners returns the controllers added, or the first error.
func (cs *Controllers) Runners() ([]Runner, error) {
	if cs.err != nil {
		return nil, cs.err
	}
	return cs.runners, nil
}
