package abi

// Encoding and decoding of the messages exchanged with a plugin. Each message
// is its fields in the order documented in ABI.md, with no framing: the
// buffer's length delimits it. Decoders copy the input once (into a string)
// and never keep a reference to it.

// AppendEvent appends an Event. Its data and metadata are each preceded by
// their byte length (4 bytes, little-endian), so a reader can skip or keep
// them without walking their attributes.
func AppendEvent(dst []byte, e *Event) []byte {
	dst = AppendString(dst, e.Stream)
	dst = AppendString(dst, e.StreamID)
	dst = AppendUvarint(dst, e.Version)
	dst = AppendString(dst, e.Type)
	dst = appendSized(dst, e.Data)
	dst = appendSized(dst, e.Metadata)
	return AppendString(dst, e.Timestamp)
}

func appendSized(dst []byte, it Item) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = AppendOptItem(dst, it)
	n := len(dst) - at - 4
	dst[at], dst[at+1], dst[at+2], dst[at+3] = byte(n), byte(n>>8), byte(n>>16), byte(n>>24)
	return dst
}

// ReadEvent reads an Event.
func (r *Reader) ReadEvent(e *Event) {
	e.Stream = r.String()
	e.StreamID = r.String()
	e.Version = r.Uvarint()
	e.Type = r.String()
	e.Data = r.sizedItem()
	e.Metadata = r.sizedItem()
	e.Timestamp = r.String()
}

func (r *Reader) sizedItem() Item {
	raw := r.Raw(int(r.Fixed32()))
	if r.err != nil {
		return nil
	}
	sub := Reader{s: raw}
	it := sub.OptItem()
	if err := sub.End(); err != nil {
		r.Fail("event item: %v", err)
		return nil
	}
	return it
}

// RawEvent reads an Event keeping its data and metadata encoded (each an
// optional item, "" when the field is empty), without decoding them.
func (r *Reader) RawEvent(e *Event) (data, metadata string) {
	e.Stream = r.String()
	e.StreamID = r.String()
	e.Version = r.Uvarint()
	e.Type = r.String()
	data = r.Raw(int(r.Fixed32()))
	metadata = r.Raw(int(r.Fixed32()))
	e.Timestamp = r.String()
	return data, metadata
}

// AppendOptError appends an optional Error: 0, or 1 then tag and message.
func AppendOptError(dst []byte, e *Error) []byte {
	if e == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	return appendError(dst, e)
}

func appendError(dst []byte, e *Error) []byte {
	dst = AppendString(dst, e.Tag)
	return AppendString(dst, e.Message)
}

// OptError reads an optional Error.
func (r *Reader) OptError() *Error {
	if !r.Bool() {
		return nil
	}
	return &Error{Tag: r.String(), Message: r.String()}
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = AppendUvarint(dst, uint64(len(ss)))
	for _, s := range ss {
		dst = AppendString(dst, s)
	}
	return dst
}

func (r *Reader) strings() []string {
	n := r.Count(1)
	if n == 0 {
		return nil
	}
	ss := make([]string, n)
	for i := range ss {
		ss[i] = r.String()
	}
	return ss
}

// AppendDescription appends a Description.
func AppendDescription(dst []byte, d *Description) []byte {
	dst = AppendString(dst, d.Name)
	dst = AppendString(dst, d.Version)
	dst = AppendUvarint(dst, uint64(d.ABIMajor))
	dst = AppendUvarint(dst, uint64(d.ABIMinor))
	dst = AppendUvarint(dst, uint64(len(d.Sources)))
	for i := range d.Sources {
		s := &d.Sources[i]
		dst = AppendString(dst, s.Name)
		dst = AppendString(dst, s.Stream)
		dst = appendStrings(dst, s.EventTypes)
		dst = AppendString(dst, s.Mode)
	}
	dst = appendStrings(dst, d.Capabilities)
	if len(d.Composites) == 0 {
		return dst // 1.2's field is optional: absent when nothing is declared
	}
	dst = AppendUvarint(dst, uint64(len(d.Composites)))
	for i := range d.Composites {
		dst = AppendString(dst, d.Composites[i].Source)
		dst = appendStrings(dst, d.Composites[i].Fields)
	}
	return dst
}

