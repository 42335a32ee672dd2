package apply

import "fmt"

// Scalar maps the checkpoint of one instance of a source onto a numeric
// field of the row: the stored value is version + Offset. InstanceField,
// when set, names a string attribute recording the stream id of the
// instance that owns Field; an empty or absent one is adopted by the
// first instance of the source that writes the row.
type Scalar struct {
	Field         string
	Offset        int64
	InstanceField string
}

// scalars returns each source's scalar checkpoint, by declaration index
// (a zero Scalar: the source keeps its instances in the map). The
// Checkpoint's own Field is the first source's.
func (p *Projection) scalars() []Scalar {
	out := make([]Scalar, len(p.Sources))
	for i, s := range p.Sources {
		if sc, ok := p.Checkpoint.Sources[s.Name]; ok {
			out[i] = sc
		}
	}
	if cp := p.Checkpoint; cp.Field != "" && len(out) > 0 {
		out[0] = Scalar{Field: cp.Field, Offset: cp.Offset, InstanceField: cp.InstanceField}
	}
	return out
}

// validateScalars reports per-source checkpoint fields that cannot work.
func (p *Projection) validateScalars(bad func(string, ...any) error) error {
	names := map[string]bool{}
	var declared []string
	for _, s := range p.Sources {
		names[s.Name] = true
		declared = append(declared, s.Name)
	}
	for name, sc := range p.Checkpoint.Sources {
		switch {
		case !names[name]:
			return bad("checkpoint sources: %q is not a source of the projection; its sources are %v", name, declared)
		case p.Revision == nil:
			return bad("checkpoint fields per source need a revision field: the revision guards the write of a row that several stream instances feed")
		case sc.Field == "":
			return bad("checkpoint of source %q: no field; name the numeric field that holds the last applied version", name)
		case sc.InstanceField == "" && p.Checkpoint.Map != "":
			return bad("checkpoint of source %q: with a checkpoint map, a row must record which stream instance the field %q follows: name the instance field (a string attribute)", name, sc.Field)
		case sc.InstanceField == "":
			return bad("[EDD-9081] %s: name checkpoint.sources.%s.instanceField (a string attribute recording which instance owns the field), and checkpoint.map to give every other instance a checkpoint of its own", cannotTell(sc.Field, name), name)
		case len(p.Sources) > 0 && name == p.Sources[0].Name && p.Checkpoint.Field != "":
			return bad("the checkpoint field %q already follows the first source %q: give its checkpoint either as the checkpoint field or under sources, not both", p.Checkpoint.Field, name)
		}
	}
	if len(p.Sources) > 1 && p.Checkpoint.Map == "" {
		for i, sc := range p.scalars() {
			if sc.Field == "" {
				return bad("a multi-source projection keeps a checkpoint per source instance: name the checkpoint map (source %q has no checkpoint field of its own)", p.Sources[i].Name)
			}
		}
		if cp := p.Checkpoint; cp.Field != "" && cp.InstanceField == "" {
			return bad("[EDD-9081] %s: name checkpoint.instanceField (a string attribute recording which instance owns the field), and checkpoint.map to give every other instance a checkpoint of its own", cannotTell(cp.Field, p.Sources[0].Name))
		}
	}
	return nil
}

// cannotTell says why a checkpoint field of a multi-source projection
// without an instance field and without a map cannot work.
func cannotTell(field, source string) string {
	return fmt.Sprintf("the checkpoint field %q of source %q cannot tell its stream instances apart: without an instance field the row does not record which instance the field follows, and without a map there is no other place, so a second instance's events would be compared with the first one's checkpoint and reported already applied", field, source)
}

// scalarAttrs lists the attributes of the per-source checkpoint fields
// (the first source's Field is listed by the caller), for the
// one-attribute-one-purpose check.
func (p *Projection) scalarAttrs() []struct{ what, name string } {
	var out []struct{ what, name string }
	for _, s := range p.Sources {
		sc, ok := p.Checkpoint.Sources[s.Name]
		if !ok {
			continue
		}
		out = append(out,
			struct{ what, name string }{fmt.Sprintf("checkpoint field of source %q", s.Name), sc.Field},
			struct{ what, name string }{fmt.Sprintf("instance field of source %q", s.Name), sc.InstanceField})
	}
	return out
}
