package harness

import (
	"errors"
	"strings"
	"testing"
)

type ctl struct{ ran *string }

func (c *ctl) Run(int, <-chan struct{}) { *c.ran = "ran" }

// TestControllersAdd: a constructor's results are taken as they come, the
// controller alone (1.5, 1.6) or with an error (1.7+); the first error wins
// and nothing without Run is taken for a controller.
func TestControllersAdd(t *testing.T) {
	var a, b string
	var cs Controllers
	cs.Add(&ctl{&a})      // 1.5: the controller
	cs.Add(&ctl{&b}, nil) // 1.7: the controller and a nil error
	rs, err := cs.Runners()
	if err != nil || len(rs) != 2 {
		t.Fatalf("Runners() = %d, %v; want 2 controllers", len(rs), err)
	}
	rs[0](1, nil)
	rs[1](1, nil)
	if a != "ran" || b != "ran" {
		t.Errorf("the runners did not run their controllers: %q %q", a, b)
	}

	failed := errors.New("informer missing")
	for _, tc := range []struct {
		name string
		add  func(*Controllers)
		want string
	}{
		{"constructor error", func(cs *Controllers) { cs.Add((*ctl)(nil), failed); cs.Add(&ctl{&a}) }, "informer missing"},
		{"no Run", func(cs *Controllers) { cs.Add("not a controller") }, "has no Run"},
		{"not an error", func(cs *Controllers) { cs.Add(&ctl{&a}, 42) }, "where an error belongs"},
		{"three results", func(cs *Controllers) { cs.Add(&ctl{&a}, nil, nil) }, "returned 3 values"},
		{"no result", func(cs *Controllers) { cs.Add() }, "returned 0 values"},
	} {
		var cs Controllers
		tc.add(&cs)
		rs, err := cs.Runners()
		if err == nil || !strings.Contains(err.Error(), tc.want) || rs != nil {
			t.Errorf("%s: Runners() = %d, %v; want no runners and an error with %q", tc.name, len(rs), err, tc.want)
		}
	}
}
