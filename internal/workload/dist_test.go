package workload

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestParseDist(t *testing.T) {
	tests := []struct {
		in      string
		want    LengthDist
		wantErr bool
	}{
		{in: "512", want: LengthDist{Kind: "fixed", A: 512}},
		{in: "fixed:7", want: LengthDist{Kind: "fixed", A: 7}},
		{in: "uniform:10,20", want: LengthDist{Kind: "uniform", A: 10, B: 20}},
		{in: "normal:512,64", want: LengthDist{Kind: "normal", A: 512, B: 64}},
		{in: "lognormal:300,100,10,2000", want: LengthDist{Kind: "lognormal", A: 300, B: 100, Lo: 10, Hi: 2000}},
		{in: "0", wantErr: true},             // a zero-length prompt cannot be sent
		{in: "uniform:20,10", wantErr: true}, // max below min
		{in: "normal:5", wantErr: true},      // missing sd
		{in: "zipf:1,2", wantErr: true},      // unknown kind
		{in: "abc", wantErr: true},           // not a number
		{in: "-5", wantErr: true},            // negative
	}
	for _, tt := range tests {
		got, err := ParseLengthDist(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseLengthDist(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil {
			if got != tt.want {
				t.Errorf("ParseLengthDist(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if back, _ := ParseLengthDist(got.String()); back != got {
				t.Errorf("round trip of %q: %+v", tt.in, back)
			}
		}
	}
}

func TestDrawMoments(t *testing.T) {
	tests := []struct {
		spec     string
		mean, sd float64
	}{
		{"100", 100, 0},
		{"uniform:100,200", 150, math.Sqrt((101*101 - 1) / 12.0)},
		{"normal:500,50", 500, 50},
		{"lognormal:300,150", 300, 150},
	}
	for _, tt := range tests {
		d, err := ParseLengthDist(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		const n = 20000
		var sum, sq float64
		for range n {
			v := float64(d.Draw(r))
			sum += v
			sq += v * v
		}
		mean := sum / n
		sd := math.Sqrt(sq/n - mean*mean)
		if math.Abs(mean-tt.mean) > 0.02*tt.mean {
			t.Errorf("%s: mean %v, want %v", tt.spec, mean, tt.mean)
		}
		if math.Abs(sd-tt.sd) > 0.05*tt.sd+0.5 {
			t.Errorf("%s: sd %v, want %v", tt.spec, sd, tt.sd)
		}
	}
}

func TestDrawIsSeeded(t *testing.T) {
	d, _ := ParseLengthDist("normal:100,30")
	a, b := rand.New(rand.NewPCG(7, 7)), rand.New(rand.NewPCG(7, 7))
	for range 100 {
		if x, y := d.Draw(a), d.Draw(b); x != y {
			t.Fatalf("same seed gave %d and %d", x, y)
		}
	}
}

func TestDrawClampAndMinimum(t *testing.T) {
	d, _ := ParseLengthDist("normal:5,100,2,8")
	r := rand.New(rand.NewPCG(1, 1))
	for range 1000 {
		if v := d.Draw(r); v < 2 || v > 8 {
			t.Fatalf("draw %d outside clamp [2,8]", v)
		}
	}
	d, _ = ParseLengthDist("normal:1,100")
	for range 1000 {
		if v := d.Draw(r); v < 1 {
			t.Fatalf("draw %d below 1", v)
		}
	}
}