// DecodeDescription decodes a Description.
func DecodeDescription(b []byte) (*Description, error) {
	r := Reader{s: string(b)}
	d := &Description{Name: r.String(), Version: r.String()}
	d.ABIMajor = r.u32()
	d.ABIMinor = r.u32()
	if n := r.Count(4); n > 0 {
		d.Sources = make([]SourceDesc, n)
		for i := range d.Sources {
			s := &d.Sources[i]
			s.Name = r.String()
			s.Stream = r.String()
			s.EventTypes = r.strings()
			s.Mode = r.String()
		}
	}
	d.Capabilities = r.strings()
	if r.err == nil && r.Remaining() > 0 { // 1.2: the declared composites
		if n := r.Count(2); n > 0 {
			d.Composites = make([]SourceComposite, n)
			for i := range d.Composites {
				d.Composites[i] = SourceComposite{Source: r.String(), Fields: r.strings()}
			}
		}
	}
	return done(d, &r)
}

func (r *Reader) u32() uint32 {
	x := r.Uvarint()
	if x > 0xffffffff {
		r.Fail("value %d exceeds 32 bits", x)
	}
	return uint32(x)
}

// done ends a top-level message: nil and the error when decoding failed.
// Bytes after the known fields are ignored, so a minor version can append
// fields (see ABI.md, "Versioning").
func done[T any](p *T, r *Reader) (*T, error) {
	if r.err != nil {
		return nil, r.err
	}
	return p, nil
}

// AppendKeyRequest appends a KeyRequest.
func AppendKeyRequest(dst []byte, q *KeyRequest) []byte {
	dst = AppendString(dst, q.Source)
	dst = AppendUvarint(dst, uint64(len(q.Events)))
	for i := range q.Events {
		dst = AppendEvent(dst, &q.Events[i])
	}
	return dst
}

// DecodeKeyRequest decodes a KeyRequest.
func DecodeKeyRequest(b []byte) (*KeyRequest, error) {
	r := Reader{s: string(b)}
	q := &KeyRequest{Source: r.String()}
	if n := r.Count(12); n > 0 {
		q.Events = make([]Event, n)
		for i := range q.Events {
			r.ReadEvent(&q.Events[i])
		}
	}
	return done(q, &r)
}

// AppendKeyResponse appends a KeyResponse.
func AppendKeyResponse(dst []byte, p *KeyResponse) []byte {
	dst = AppendUvarint(dst, uint64(len(p.Keys)))
	for i := range p.Keys {
		dst = AppendOptItem(dst, p.Keys[i].Key)
		dst = AppendOptError(dst, p.Keys[i].Error)
	}
	return dst
}

// DecodeKeyResponse decodes a KeyResponse. A key encoded exactly like the
// one decoded before it (the events of one row, which a batch most often
// brings together) shares its Item instead of being decoded again: the
// keys are to be read, not changed.
func DecodeKeyResponse(b []byte) (*KeyResponse, error) {
	r := Reader{s: string(b)}
	p := &KeyResponse{}
	if n := r.Count(2); n > 0 {
		p.Keys = make([]KeyResult, n)
		var prev Item      // the last key decoded
		var prevRaw string // its encoding
		for i := range p.Keys {
			// An encoded item delimits itself: input that starts with
			// prev's encoding holds prev there.
			if o := r.off; prev != nil && len(r.s)-o >= len(prevRaw) && r.s[o:o+len(prevRaw)] == prevRaw {
				r.off = o + len(prevRaw)
				p.Keys[i].Key = prev
			} else {
				p.Keys[i].Key = r.OptItem()
				if r.err == nil && p.Keys[i].Key != nil {
					prev, prevRaw = p.Keys[i].Key, r.s[o:r.off]
				}
			}
			p.Keys[i].Error = r.OptError()
		}
	}
	return done(p, &r)
}

// AppendEvolveRequest appends an EvolveRequest. The key and the state are
// sized like an event's data, so a guest can keep them encoded until needed.
func AppendEvolveRequest(dst []byte, q *EvolveRequest) []byte {
	dst = appendSized(dst, q.Key)
	dst = AppendString(dst, q.StreamID)
	dst = appendSized(dst, q.State)
	dst = AppendUvarint(dst, uint64(len(q.Events)))
	for i := range q.Events {
		dst = AppendString(dst, q.Events[i].Source)
		dst = AppendEvent(dst, &q.Events[i].Event)
	}
	if q.OmitState { // ABI 1.1: the flags byte, absent when zero
		dst = append(dst, EvolveFlagOmitState)
	}
	return dst
}

// EvolveFlagOmitState is bit 0 of an EvolveRequest's flags byte (ABI 1.1):
// the caller needs only whether the state exists after the run.
const EvolveFlagOmitState = 1

