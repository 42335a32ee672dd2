package host

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/store"
	"github.com/dynafold/dynafold/internal/keys"
)

// ErrDryRun is matched by a write other than a row's put attempted through
// a dry run (a shadow or a what-if): such runs write nothing.
var ErrDryRun = errors.New("dry run: nothing is written")

// dryStore is the store of an engine that must not write: reads go to
// DynamoDB, puts are kept in memory (and read back), every other write is
// refused. With hide set, the items of that table read as absent unless
// put here: an engine over it folds each row from the stream's first event.
type dryStore struct {
	store.DB
	hide  string   // table whose stored items read as absent ("" none)
	attrs []string // the key attributes of the tables put to
	mu    sync.Mutex
	puts  map[string]abi.Item // table + "\x00" + key → item
}

func newDryStore(db store.DB, keyAttrs []string, hide string) *dryStore {
	return &dryStore{DB: db, hide: hide, attrs: keyAttrs, puts: map[string]abi.Item{}}
}

func (s *dryStore) id(table string, it abi.Item) string {
	k := make(abi.Item, len(s.attrs))
	for _, a := range s.attrs {
		if v, ok := it[a]; ok {
			k[a] = v
		}
	}
	return table + "\x00" + keys.String(k)
}

func (s *dryStore) kept(table string, key abi.Item) (abi.Item, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.puts[s.id(table, key)]
	return abi.CloneItem(it), ok
}

// GetItem implements store.DB.
func (s *dryStore) GetItem(ctx context.Context, table string, key abi.Item) (abi.Item, error) {
	if it, ok := s.kept(table, key); ok {
		return it, nil
	}
	if table == s.hide {
		return nil, nil
	}
	return s.DB.GetItem(ctx, table, key)
}

// BatchGetItem implements store.DB.
func (s *dryStore) BatchGetItem(ctx context.Context, table string, ks []abi.Item) ([]abi.Item, error) {
	out := make([]abi.Item, len(ks))
	var missing []abi.Item
	var at []int
	for i, k := range ks {
		if it, ok := s.kept(table, k); ok {
			out[i] = it
		} else if table != s.hide {
			missing, at = append(missing, k), append(at, i)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	got, err := s.DB.BatchGetItem(ctx, table, missing)
	if err != nil {
		return nil, err
	}
	for j, i := range at {
		out[i] = got[j]
	}
	return out, nil
}

// PutItem keeps the item; its condition is not evaluated (nothing else
// writes the dry run's items).
func (s *dryStore) PutItem(_ context.Context, p store.Put) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts[s.id(p.Table, p.Item)] = abi.CloneItem(p.Item)
	return nil
}

// UpdateItem implements store.DB by refusing.
func (s *dryStore) UpdateItem(context.Context, store.Update) (abi.Item, error) {
	return nil, fmt.Errorf("UpdateItem: %w", ErrDryRun)
}

// DeleteItem implements store.DB by refusing.
func (s *dryStore) DeleteItem(context.Context, store.Delete) error {
	return fmt.Errorf("DeleteItem: %w", ErrDryRun)
}

// TransactWriteItems implements store.DB by refusing.
func (s *dryStore) TransactWriteItems(context.Context, []store.Write) error {
	return fmt.Errorf("TransactWriteItems: %w", ErrDryRun)
}
