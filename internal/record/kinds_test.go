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