// DecodeEvolveRequest decodes an EvolveRequest.
func DecodeEvolveRequest(b []byte) (*EvolveRequest, error) {
	r := Reader{s: string(b)}
	q := &EvolveRequest{Key: r.sizedItem(), StreamID: r.String(), State: r.sizedItem()}
	if n := r.Count(13); n > 0 {
		q.Events = make([]SourcedEvent, n)
		for i := range q.Events {
			q.Events[i].Source = r.String()
			r.ReadEvent(&q.Events[i].Event)
		}
	}
	if r.err == nil && r.Remaining() > 0 {
		q.OmitState = r.Byte()&EvolveFlagOmitState != 0
	}
	return done(q, &r)
}

// AppendDecision appends a Decision.
func AppendDecision(dst []byte, d *Decision) []byte {
	dst = append(dst, byte(d.Outcome))
	dst = AppendBool(dst, d.Remove)
	dst = AppendOptError(dst, d.Error)
	dst = AppendUvarint(dst, uint64(len(d.Effects)))
	for i := range d.Effects {
		dst = AppendValue(dst, d.Effects[i])
	}
	return dst
}

// ReadDecision reads a Decision.
func (r *Reader) ReadDecision(d *Decision) {
	d.Outcome = Outcome(r.Byte())
	if r.err == nil && (d.Outcome < Applied || d.Outcome > Failed) {
		r.Fail("unknown outcome %d", d.Outcome)
	}
	d.Remove = r.Bool()
	d.Error = r.OptError()
	if n := r.Count(1); n > 0 {
		d.Effects = make([]Value, n)
		for i := range d.Effects {
			d.Effects[i] = r.Value()
		}
	}
}

// AppendEvolveResponse appends an EvolveResponse: the decisions, each
// starting with its outcome byte (1–4), ended by a 0 byte, then the state,
// removed and the item. (Decisions come first so that a guest can write
// each as it folds, before it knows the final state.)
func AppendEvolveResponse(dst []byte, p *EvolveResponse) []byte {
	for i := range p.Decisions {
		dst = AppendDecision(dst, &p.Decisions[i])
	}
	dst = append(dst, 0)
	dst = AppendOptItem(dst, p.State)
	dst = AppendBool(dst, p.Removed)
	return AppendOptItem(dst, p.Item)
}

// DecodeEvolveResponse decodes an EvolveResponse.
func DecodeEvolveResponse(b []byte) (*EvolveResponse, error) {
	r := Reader{s: string(b)}
	p := &EvolveResponse{}
	n := 0
	for sub := (Reader{s: r.s}); ; n++ {
		if o := sub.off; o+4 <= len(sub.s) && sub.s[o+1] == 0 && sub.s[o+2] == 0 && sub.s[o+3] == 0 &&
			(sub.s[o] == byte(Applied) || sub.s[o] == byte(Skipped)) {
			sub.off = o + 4 // the common decision: no removal, error or effects
			continue
		}
		if o := sub.Byte(); o == 0 || sub.err != nil {
			break
		} else if Outcome(o) > Failed {
			break // reported by ReadDecision below
		}
		sub.Bool()
		if sub.Bool() {
			sub.SkipString()
			sub.SkipString()
		}
		for k := sub.Count(1); k > 0 && sub.err == nil; k-- {
			sub.SkipValue()
		}
		if sub.err != nil {
			n++ // let ReadDecision report the error
			break
		}
	}
	if n > 0 {
		p.Decisions = make([]Decision, n)
		for i := range p.Decisions {
			if o := r.off; o+4 <= len(r.s) && r.s[o+1] == 0 && r.s[o+2] == 0 && r.s[o+3] == 0 &&
				(r.s[o] == byte(Applied) || r.s[o] == byte(Skipped)) {
				p.Decisions[i].Outcome = Outcome(r.s[o])
				r.off = o + 4
				continue
			}
			r.ReadDecision(&p.Decisions[i])
		}
	}
	if r.Byte() != 0 && r.err == nil {
		r.Fail("decisions not ended")
	}
	p.State = r.OptItem()
	p.Removed = r.Bool()
	p.Item = r.OptItem()
	return done(p, &r)
}

// AppendInitialRequest appends an InitialRequest.
func AppendInitialRequest(dst []byte, q *InitialRequest) []byte {
	dst = AppendString(dst, q.Source)
	dst = AppendString(dst, q.StreamID)
	dst = AppendOptItem(dst, q.Key)
	if q.Event == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	return AppendEvent(dst, q.Event)
}

// DecodeInitialRequest decodes an InitialRequest.
func DecodeInitialRequest(b []byte) (*InitialRequest, error) {
	r := Reader{s: string(b)}
	q := &InitialRequest{Source: r.String(), StreamID: r.String(), Key: r.OptItem()}
	if r.Bool() {
		q.Event = &Event{}
		r.ReadEvent(q.Event)
	}
	return done(q, &r)
}

