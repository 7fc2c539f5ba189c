package units

import "fmt"

// FieldError is a range or consistency violation found by a config
// section's Validate method, naming the offending key relative to that
// section ("cores", or "host.cores" for a nested one). The scenario loader
// turns it into a problem with the full key path and the line of the key.
// It lives here, in a leaf package that every config section already
// imports for its quantities, so that sections defined in other packages
// can report fields without importing the loader (which imports them).
type FieldError struct {
	Field string // key path relative to the validated section
	Msg   string // what is wrong and what would be right
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// ConfigField reports the key path; the loader looks for this method, so
// any error type with it is placed at its key.
func (e *FieldError) ConfigField() string { return e.Field }

// Invalid returns a *FieldError for field with a formatted message. Combine
// several with errors.Join to report them all.
func Invalid(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}
