package plan

// layout describes where a family's parameters are, beyond the dimensions
// in Shape, so that parameters can be counted when no weights are at hand.
type layout struct {
	norms      int  // Hidden-sized norm vectors per layer
	normBias   bool // LayerNorm with a bias vector (doubles norm parameters)
	qkvBias    bool // q, k, v projections carry biases
	qkNorm     bool // per-head RMSNorm on q and k
	gated      bool // SwiGLU/GeGLU MLP: three matrices instead of two
	routerBias bool // DeepSeek V3's expert score correction bias
	nope       int  // MLA: non-rotary part of a query/key head
	vHead      int  // MLA: value head size
	moe        []bool
	mamba      *mambaDims
}

type mambaDims struct {
	inner, state, conv, dtRank int
	convBias, projBias         bool
	jambaNorms                 bool // Jamba's extra dt/B/C RMSNorms
}

// countParams fills Params, ExpertParams, EmbedParams and ActiveParams from
// the shape and layout; it is exact for the families in hfArchs when the
// checkpoint has no extra tensors.
func countParams(s *Shape, l layout) {
	h := int64(s.Hidden)
	embed := int64(s.Vocab) * h
	total := embed + norm(h, 1, l.normBias)
	if !s.Tied {
		total += embed
	}
	var experts int64
	s.MoELayers = 0
	for i, kind := range s.Kinds {
		total += norm(h, l.norms, l.normBias)
		if kind == LayerState && l.mamba != nil {
			total += mambaParams(h, l.mamba)
		} else {
			total += attnParams(s, l)
		}
		if i < len(l.moe) && l.moe[i] {
			s.MoELayers++
			e := int64(s.Experts) * mlp(h, s.ExpertIntermediate, l.gated)
			experts += e
			total += e + int64(s.SharedExperts)*mlp(h, s.ExpertIntermediate, l.gated) + h*int64(s.Experts)
			if l.routerBias {
				total += int64(s.Experts)
			}
		} else {
			total += mlp(h, s.Intermediate, l.gated)
		}
	}
	s.Params, s.ExpertParams, s.EmbedParams = total, experts, embed
	s.ActiveParams = activeParams(s)
	s.ParamsSource = "estimated from config.json"
}

// activeParams keeps ExpertsPerToken of Experts routed experts.
func activeParams(s *Shape) int64 {
	if s.Experts == 0 || s.ExpertParams == 0 {
		return s.Params
	}
	unused := s.ExpertParams / int64(s.Experts) * int64(s.Experts-s.ExpertsPerToken)
	return s.Params - unused
}

func norm(h int64, n int, bias bool) int64 {
	if bias {
		return 2 * h * int64(n)
	}
	return h * int64(n)
}

func mlp(h int64, width int, gated bool) int64 {
	if gated {
		return 3 * h * int64(width)
	}
	return 2 * h * int64(width)
}

func attnParams(s *Shape, l layout) int64 {
	h, heads := int64(s.Hidden), int64(s.Heads)
	if s.MLA {
		qk := int64(l.nope + s.RopeDim)
		q := h * heads * qk
		if r := int64(s.QLoRARank); r > 0 {
			q = h*r + r + r*heads*qk
		}
		kvr := int64(s.KVLoRARank)
		kv := h*(kvr+int64(s.RopeDim)) + kvr + kvr*heads*int64(l.nope+l.vHead)
		return q + kv + heads*int64(l.vHead)*h
	}
	dk, dv, kv := int64(s.HeadDimK), int64(s.HeadDimV), int64(s.KVHeads)
	p := h*heads*dk + h*kv*dk + h*kv*dv + heads*dv*h
	if l.qkvBias {
		p += heads*dk + kv*dk + kv*dv
	}
	if l.qkNorm {
		p += 2 * dk
	}
	return p
}

func mambaParams(h int64, m *mambaDims) int64 {
	in, st, dt := int64(m.inner), int64(m.state), int64(m.dtRank)
	p := h*2*in + in*int64(m.conv) + in*(dt+2*st) + dt*in + in + in*st + in + in*h
	if m.convBias {
		p += in
	}
	if m.projBias {
		p += 2*in + h
	}
	if m.jambaNorms {
		p += dt + 2*st
	}
	return p
}
