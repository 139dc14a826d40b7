package record

import "testing"

func TestKind(t *testing.T) {
	for class, want := range map[string]string{
		ClassConnect: KindFailing, ClassHTTP4xx: KindFailing, ClassMalformed: KindFailing,
		ClassNotStream: KindFailing, ClassEmptyStream: KindFailing, ClassClient: KindFailing,
		ClassTimeoutFirst: KindOverloaded, ClassTimeoutMid: KindOverloaded,
		ClassRateLimited: KindOverloaded, ClassOOM: KindOverloaded,
		ClassHTTP5xx: KindOther, ClassStreamCut: KindOther, ClassServerError: KindOther,
		ClassCancelled: KindOther, "unknown": KindOther,
	} {
		if got := Kind(class); got != want {
			t.Errorf("Kind(%q) = %q, want %q", class, got, want)
		}
	}
}

// TestCause: one failing class decides, overload alone is overload, and a
// class either cause explains makes the rest unsure.
func TestCause(t *testing.T) {
	for _, tc := range []struct {
		name string
		errs map[string]int
		want string
	}{
		{"a failing class among overload", map[string]int{ClassConnect: 1, ClassTimeoutFirst: 9}, KindFailing},
		{"overload alone", map[string]int{ClassRateLimited: 3, ClassOOM: 1}, KindOverloaded},
		{"overload and a 5xx", map[string]int{ClassRateLimited: 3, ClassHTTP5xx: 1}, KindOther},
		{"none", nil, KindOther},
	} {
		if got := Cause(tc.errs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
