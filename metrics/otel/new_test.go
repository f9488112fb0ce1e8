package otel_test

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	zkotel "github.com/zklock/zklock/metrics/otel"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

func TestBadOptions(t *testing.T) {
	for name, opt := range map[string]zkotel.Option{
		"nil path function":  zkotel.WithPathAttribute(nil),
		"decreasing buckets": zkotel.WithBuckets([]float64{1, 0.5}),
		"repeated bucket":    zkotel.WithBuckets([]float64{1, 1}),
		"NaN bucket":         zkotel.WithBuckets([]float64{0.1, math.NaN()}),
		"infinite bucket":    zkotel.WithBuckets([]float64{0.1, math.Inf(1)}),
	} {
		t.Run(name, func(t *testing.T) {
			m, err := zkotel.New(noop.NewMeterProvider(), opt)
			require.ErrorIs(t, err, zklock.ErrInvalidArgument)
			require.Nil(t, m)
		})
	}
}

// refusingMeter refuses to create the session state gauge.
type refusingMeter struct{ noop.Meter }

var errRefused = errors.New("refused")

func (refusingMeter) Int64Gauge(string, ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	return noop.Int64Gauge{}, errRefused
}

type refusingProvider struct{ noop.MeterProvider }

func (refusingProvider) Meter(string, ...metric.MeterOption) metric.Meter { return refusingMeter{} }

func TestInstrumentError(t *testing.T) {
	m, err := zkotel.New(refusingProvider{})
	require.ErrorIs(t, err, errRefused)
	require.Nil(t, m)
}

// TestGlobalProvider: with a nil provider the instruments come from the
// global one, and follow a provider installed after New. OpenTelemetry
// hands the global provider's instruments over to the first provider
// installed, once per process, so the check runs in a process of its own
// (the test binary again): it holds then however often the test runs.
func TestGlobalProvider(t *testing.T) {
	if os.Getenv(globalChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGlobalProvider$", "-test.count=1")
		cmd.Env = append(os.Environ(), globalChild+"=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "PASS")
		return
	}
	m, err := zkotel.New(nil)
	require.NoError(t, err)
	mp, r := newProvider(t)
	otel.SetMeterProvider(mp)
	t.Cleanup(func() { otel.SetMeterProvider(noop.NewMeterProvider()) })
	m.Loss(zklock.KindMutex, "/a")
	got := collect(t, r)["zklock.losses"].Data.(metricdata.Sum[int64])
	require.Equal(t, int64(1), got.DataPoints[0].Value)
}

// globalChild marks the process TestGlobalProvider runs its check in.
const globalChild = "ZKLOCK_OTEL_GLOBAL_CHILD"
