package apply

// rowInstance is one source instance's events of a row, in arrival order.
type rowInstance struct {
	id  instanceID
	ins []Input
}

// rowInstances are a row's source instances with their events, in the
// order they first came. Most rows have one instance: it and its first
// event are kept in the value itself (first, firstIn), so a row costs no
// allocation for them where a map cost a group of slots per row. Past
// indexAt instances, an index finds them. A rowInstances is not copied
// once used (its list may point into it).
type rowInstances struct {
	list    []rowInstance
	index   map[instanceID]int
	first   [1]rowInstance
	firstIn [1]Input
}

// indexAt is the number of instances past which rowInstances keeps an
// index: below it, a linear search is cheaper than a map.
const indexAt = 8

// find returns the position of instance id in the list, or -1.
func (s *rowInstances) find(id instanceID) int {
	if s.index != nil {
		if i, ok := s.index[id]; ok {
			return i
		}
		return -1
	}
	for i := range s.list {
		if s.list[i].id == id {
			return i
		}
	}
	return -1
}

// add appends in to the events of instance id. room, when id is new, is
// how many events it is likely to get (at least 1): its slice is made that
// large.
func (s *rowInstances) add(id instanceID, in Input, room func() int) {
	if i := s.find(id); i >= 0 {
		s.list[i].ins = append(s.list[i].ins, in)
		return
	}
	n := room()
	if len(s.list) == 0 && n <= 1 {
		s.firstIn[0] = in
		s.set(id, s.firstIn[:1:1])
		return
	}
	s.set(id, append(make([]Input, 0, max(n, 1)), in))
}

// set makes ins the events of instance id.
func (s *rowInstances) set(id instanceID, ins []Input) {
	if i := s.find(id); i >= 0 {
		s.list[i].ins = ins
		return
	}
	if s.list == nil {
		s.list = s.first[:0]
	}
	s.list = append(s.list, rowInstance{id: id, ins: ins})
	switch {
	case s.index != nil:
		s.index[id] = len(s.list) - 1
	case len(s.list) > indexAt:
		s.index = make(map[instanceID]int, 2*len(s.list))
		for i, ri := range s.list {
			s.index[ri.id] = i
		}
	}
}

// of returns the events of instance id (nil when it has none).
func (s *rowInstances) of(id instanceID) []Input {
	if i := s.find(id); i >= 0 {
		return s.list[i].ins
	}
	return nil
}

// reset empties s.
func (s *rowInstances) reset() { *s = rowInstances{} }
