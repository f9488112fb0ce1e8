package otel

import (
	"fmt"
	"math"

	"github.com/zklock/zklock"
)

// Option configures New.
type Option func(*options) error

type options struct {
	buckets []float64
	path    func(string) string
}

// DefaultBuckets spans 1ms to about 4.4 minutes, by factors of 4: lock waits
// and holds range from a round trip to a long batch job. They are the
// Prometheus adapter's buckets, so that both show the same distribution.
var DefaultBuckets = []float64{0.001, 0.004, 0.016, 0.064, 0.256, 1.024, 4.096, 16.384, 65.536, 262.144}

// WithBuckets sets the bucket boundaries, in seconds, advised for the
// zklock.acquire.duration and zklock.hold.duration histograms (a View in
// the SDK can still replace them). They must be finite and strictly
// increasing; none means a single bucket. The default is DefaultBuckets.
func WithBuckets(b []float64) Option {
	return func(o *options) error {
		for i, x := range b {
			if math.IsNaN(x) || math.IsInf(x, 0) || (i > 0 && x <= b[i-1]) {
				return fmt.Errorf("%w: buckets %v must be finite and strictly increasing", zklock.ErrInvalidArgument, b)
			}
		}
		o.buckets = append([]float64{}, b...)
		return nil
	}
}

// WithPathAttribute maps each lock path to the value of the zklock.path
// attribute, for example to strip a per-job suffix, or to "" to drop the
// detail. f must be safe for concurrent use. The default keeps the path as
// it is.
func WithPathAttribute(f func(path string) string) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: nil path attribute function", zklock.ErrInvalidArgument)
		}
		o.path = f
		return nil
	}
}
