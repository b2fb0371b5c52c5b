package detect

import "encoding/json"

// checkJSON is Check without its methods, for the default encoding.
type checkJSON Check

// MarshalJSON writes "ok": false for a check that was not made: a script
// that tests .ok must never read "not checked" as passed. Inside the
// plugin such a check does not stop a repair (OK stays true); the report
// says so with "notChecked": true (docs/scan-report.md).
func (c Check) MarshalJSON() ([]byte, error) {
	p := checkJSON(c)
	if p.NotChecked {
		p.OK = false
	}
	return json.Marshal(p)
}

// UnmarshalJSON reads a report back as the plugin made it: a not-checked
// check did not stop the repair.
func (c *Check) UnmarshalJSON(b []byte) error {
	var p checkJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if p.NotChecked {
		p.OK = true
	}
	*c = Check(p)
	return nil
}