// AppendInitialResponse appends an InitialResponse.
func AppendInitialResponse(dst []byte, p *InitialResponse) []byte {
	return AppendOptItem(dst, p.State)
}

// DecodeInitialResponse decodes an InitialResponse.
func DecodeInitialResponse(b []byte) (*InitialResponse, error) {
	r := Reader{s: string(b)}
	p := &InitialResponse{State: r.OptItem()}
	return done(p, &r)
}

// AppendTerminalRequest appends a TerminalRequest.
func AppendTerminalRequest(dst []byte, q *TerminalRequest) []byte {
	dst = AppendString(dst, q.Source)
	return appendError(dst, &q.Error)
}

// DecodeTerminalRequest decodes a TerminalRequest.
func DecodeTerminalRequest(b []byte) (*TerminalRequest, error) {
	r := Reader{s: string(b)}
	q := &TerminalRequest{Source: r.String()}
	q.Error.Tag = r.String()
	q.Error.Message = r.String()
	return done(q, &r)
}

// AppendTerminalResponse appends a TerminalResponse.
func AppendTerminalResponse(dst []byte, p *TerminalResponse) []byte {
	return AppendBool(dst, p.Accept)
}

// DecodeTerminalResponse decodes a TerminalResponse.
func DecodeTerminalResponse(b []byte) (*TerminalResponse, error) {
	r := Reader{s: string(b)}
	p := &TerminalResponse{Accept: r.Bool()}
	return done(p, &r)
}

// AppendToItemRequest appends a ToItemRequest.
func AppendToItemRequest(dst []byte, q *ToItemRequest) []byte {
	dst = AppendOptItem(dst, q.State)
	dst = AppendString(dst, q.StreamID)
	return AppendOptItem(dst, q.Key)
}

// DecodeToItemRequest decodes a ToItemRequest.
func DecodeToItemRequest(b []byte) (*ToItemRequest, error) {
	r := Reader{s: string(b)}
	q := &ToItemRequest{State: r.OptItem(), StreamID: r.String(), Key: r.OptItem()}
	return done(q, &r)
}

// AppendToItemResponse appends a ToItemResponse.
func AppendToItemResponse(dst []byte, p *ToItemResponse) []byte {
	return AppendOptItem(dst, p.Item)
}

// DecodeToItemResponse decodes a ToItemResponse.
func DecodeToItemResponse(b []byte) (*ToItemResponse, error) {
	r := Reader{s: string(b)}
	p := &ToItemResponse{Item: r.OptItem()}
	return done(p, &r)
}

// AppendEffectsRequest appends an EffectsRequest.
func AppendEffectsRequest(dst []byte, q *EffectsRequest) []byte {
	dst = AppendString(dst, q.Source)
	dst = AppendString(dst, q.StreamID)
	dst = AppendOptItem(dst, q.Key)
	dst = AppendEvent(dst, &q.Event)
	return AppendOptItem(dst, q.Next)
}

// DecodeEffectsRequest decodes an EffectsRequest.
func DecodeEffectsRequest(b []byte) (*EffectsRequest, error) {
	r := Reader{s: string(b)}
	q := &EffectsRequest{Source: r.String(), StreamID: r.String(), Key: r.OptItem()}
	r.ReadEvent(&q.Event)
	q.Next = r.OptItem()
	return done(q, &r)
}

// AppendEffectsResponse appends an EffectsResponse.
func AppendEffectsResponse(dst []byte, p *EffectsResponse) []byte {
	dst = AppendUvarint(dst, uint64(len(p.Effects)))
	for i := range p.Effects {
		dst = AppendValue(dst, p.Effects[i])
	}
	return dst
}

// DecodeEffectsResponse decodes an EffectsResponse.
func DecodeEffectsResponse(b []byte) (*EffectsResponse, error) {
	r := Reader{s: string(b)}
	p := &EffectsResponse{}
	if n := r.Count(1); n > 0 {
		p.Effects = make([]Value, n)
		for i := range p.Effects {
			p.Effects[i] = r.Value()
		}
	}
	return done(p, &r)
}

// AppendSelfTestResponse appends a SelfTestResponse.
func AppendSelfTestResponse(dst []byte, p *SelfTestResponse) []byte {
	return appendStrings(dst, p.Failures)
}

// DecodeSelfTestResponse decodes a SelfTestResponse.
func DecodeSelfTestResponse(b []byte) (*SelfTestResponse, error) {
	r := Reader{s: string(b)}
	p := &SelfTestResponse{Failures: r.strings()}
	return done(p, &r)
}
