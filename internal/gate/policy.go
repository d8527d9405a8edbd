package gate

import (
	"context"

	"github.com/engram-memory/engram"
)

// Policy is the server's memory.gate (On) and memory.gate_mode (Mode:
// engram.GateRefuse or engram.GateQuarantine; "" refuses).
type Policy struct {
	On   bool
	Mode string
}

// resolve is the policy in effect for the request in ctx: the tenant's
// own gate and gate_mode (carried by the key's engram.Reader), where set,
// over the server's.
func (p Policy) resolve(ctx context.Context) Policy {
	if r := engram.ReaderFromContext(ctx); r != nil {
		switch r.Gate {
		case "on":
			p.On = true
		case "off":
			p.On = false
		}
		if r.GateMode != "" {
			p.Mode = r.GateMode
		}
	}
	return p
}

// Apply holds m to the gate (Enforce) when the policy in effect is on or
// the write asks with "gate": true (a request cannot opt out of a gate
// that is on). A memory that fails is refused with EUNPROCESSABLE, or,
// in quarantine mode, marked Quarantined (and stored archived, so no
// recall finds it until it is released) and nil returned. A key write is
// always refused: a key names one current value, which a quarantined
// memory could not be.
func (p Policy) Apply(ctx context.Context, ms engram.MemoryService, m *engram.Memory, asked *bool) error {
	p = p.resolve(ctx)
	if !p.On && (asked == nil || !*asked) {
		return nil
	}
	err := Enforce(ctx, ms, m)
	if err != nil && p.Mode == engram.GateQuarantine && m.Key == "" && engram.ErrorCode(err) == engram.EUNPROCESSABLE {
		m.Quarantined = true
		return nil
	}
	return err
}
