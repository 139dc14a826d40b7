package record

// What a failure says about the server. An objective run must not call a
// misconfigured or broken server "overloaded": a wrong URL, a wrong model
// or a protocol the client cannot read fails at any load, while a timeout,
// a 429 or an out-of-memory error is what a server does past its capacity.
const (
	// KindFailing: the server cannot be used as configured, at any load
	// (connect, 4xx, unreadable answers, a request that could not be built).
	KindFailing = "failing"
	// KindOverloaded: the server refuses or fails work because it has too
	// much of it (timeouts, 429, out of memory).
	KindOverloaded = "overloaded"
	// KindOther: a 5xx, a cut stream or an in-stream error, which either
	// can cause; counted, but taken as evidence of neither.
	KindOther = "other"
)

// Kind says which of KindFailing, KindOverloaded and KindOther an error
// class is evidence of (docs/METRICS.md, Errors).
func Kind(class string) string {
	switch class {
	case ClassConnect, ClassHTTP4xx, ClassMalformed, ClassNotStream, ClassEmptyStream, ClassClient:
		return KindFailing
	case ClassTimeoutFirst, ClassTimeoutMid, ClassRateLimited, ClassOOM:
		return KindOverloaded
	}
	return KindOther
}

// Cause is the kind that explains failures counted by class (class →
// count): KindFailing when any class fails at any load (fixed first),
// KindOverloaded when every one is overload, else KindOther (a 5xx or a
// cut stream, which either cause can explain).
func Cause(errs map[string]int) string {
	kinds := map[string]bool{}
	for c := range errs {
		kinds[Kind(c)] = true
	}
	switch {
	case kinds[KindFailing]:
		return KindFailing
	case kinds[KindOverloaded] && !kinds[KindOther]:
		return KindOverloaded
	}
	return KindOther
}
