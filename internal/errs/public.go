package errs

import "reflect"

// PublicPkg is the import path of the package whose error types mirror
// this package's: the root package, which cannot be imported from here.
const PublicPkg = "github.com/zklock/zklock"

// asPublic is errors.As for the root package's twin of e: the root
// package defines LockedError and WrongKindError itself, so that go doc
// shows their fields, but the layers that detect the conditions sit below
// it and cannot name its types. When target points to a pointer to a
// struct of PublicPkg named as e's type is, asPublic sets it to a new such
// struct with e's fields, converted by name (Kind to the root's Kind). So
// errors.As(err, &zklock.LockedError{}) holds for every error the library
// returns, however deep the wrapping, with no conversion at each return.
// The root package's tests check that the twins' fields match.
func asPublic(e, target any) bool {
	tp := reflect.ValueOf(target)
	if tp.Kind() != reflect.Pointer || tp.IsNil() {
		return false
	}
	pt := tp.Elem().Type() // *zklock.X
	if pt.Kind() != reflect.Pointer || pt.Elem().Kind() != reflect.Struct {
		return false
	}
	src := reflect.ValueOf(e).Elem()
	dt := pt.Elem()
	if dt.PkgPath() != PublicPkg || dt.Name() != src.Type().Name() {
		return false
	}
	dst := reflect.New(dt)
	for i := 0; i < dt.NumField(); i++ {
		f := dt.Field(i)
		sv := src.FieldByName(f.Name)
		if !sv.IsValid() || !sv.Type().ConvertibleTo(f.Type) {
			return false
		}
		dst.Elem().Field(i).Set(sv.Convert(f.Type))
	}
	tp.Elem().Set(dst)
	return true
}
